"""SQLAlchemy 2.x (on PyMySQL) and pandas (read_sql/to_sql through SQLAlchemy on
mysqlclient, the driver of a plain `mysql://` URL) as Clients (client.py)."""

import datetime as dt
import re
from urllib.parse import quote_plus

from . import drivers
from .client import DbapiClient, insert_sql

# How SQLAlchemy's MySQL dialect spells each reflected type (compiled for MySQL).
SQLA_SPELLING = {
    "bigint": "BIGINT", "tinyint(1)": "TINYINT(1)", "tinyint": "TINYINT",
    "tinyint unsigned": "TINYINT UNSIGNED", "smallint": "SMALLINT", "int": "INTEGER",
    "int unsigned": "INTEGER UNSIGNED", "float": "FLOAT", "double": "DOUBLE",
    "decimal(20,6)": "DECIMAL(20, 6)", "varchar(64)": "VARCHAR(64)", "text": "TEXT", "json": "JSON",
    "varbinary(64)": "VARBINARY(64)", "date": "DATE", "datetime(6)": "DATETIME(6)",
    "timestamp(6)": "TIMESTAMP(6)",
}


def named(sql, params):
    """sql with each %s made a :pN bind, and the params as a dict."""
    n = iter(range(len(params)))
    return re.sub(r"%s", lambda _: f":p{next(n)}", sql), {f"p{i}": v for i, v in enumerate(params)}


class SQLAlchemy(DbapiClient):
    """SQLAlchemy Core: text() statements, engine.begin(), Core insert() executemany,
    inspect()."""

    driver = "pymysql"
    has_raw_text = False
    txn_api = "engine.begin() / conn.begin() + rollback():"
    autocommit_api = "isolation_level='AUTOCOMMIT' connection"
    bulk_api = "conn.execute(insert(table), rows) (executemany)"
    metadata_api = "inspect().get_columns"
    pk_api = "inspect().get_pk_constraint"

    def __init__(self, env):
        super().__init__(env)
        import pymysql
        import sqlalchemy
        self.m = pymysql
        self.sa = sqlalchemy
        self.engine = self.make_engine(env.password)

    def connect_args(self):
        return {}

    def make_engine(self, password):
        e = self.env
        url = f"mysql+{self.driver}://{quote_plus(e.user)}:{quote_plus(password)}@{e.host}:{e.port}/{e.database}"
        return self.sa.create_engine(url, pool_size=20, max_overflow=0, connect_args=self.connect_args())

    def driver_error(self, e):
        return drivers.PyMySQL.error(self, e, None)

    def connect(self, autocommit=None, password=None):
        engine = self.engine if password is None else self.make_engine(password)
        conn = engine.connect()
        return conn.execution_options(isolation_level="AUTOCOMMIT") if autocommit else conn

    def error(self, e, h):
        seen = set()
        while e is not None and id(e) not in seen:
            seen.add(id(e))
            if isinstance(e, self.sa.exc.DBAPIError) and e.orig is not None:
                return self.driver_error(e.orig)
            e = e.__cause__ or e.__context__
        return None

    def execute(self, h, sql, params=(), binary=False):
        if params:
            h.execute(self.sa.text(named(sql, params)[0]), named(sql, params)[1])
        else:
            h.exec_driver_sql(sql)

    def query(self, h, sql, params=(), binary=False):
        if params:
            res = h.execute(self.sa.text(named(sql, params)[0]), named(sql, params)[1])
        else:
            res = h.exec_driver_sql(sql)
        return [tuple(bytes(v) if isinstance(v, bytearray) else v for v in row) for row in res.fetchall()]

    def transaction(self, table, cols, rows, commit):
        sql, _ = named(insert_sql(table, cols), cols)
        binds = [dict(zip((f"p{i}" for i in range(len(cols))), r)) for r in rows]
        if commit:
            with self.engine.begin() as conn:
                for b in binds:
                    conn.execute(self.sa.text(sql), b)
            return
        with self.engine.connect() as conn:
            trans = conn.begin()
            for b in binds:
                conn.execute(self.sa.text(sql), b)
            trans.rollback()

    def autocommit_insert(self, table, cols, row):
        with self.connect(autocommit=True) as conn:
            self.execute(conn, insert_sql(table, cols), row)

    def core_table(self, table, cols):
        sa = self.sa
        types = {"id": sa.BigInteger, "v": sa.String(32), "x": sa.Float, "conn": sa.Integer}
        return sa.Table(table, sa.MetaData(), *(sa.Column(c, types[c]) for c in cols))

    def bulk(self, table, cols, rows):
        t = self.core_table(table, cols)
        with self.engine.begin() as conn:
            conn.execute(self.sa.insert(t), [dict(zip(cols, r)) for r in rows])

    def concurrent_inserts(self, table, cols, rows):
        t = self.core_table(table, cols)
        with self.connect(autocommit=True) as conn:
            for r in rows:
                conn.execute(self.sa.insert(t).values(dict(zip(cols, r))))

    def column_type_spelling(self, mysql_type):
        return SQLA_SPELLING[mysql_type]

    def metadata(self, h):
        insp = self.sa.inspect(self.engine)
        cols = [(c["name"], c["type"].compile(dialect=self.engine.dialect), c["nullable"], None)
                for c in insp.get_columns("types")]
        pk = insp.get_pk_constraint("types")["constrained_columns"]
        return {"columns": cols, "pk": list(pk)}


