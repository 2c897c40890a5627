"""The Client interface the steps use, implemented for DB-API drivers.

A client says which protocols it speaks (`text`, and `binary` for server-side prepared
statements), and gives the steps connections (handles), statements, its own transaction,
bulk and metadata APIs, and the MySQL code and SQLSTATE of an error it raised."""

import os


class Env:
    """The server a run is pointed at (clients/SCENARIO.md, "Environment")."""

    def __init__(self):
        self.host = os.environ.get("LAKESQL_HOST", "127.0.0.1")
        self.port = int(os.environ["LAKESQL_PORT"])
        self.user = os.environ.get("LAKESQL_USER", "root")
        self.password = os.environ.get("LAKESQL_PASSWORD", "")
        self.database = os.environ.get("LAKESQL_DATABASE", "lakesql")


def insert_sql(table, cols, mark="%s"):
    return (f"INSERT INTO {table} ({', '.join(f'`{c}`' for c in cols)}) "
            f"VALUES ({', '.join([mark] * len(cols))})")


def norm(v):
    """A value as the steps compare it: bytearray as bytes."""
    return bytes(v) if isinstance(v, bytearray) else v


# Column flags of the MySQL protocol (Protocol::ColumnDefinition41).
NOT_NULL_FLAG = 1
PRI_KEY_FLAG = 2
UNSIGNED_FLAG = 32


class DbapiClient:
    """A PEP 249 driver with autocommit off by default, as PyMySQL, mysqlclient and
    mysql-connector-python ship. Subclasses connect and read errors and column flags."""

    protocols = ("text",)
    prepares = False
    has_raw_text = True
    txn_api = "autocommit off (the driver's default), conn.commit()/conn.rollback():"
    autocommit_api = "conn.autocommit(True)"
    bulk_api = "cursor.executemany"
    metadata_api = "information_schema.COLUMNS"
    pk_api = "SHOW INDEX"

    def __init__(self, env):
        self.env = env
        self._raw = None

    # Connections.
    def connect(self, autocommit=None, password=None):
        """A new connection; autocommit None leaves the driver's default."""
        raise NotImplementedError

    def set_autocommit(self, conn, on):
        conn.autocommit(on)

    def wrong_password(self):
        """(code, sqlstate, message) of connecting with a wrong password."""
        try:
            conn = self.connect(autocommit=True, password=self.env.password + "-wrong")
        except Exception as e:
            got = self.error(e, None)
            if got is None:
                raise
            return got
        conn.close()
        return (None, None, "connected")

    def error(self, e, h):
        """(code, sqlstate, message) of a driver error, None for anything else."""
        raise NotImplementedError

    # Statements.
    def cursor(self, h, binary):
        return h.cursor()

    def execute(self, h, sql, params=(), binary=False):
        cur = self.cursor(h, binary)
        try:
            cur.execute(sql, tuple(params)) if params or binary else cur.execute(sql)
            drain(cur)
        finally:
            cur.close()

    def query(self, h, sql, params=(), binary=False):
        cur = self.cursor(h, binary)
        try:
            cur.execute(sql, tuple(params)) if params or binary else cur.execute(sql)
            return [tuple(norm(v) for v in row) for row in cur.fetchall()]
        finally:
            cur.close()

    def query_raw_text(self, h, sql, params):
        """Rows as the text protocol carried them, each value the text (str) or None."""
        raise NotImplementedError

    def insert(self, h, table, cols, rows, binary=False):
        for row in rows:
            self.execute(h, insert_sql(table, cols), row, binary)

    def extra_refusals(self, h):
        """Client-specific step 3 refusals: [(label, ids, fn)], fn must fail with 1264."""
        return []

    # The client's own APIs.
    def transaction(self, table, cols, rows, commit):
        conn = self.connect()
        try:
            for row in rows:
                self.execute(conn, insert_sql(table, cols), row)
            conn.commit() if commit else conn.rollback()
        finally:
            conn.close()

    def autocommit_insert(self, table, cols, row):
        conn = self.connect()
        try:
            self.set_autocommit(conn, True)
            self.execute(conn, insert_sql(table, cols), row)
        finally:
            conn.close()

    def bulk(self, table, cols, rows):
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.executemany(insert_sql(table, cols), rows)
            cur.close()
            conn.commit()
        finally:
            conn.close()

    def concurrent_inserts(self, table, cols, rows):
        conn = self.connect(autocommit=True)
        try:
            for row in rows:
                self.execute(conn, insert_sql(table, cols), row)
        finally:
            conn.close()

    # Metadata.
    def column_type_spelling(self, mysql_type):
        return mysql_type

    def metadata(self, h):
        cols = self.query(h, "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY "
                             "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                             "ORDER BY ORDINAL_POSITION", (self.env.database, "types"))
        cols = [tuple(_text(v) for v in r) for r in cols]
        idx = self.query(h, "SHOW INDEX FROM types")
        pk = [_text(r[4]) for r in sorted((r for r in idx if _text(r[2]) == "PRIMARY"), key=lambda r: int(r[3]))]
        out = {"columns": [(n, t, nullable == "YES", key) for n, t, nullable, key in cols], "pk": pk,
               "column_key": {n: key for n, _, _, key in cols}}
        fields = self.result_fields(h, "SELECT id, b, u8, u32, dt, ts FROM types WHERE id = 10")
        if fields is not None:
            out["result_flags"] = result_flag_checks(fields)
        return out

    def result_fields(self, h, sql):
        """[(name, flags, length, decimals)] of a result's columns (None for what the driver
        hides), or None when it hides them all."""
        return None


def drain(cur):
    """Reads every result a statement sent (CALL sends one more), so the next can run."""
    while True:
        if cur.description is not None:
            cur.fetchall()
        try:
            more = cur.nextset()
        except Exception:
            more = False
        if not more:
            return


def _text(v):
    return bytes(v).decode("utf-8") if isinstance(v, (bytes, bytearray)) else v


def result_flag_checks(fields):
    """Checks of the column definitions of a result of id, b, u8, u32, dt, ts (issue 14
    items 2 and 12): (label, ok, message)."""
    f = {name: (flags, length, decimals) for name, flags, length, decimals in fields}
    out = []

    def flag(name, bit, what):
        flags = f.get(name, (0, None, None))[0]
        out.append((f"{name} carries {what}", bool(flags & bit), f"expected the {what} flag, got flags {flags:#x}"))

    flag("id", NOT_NULL_FLAG, "NOT_NULL")
    flag("id", PRI_KEY_FLAG, "PRI_KEY")
    flag("u8", UNSIGNED_FLAG, "UNSIGNED")
    flag("u32", UNSIGNED_FLAG, "UNSIGNED")
    length = f.get("b", (0, None, None))[1]
    if length is not None:
        out.append(("b (BOOLEAN) is 1 wide", length == 1, f"expected length 1, got {length}"))
    for name, typ in (("dt", "DATETIME(6)"), ("ts", "TIMESTAMP(6)")):
        decimals = f.get(name, (0, None, None))[2]
        if decimals is not None:
            out.append((f"{name} ({typ}) has 6 decimals", decimals == 6, f"expected 6, got {decimals}"))
    return out