class Pandas(SQLAlchemy):
    """pandas: read_sql for every read, DataFrame.to_sql for every write, over SQLAlchemy
    on mysqlclient; transactions are SQLAlchemy's, which pandas joins when given a connection."""

    driver = "mysqldb"
    txn_api = "to_sql inside engine.begin() / conn.begin() + rollback():"
    autocommit_api = "to_sql on an isolation_level='AUTOCOMMIT' connection,"
    bulk_api = "to_sql(chunksize=10000)"
    metadata_api = "read_sql of information_schema.COLUMNS"
    pk_api = "read_sql of SHOW INDEX"

    def __init__(self, env):
        import MySQLdb
        import pandas
        self.pd = pandas
        self.mysqldb = MySQLdb
        super().__init__(env)

    def connect_args(self):
        return {"cursorclass": drivers.sqlstate_cursor(self.mysqldb)}

    def driver_error(self, e):
        return drivers.mysqldb_error(self.mysqldb, e)

    def wrong_password(self):
        code, state, msg = DbapiClient.wrong_password(self)
        if code is not None and state is None:
            state = drivers.libmariadb_connect_sqlstate(self.env, self.env.password + "-wrong")
        return (code, state, msg)

    def query(self, h, sql, params=(), binary=False):
        # coerce_float=False keeps DECIMAL values exact (pandas' default turns them into floats).
        if params:
            sql, binds = named(sql, params)
            df = self.pd.read_sql(self.sa.text(sql), h, params=binds, coerce_float=False)
        else:
            df = self.pd.read_sql(self.sa.text(sql), h, coerce_float=False)
        return [tuple(self.scalar(v) for v in row) for row in df.itertuples(index=False, name=None)]

    def scalar(self, v):
        pd = self.pd
        if isinstance(v, pd.Timestamp):
            return v.to_pydatetime()
        if v is None or (not isinstance(v, (str, bytes, list, dict)) and pd.isna(v)):
            return None
        if hasattr(v, "item") and not isinstance(v, (bytes, str)):
            return v.item()
        if isinstance(v, bytearray):
            return bytes(v)
        return v

    def extra_refusals(self, h):
        # A BIGINT column with a NULL is float64 in pandas, so to_sql sends 2^63-1 as the
        # DOUBLE 9223372036854775808.0 (2^63), which no BIGINT holds.
        df = self.pd.DataFrame({"id": [98, 99], "i64": [9223372036854775807, None]})
        return [("to_sql of a nullable int column [2^63-1, None] (sent as the DOUBLE 2^63)", [98, 99],
                 lambda: df.to_sql("types", h, if_exists="append", index=False))]

    def frame(self, cols, rows):
        return self.pd.DataFrame([list(r) for r in rows], columns=cols, dtype=object)

    def insert(self, h, table, cols, rows, binary=False):
        self.frame(cols, rows).to_sql(table, h, if_exists="append", index=False)

    def transaction(self, table, cols, rows, commit):
        df = self.frame(cols, rows)
        if commit:
            with self.engine.begin() as conn:
                df.to_sql(table, conn, if_exists="append", index=False)
            return
        with self.engine.connect() as conn:
            trans = conn.begin()
            df.to_sql(table, conn, if_exists="append", index=False)
            trans.rollback()

    def autocommit_insert(self, table, cols, row):
        with self.connect(autocommit=True) as conn:
            self.insert(conn, table, cols, [row])

    def bulk(self, table, cols, rows):
        df = self.pd.DataFrame(rows, columns=cols)
        with self.engine.begin() as conn:
            df.to_sql(table, conn, if_exists="append", index=False, chunksize=10_000)

    def concurrent_inserts(self, table, cols, rows):
        with self.connect(autocommit=True) as conn:
            for r in rows:
                self.insert(conn, table, cols, [r])

    def column_type_spelling(self, mysql_type):
        return mysql_type

    def metadata(self, h):
        return DbapiClient.metadata(self, h)

    def result_fields(self, h, sql):
        return None
