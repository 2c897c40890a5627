"""Section 2 for Iceberg: tables pyiceberg and Spark write, attached, read and written by lakesql.

pyiceberg's SqlCatalog and Spark's JDBC catalog write into lakesql's own
SQLite catalog (DATA/iceberg/catalog.db); pyiceberg also into a catalog file
of its own that a sink names with catalog.* options. Both name their catalog
"lakesql": iceberg-go's SQL catalog keys its rows by catalog_name, and
lakesql's is lakesql (tableformat/iceberg.DefaultCatalogName).

For each table: lakesql attaches it, and its SELECT must return what the
writing engine reads, row for row and type for type (information_schema's
COLUMN_TYPE against the README's natural type of each Iceberg type). Then
lakesql appends or upserts; its SELECT must equal the rows computed here,
and the engine must read lakesql's rows with its schema (field ids) unchanged.
"""
import datetime
import decimal
import importlib.util
import os
import uuid

from .. import compare, paths
from ..server import Server, error_code

CATALOG_NAME = "lakesql"
UTC = datetime.timezone.utc
D = decimal.Decimal
# pyiceberg 0.12 reads no equality deletes: a table it reads after lakesql's upserts asks for
# copy-on-write merges, and lakesql rewrites files instead (README "### Sinks").
COW = {"write.merge.mode": "copy-on-write"}


def ts(*a):
    return datetime.datetime(*a, tzinfo=UTC)


def run(ledger):
    from pyiceberg.catalog.sql import SqlCatalog
    d = paths.workdir("theirs_iceberg")
    data = os.path.join(d, "data")
    own = os.path.join(data, "iceberg")
    os.makedirs(os.path.join(own, "warehouse"))
    cat = SqlCatalog(CATALOG_NAME, uri="sqlite:///" + os.path.join(own, "catalog.db"),
                     warehouse="file://" + os.path.join(own, "warehouse"))
    cat.create_namespace("py")
    # WAL, as lakesql's own catalog has it: Spark's JDBC catalog keeps connections open, and
    # lakesql, opening the file later, cannot switch a file in use to WAL (SQLITE_BUSY).
    import sqlite3
    with sqlite3.connect(os.path.join(own, "catalog.db")) as c:
        c.execute("PRAGMA journal_mode=WAL")
    other_db = os.path.join(data, "other", "catalog.db")
    other_wh = "file://" + os.path.join(data, "other", "warehouse")
    os.makedirs(os.path.join(data, "other", "warehouse"))
    other = SqlCatalog(CATALOG_NAME, uri="sqlite:///" + other_db, warehouse=other_wh)
    other.create_namespace("ext")
    cases = py_cases(cat, other, "catalog.type = 'sql', catalog.uri = '%s', catalog.warehouse = '%s'" % (other_db, other_wh))
    with ledger.guard("(spark tables)", "spark"):
        cases += spark_cases(data)
    with Server(d) as srv:
        for c in cases:
            c.run(ledger, srv)


# ---------------------------------------------------------------- types and values


def mysql_type(t):
    """The natural MySQL column type lakesql shows for an Iceberg (or Spark) type (README "Column types")."""
    s = str(t).replace(" ", "")
    if s.startswith(("struct", "list", "array", "map")):
        return "longtext"  # JSON text
    if s.startswith("decimal"):
        return s
    return {"boolean": "tinyint(1)", "int": "int", "long": "bigint", "bigint": "bigint", "float": "float",
            "double": "double", "string": "longtext", "binary": "longblob", "date": "date",
            "timestamp": "datetime(6)", "timestamptz": "timestamp(6)"}.get(s, s)


def spark_mysql_type(t):
    """mysql_type of a Spark simpleString type (Spark's timestamp is Iceberg's timestamptz)."""
    return {"timestamp": "timestamp(6)", "timestamp_ntz": "datetime(6)"}.get(t) or mysql_type(t)


def py_value(v, t=None):
    """A pyiceberg (Arrow) value of Iceberg type t in plain form: a UUID as its text, a map as a dict."""
    from pyiceberg import types as it
    if v is None:
        return None
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(t, it.MapType):
        items = v.items() if isinstance(v, dict) else v
        return {str(k): py_value(x, t.value_type) for k, x in items}
    if isinstance(t, it.ListType):
        return [py_value(x, t.element_type) for x in v]
    if isinstance(t, it.StructType):
        return {f.name: py_value(v.get(f.name), f.field_type) for f in t.fields}
    return v


def norm_type(t):
    """An Iceberg type in the harness's Spark spelling (list<...> is array<...>)."""
    s = compare.iceberg_type(t)
    return "array" + s[4:] if s.startswith("list<") else s


def naive(values):
    """Values as SQL parameters: aware datetimes as naive UTC (lakesql takes TIMESTAMP text as UTC)."""
    return [v.astimezone(UTC).replace(tzinfo=None) if isinstance(v, datetime.datetime) and v.tzinfo else v
            for v in values]


def upserted(before, rows=(), deleted=()):
    """before with rows upserted by their first column and the keys in deleted removed."""
    out = {r[0]: tuple(r) for r in before}
    for r in rows:
        out[r[0]] = tuple(r)
    for k in deleted:
        out.pop(k, None)
    return list(out.values())


# ---------------------------------------------------------------- readers


class PyReader:
    """A table read by pyiceberg: read() gives (columns, MySQL types, types, rows, schema as field ids, names, types)."""
    engine = "pyiceberg"

    def __init__(self, tbl):
        self.tbl = tbl

    def read(self, where=None):
        """where: a pyiceberg row filter (string), which prunes files by partition values and stats."""
        self.tbl = self.tbl.refresh()
        fields = self.tbl.schema().fields
        at = (self.tbl.scan(row_filter=where) if where else self.tbl.scan()).to_arrow()
        rows = [tuple(py_value(r[f.name], f.field_type) for f in fields) for r in at.to_pylist()]
        return ([f.name for f in fields], {f.name: mysql_type(f.field_type) for f in fields},
                [norm_type(f.field_type) for f in fields], rows,
                [(f.field_id, f.name, str(f.field_type), f.required) for f in fields])


def fresh_catalog():
    """Drops the catalogs Spark built: a JdbcCatalog's SQLite connection keeps reading the
    snapshot of the file it began with, older than lakesql's commits."""
    from .. import spark
    spark.session()._jsparkSession.sessionState().catalogManager().reset()


class SparkReader:
    """A table read by Spark through the JDBC catalog, as PyReader."""
    engine = "spark"

    def __init__(self, name):
        self.name = name

    def read(self, where=None):
        """where: a Spark SQL condition, which prunes files by partition values and stats."""
        from .. import spark
        fresh_catalog()
        df = spark.session().table(self.name)
        if where:
            df = df.where(where)
        fields = df.schema.fields
        types = [f.dataType.simpleString() for f in fields]
        rows = [tuple(x) for x in df.collect()]
        return ([f.name for f in fields], {f.name: spark_mysql_type(t) for f, t in zip(fields, types)}, types, rows,
                [(f.name, t, f.nullable) for f, t in zip(fields, types)])


# ---------------------------------------------------------------- one table


class Case:
    """One table: attach (cols/opts), compare, write (stmts), compare with expect(before), read back.

    refuse names the feature when lakesql must refuse to attach (1235).
    """

    def __init__(self, name, ident, reader, cols="", opts="", stmts=(), expect=None, refuse=None, what="written",
                 filters=(), post=None):
        self.name, self.ident, self.reader = name, ident, reader
        # (engine condition, predicate on a row): after lakesql's writes the engine's filtered
        # read, pruned by the partition values lakesql wrote, must give the rows the predicate keeps.
        self.filters = list(filters)
        self.post = post  # after lakesql's writes: () -> (ok, detail), a check of what lakesql wrote
        self.cols, self.opts, self.stmts, self.expect, self.refuse = cols, opts, list(stmts), expect, refuse
        self.what = what

    def run(self, ledger, srv):
        err = attach(srv, self.name, self.ident, self.cols, self.opts)
        if self.refuse is not None:
            refusal(ledger, self.name, err, self.refuse)
            return
        name, eng = self.name, self.reader.engine
        with ledger.guard(name, "lakesql"):
            if err is not None:
                raise err
            cols, want_types, types, before, schema_before = self.reader.read()
            if not self.check_types(ledger, srv, name, want_types):
                return
            if not ledger.rows(name, "lakesql", before, select(srv, name, cols), types):
                return
        if not self.stmts:
            return
        after = "after " + self.what
        ours = None
        with ledger.guard(name, "lakesql"):
            for sql, args in self.stmts:
                srv.exec(sql, args)
            ours = select(srv, name, cols)
            if not ledger.rows(name, "lakesql", self.expect(before), ours, types, what="rows " + after):
                ours = None
        if ours is None:
            return
        with ledger.guard(name, eng):
            _, _, types2, theirs, schema_after = self.reader.read()
            if schema_after != schema_before:
                ledger.wrong(name, eng, "%s: schema changed: %s -> %s" % (after, schema_before, schema_after))
                return
            if not ledger.rows(name, eng, ours, theirs, types2, what="rows " + after):
                return
        if self.post is not None:
            with ledger.guard(name, eng):
                ok, detail = self.post()
                ledger.check(name, eng, ok, after + ": " + detail)
        if self.filters:
            # One read with the conditions or-ed: pruning by partition values still applies.
            with ledger.guard(name, eng):
                cond = " or ".join("(%s)" % c for c, _ in self.filters)
                want = [r for r in ours if any(p(r) for _, p in self.filters)]
                got = self.reader.read(cond)[3]
                ledger.rows(name, eng, want, got, types2, what="rows %s, filtered by %s" % (after, cond))

    @staticmethod
    def check_types(ledger, srv, name, want):
        _, rows = srv.query("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
                            "WHERE TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (name,))
        got = {r[0]: (r[1].decode() if isinstance(r[1], bytes) else r[1]) for r in rows}
        d = compare.diff_types(want, got)
        if d is not None:
            ledger.wrong(name, "lakesql", "types: " + d)
            return False
        return True


def attach(srv, sink, ident, cols="", opts=""):
    """CREATE SINK sink INTO ICEBERG ident [(cols)] [WITH (opts)]; returns the error or None."""
    sql = "CREATE SINK `%s` INTO ICEBERG '%s'" % (sink, ident)
    if cols:
        sql += " (" + cols + ")"
    if opts:
        sql += " WITH (" + opts + ")"
    try:
        srv.exec(sql)
        return None
    except Exception as e:  # noqa: BLE001 - the caller judges it
        return e


def select(srv, sink, cols):
    return srv.query("SELECT %s FROM `%s`" % (", ".join("`%s`" % c for c in cols), sink))[1]


def refusal(ledger, name, err, feature):
    """Records err as a refusal when it is 1235 naming the feature, else wrong."""
    if err is None:
        ledger.wrong(name, "lakesql", "attached; expected 1235 naming " + feature)
        return
    msg = str(err.args[1]) if len(err.args) > 1 else str(err)
    if error_code(err) == 1235 and feature.lower() in msg.lower():
        ledger.refused(name, "lakesql", feature)
    else:
        ledger.wrong(name, "lakesql", "expected 1235 naming %s, got %s: %s" % (feature, error_code(err), msg[:300]))


# ---------------------------------------------------------------- pyiceberg's tables


def py_cases(cat, other, other_opts):
    import pyarrow as pa
    from pyiceberg.expressions import EqualTo, GreaterThanOrEqual
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
    from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType,
                                 IntegerType, ListType, LongType, MapType, NestedField, StringType, StructType,
                                 TimestampType, TimestamptzType, TimeType, UUIDType)

    def make(c, ident, schema, rows, **kw):
        t = c.create_table(ident, schema=schema, **kw)
        if rows:
            t.append(pa.Table.from_pylist(rows, schema=t.schema().as_arrow()))
        return t

    cases = []
    # Every primitive lakesql maps, with extremes, NULLs and timestamps before 1970.
    s = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "b", BooleanType()),
        NestedField(3, "i", IntegerType()), NestedField(4, "l", LongType()), NestedField(5, "f", FloatType()),
        NestedField(6, "d", DoubleType()), NestedField(7, "dec_big", DecimalType(38, 18)),
        NestedField(8, "dec_small", DecimalType(9, 2)), NestedField(9, "dec_mid", DecimalType(18, 4)),
        NestedField(10, "s", StringType()), NestedField(11, "bin", BinaryType()), NestedField(12, "dt", DateType()),
        NestedField(13, "ts", TimestampType()), NestedField(14, "tstz", TimestamptzType()))
    rows = [
        dict(id=1, b=True, i=-2147483648, l=-9223372036854775808, f=1.5, d=-0.1,
             dec_big=D("12345678901234567890.123456789012345678"), dec_small=D("-1234567.89"),
             dec_mid=D("99999999999999.9999"), s="héllo ✓", bin=b"\x00\xff", dt=datetime.date(1, 1, 1),
             ts=datetime.datetime(1969, 12, 31, 23, 59, 59, 999999), tstz=ts(1900, 1, 1, 0, 0, 0, 1)),
        dict(id=2, b=False, i=2147483647, l=9223372036854775807, f=-3.4028234663852886e38, d=1e308,
             dec_big=D("-0.000000000000000001"), dec_small=D("0.01"), dec_mid=D("0"), s="", bin=b"",
             dt=datetime.date(9999, 12, 31), ts=datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
             tstz=ts(1969, 7, 20, 20, 17, 40)),
        dict(id=3),
        dict(id=4, b=True, i=0, l=0, f=0.1, d=2.5e-308, dec_big=D("99999999999999999999.999999999999999999"),
             dec_small=D("9999999.99"), dec_mid=D("-1.0001"), s="quote ' and \" and \\", bin=bytes(range(256)),
             dt=datetime.date(1970, 1, 1), ts=datetime.datetime(1970, 1, 1), tstz=ts(2024, 6, 15, 10, 20, 30, 123456)),
    ]
    make(cat, "py.prims", s, [dict({f.name: None for f in s.fields}, **r) for r in rows])
    new = [(10, True, 7, 8, 2.5, 3.25, D("1.000000000000000001"), D("12.34"), D("5.5"), "new", b"\x01\x02",
            datetime.date(1950, 5, 6), datetime.datetime(1960, 1, 1, 0, 0, 0, 500000), ts(1901, 2, 3, 4, 5, 6, 700000)),
           (11,) + (None,) * 8 + ("sparse",) + (None,) * 4]
    cases.append(Case("prims", "py.prims", PyReader(cat.load_table("py.prims")), what="append", stmts=[
        ("INSERT INTO prims VALUES (%s)" % ", ".join(["%s"] * 14), naive(new[0])),
        ("INSERT INTO prims (id, s) VALUES (11, 'sparse')", None)],
        expect=lambda before: before + new))

    # Nested: struct (with timestamptz and decimal inside), list, map, list of structs.
    s = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "st", StructType(NestedField(10, "a", IntegerType()), NestedField(11, "b", StringType()),
                                        NestedField(12, "when", TimestamptzType()),
                                        NestedField(13, "amt", DecimalType(38, 18)))),
        NestedField(3, "ls", ListType(20, LongType(), element_required=False)),
        NestedField(4, "mp", MapType(30, StringType(), 31, IntegerType(), value_required=False)),
        NestedField(5, "lst", ListType(40, StructType(NestedField(41, "x", DateType()),
                                                      NestedField(42, "y", BinaryType())), element_required=False)))
    t = make(cat, "py.nested", s, [
        dict(id=1, st=dict(a=1, b="x", when=ts(1969, 1, 1, 0, 0, 0, 5), amt=D("1.5")), ls=[1, None, -3],
             mp=[("k", 1), ("z", None)], lst=[dict(x=datetime.date(2024, 1, 2), y=b"\x01\x02"), None]),
        dict(id=2, st=None, ls=None, mp=None, lst=None),
        dict(id=3, st=dict(a=None, b=None, when=None, amt=None), ls=[], mp=[], lst=[])])
    new_n = (4, {"a": 7, "b": "q", "when": ts(1955, 3, 4, 5, 6, 7, 8), "amt": D("0.000000000000000001")},
             [9223372036854775807], {"m": -1}, [{"x": datetime.date(1, 1, 1), "y": b"\x00\x01"}])
    cases.append(Case("nested", "py.nested", PyReader(t), what="append", stmts=[
        ("INSERT INTO nested VALUES (4, %s, %s, %s, %s)",
         ('{"a": 7, "b": "q", "when": "1955-03-04 05:06:07.000008", "amt": 0.000000000000000001}',
          "[9223372036854775807]", '{"m": -1}', '[{"x": "0001-01-01", "y": "AAE="}]'))],
        expect=lambda before: before + [new_n]))

    # Partitioned. pyiceberg 0.12 writes transforms other than identity only with its
    # pyiceberg-core extra; without it the table is partitioned by identity alone (Spark's has
    # the transforms). Partition values with '/', '=', '%', quotes, unicode, '' and NULL.
    s = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "cat", StringType()),
               NestedField(3, "ts", TimestamptzType()), NestedField(4, "n", IntegerType()),
               NestedField(5, "s", StringType()))
    parts = [PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat")]
    if importlib.util.find_spec("pyiceberg_core") is not None:
        parts += [PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="ts_day"),
                  PartitionField(source_id=1, field_id=1002, transform=BucketTransform(4), name="id_bucket"),
                  PartitionField(source_id=5, field_id=1003, transform=TruncateTransform(3), name="s_trunc")]
    t = make(cat, "py.parted", s, [
        dict(id=1, cat="a b", ts=ts(2024, 1, 1, 1), n=1, s="apple"),
        dict(id=2, cat="x/y=z%", ts=ts(1969, 12, 31, 23, 59, 59), n=2, s="apricot"),
        dict(id=3, cat="ünï 'q'", ts=ts(1900, 6, 1), n=3, s="banana"),
        dict(id=4, cat="", ts=None, n=None, s=None),
        dict(id=5, cat=None, ts=ts(2024, 1, 1, 23), n=5, s="ap")],
        partition_spec=PartitionSpec(*parts), properties=COW)
    up = [(1, "a b", ts(2024, 1, 2), 10, "apple pie"), (6, "new", ts(1950, 1, 1, 12), 6, "zzz"), (2, None, None, 20, None)]
    cases.append(Case("parted", "py.parted", PyReader(t), what="upsert",
                      cols="id BIGINT NOT NULL, cat LONGTEXT, ts TIMESTAMP(6), n INT, s LONGTEXT, PRIMARY KEY (id)",
                      opts="mode = 'upsert'", stmts=[
                          ("INSERT INTO parted VALUES (%s, %s, %s, %s, %s), (%s, %s, %s, %s, %s), (%s, %s, %s, %s, %s)",
                           naive(v for r in up for v in r)),
                          ("DELETE FROM parted WHERE id = 3", None)],
                      expect=lambda before: upserted(before, up, [3]),
                      filters=[("cat = 'new'", lambda r: r[1] == "new"),
                               ("ts >= '1950-01-01T00:00:00+00:00' and ts < '1950-01-02T00:00:00+00:00'",
                                lambda r: r[2] is not None and ts(1950, 1, 1) <= r[2].replace(tzinfo=UTC) < ts(1950, 1, 2)),
                               ("id = 1", lambda r: r[0] == 1), ("s = 'zzz'", lambda r: r[4] == "zzz")]))

    # Schema evolved after data was written: a column added, one renamed, int widened to long.
    s = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "label", StringType()),
               NestedField(3, "n", IntegerType()))
    t = make(cat, "py.evolved", s, [dict(id=1, label="one", n=1), dict(id=2, label="two", n=-2147483648),
                                    dict(id=3, label=None, n=None)], properties=COW)
    with t.update_schema() as u:
        u.add_column("extra", DoubleType())
        u.rename_column("label", "name")
        u.update_column("n", LongType())
    t = t.refresh()
    t.append(pa.Table.from_pylist([dict(id=4, name="four", n=2**40, extra=0.5), dict(id=5, name="five", n=None, extra=None)],
                                  schema=t.schema().as_arrow()))
    up_e = [(1, "uno", 4294967296, 1.25), (6, "six", 6, None), (4, "cuatro", -1, 2.5)]
    cases.append(Case("evolved", "py.evolved", PyReader(t), what="upsert",
                      cols="id BIGINT NOT NULL, name LONGTEXT, n BIGINT, extra DOUBLE, PRIMARY KEY (id)",
                      opts="mode = 'upsert'", stmts=[
                          ("INSERT INTO evolved VALUES (1, 'uno', 4294967296, 1.25), (6, 'six', 6, NULL), (4, 'cuatro', -1, 2.5)", None),
                          ("DELETE FROM evolved WHERE id = 2", None)],
                      expect=lambda before: upserted(before, up_e, [2])))

    # Several snapshots with pyiceberg's deletes (0.12 rewrites files: it warns that merge-on-read
    # is not supported yet and falls back to copy-on-write).
    s = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "v", StringType()))
    t = make(cat, "py.deleted", s, [dict(id=i, v="a%d" % i) for i in range(1, 6)],
             properties={"format-version": "2", "write.delete.mode": "merge-on-read", **COW})
    t.append(pa.Table.from_pylist([dict(id=i, v="b%d" % i) for i in range(6, 11)], schema=t.schema().as_arrow()))
    t.delete(EqualTo("id", 3))
    t.delete(GreaterThanOrEqual("id", 8))
    t.append(pa.Table.from_pylist([dict(id=i, v="c%d" % i) for i in range(11, 13)], schema=t.schema().as_arrow()))
    up_d = [(1, "u1"), (3, "u3"), (12, "u12")]
    cases.append(Case("deleted", "py.deleted", PyReader(t), what="upsert",
                      cols="id BIGINT NOT NULL, v LONGTEXT, PRIMARY KEY (id)", opts="mode = 'upsert'", stmts=[
                          ("INSERT INTO deleted VALUES (1, 'u1'), (3, 'u3'), (12, 'u12')", None),
                          ("DELETE FROM deleted WHERE id IN (2, 11)", None)],
                      expect=lambda before: upserted(before, up_d, [2, 11])))

    # A catalog file of its own, named by the sink's catalog.* options.
    s = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "v", StringType()),
               NestedField(3, "at", TimestampType()))
    t = make(other, "ext.events", s, [dict(id=1, v="x", at=datetime.datetime(1960, 2, 29, 12)), dict(id=2, v=None, at=None)],
             properties=COW)
    up_o = [(2, "two", datetime.datetime(2024, 2, 29)), (3, "three", None)]
    cases.append(Case("other_events", "ext.events", PyReader(t), what="upsert",
                      cols="id BIGINT NOT NULL, v LONGTEXT, at DATETIME(6), PRIMARY KEY (id)",
                      opts="mode = 'upsert', " + other_opts, stmts=[
                          ("INSERT INTO other_events VALUES (2, 'two', '2024-02-29 00:00:00'), (3, 'three', NULL)", None)],
                      expect=lambda before: upserted(before, up_o)))

    # Iceberg types lakesql has no column type for: refused when a sink attaches.
    for name, typ, name_t, v in (("time_t", TimeType(), "time", datetime.time(12, 34, 56, 789)),
                                 ("uuid_t", UUIDType(), "uuid", uuid.UUID("123e4567-e89b-12d3-a456-426614174000").bytes),
                                 ("fixed_t", FixedType(4), "fixed[4]", b"abcd")):
        s = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "c", typ))
        make(cat, "py." + name, s, [dict(id=1, c=v), dict(id=2, c=None)])
        cases.append(Case(name, "py." + name, None, refuse="Iceberg type " + name_t))
    return cases


# ---------------------------------------------------------------- Spark's tables


def delete_files(table, content, what):
    """(ok, detail): whether Spark lists live delete files of content (1 position, 2 equality) in table."""
    from .. import spark
    fresh_catalog()
    n = spark.session().sql("SELECT count(*) FROM %s.delete_files WHERE content = %d" % (table, content)).collect()[0][0]
    return n > 0, "%d %s delete file(s) live" % (n, what)


def spark_cases(data):
    """Tables Spark creates through its JDBC catalog on lakesql's SQLite file (format 2)."""
    from .. import spark
    s = spark.session()
    uri = "jdbc:sqlite:" + os.path.join(data, "iceberg", "catalog.db")
    # Iceberg's JdbcCatalog reads the rows whose catalog_name is its Spark name: "lakesql".
    spark.iceberg_catalog(CATALOG_NAME, type="jdbc", uri=uri, warehouse="file://" + os.path.join(data, "iceberg", "warehouse"))
    s.conf.set("spark.sql.catalog.%s.jdbc.schema-version" % CATALOG_NAME, "V1")
    s.conf.set("spark.sql.catalog.%s.cache-enabled" % CATALOG_NAME, "false")  # lakesql commits between reads
    fresh_catalog()  # another section may have built "lakesql" on another file
    mor = ("'format-version' = '2', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', "
           "'write.merge.mode' = 'merge-on-read'")
    s.sql("CREATE NAMESPACE IF NOT EXISTS lakesql.sp")

    # Partitioned by truncate and days ('a/' escaped in a folder name); a merge-on-read DELETE of
    # one of two rows in a file (position deletes). sp.eq has the bucket transform.
    s.sql("CREATE TABLE lakesql.sp.mor (id BIGINT NOT NULL, cat STRING, ts TIMESTAMP, amt DECIMAL(38,18), d DATE) "
          "USING iceberg PARTITIONED BY (truncate(2, cat), days(ts)) TBLPROPERTIES (%s)" % mor)
    s.sql("INSERT INTO lakesql.sp.mor VALUES "
          "(1, 'alpha', TIMESTAMP '2024-01-01 10:00:00', 1.5, DATE '2024-01-01'), "
          "(2, 'beta', TIMESTAMP '1969-12-31 23:59:59.999999', -12345678901234567890.123456789012345678, DATE '1969-12-31'), "
          "(7, 'bezel', TIMESTAMP '1969-12-31 00:00:01', 7, DATE '1969-12-30'), "
          "(3, 'a/b=c%', TIMESTAMP '1900-01-01 00:00:00', 0, DATE '0001-01-01'), "
          "(4, NULL, NULL, NULL, NULL), (5, '', TIMESTAMP '2024-01-01 23:00:00', 99999999999999999999.999999999999999999, NULL)")
    s.sql("DELETE FROM lakesql.sp.mor WHERE id = 2")
    ok, detail = delete_files("lakesql.sp.mor", 1, "position")
    if not ok:
        raise RuntimeError("Spark's merge-on-read DELETE left " + detail)
    up_m = [(1, "alpha2", ts(2024, 1, 2), D("2.5"), datetime.date(2024, 1, 2)), (6, "new", ts(1950, 6, 1), None, None)]
    cases = [Case("sp_mor", "sp.mor", SparkReader("lakesql.sp.mor"), what="upsert",
                  cols="id BIGINT NOT NULL, cat LONGTEXT, ts TIMESTAMP(6), amt DECIMAL(38,18), d DATE, PRIMARY KEY (id)",
                  opts="mode = 'upsert'", stmts=[
                      ("INSERT INTO sp_mor VALUES (1, 'alpha2', '2024-01-02 00:00:00', 2.5, '2024-01-02'), "
                       "(6, 'new', '1950-06-01 00:00:00', NULL, NULL)", None),
                      ("DELETE FROM sp_mor WHERE id = 4", None)],
                  expect=lambda before: upserted(before, up_m, [4]),
                  filters=[("id = 6", lambda r: r[0] == 6), ("cat = 'alpha2'", lambda r: r[1] == "alpha2"),
                           ("ts >= TIMESTAMP '1950-06-01 00:00:00' AND ts < TIMESTAMP '1950-06-02 00:00:00'",
                            lambda r: r[2] is not None and ts(1950, 6, 1) <= r[2].replace(tzinfo=UTC) < ts(1950, 6, 2))])]

    # Bucketed by its key: lakesql's upserts land as equality deletes, which Spark must apply.
    s.sql("CREATE TABLE lakesql.sp.eq (id BIGINT NOT NULL, v STRING, n INT) USING iceberg "
          "PARTITIONED BY (bucket(2, id)) TBLPROPERTIES (%s)" % mor)
    s.sql("INSERT INTO lakesql.sp.eq VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3), (4, 'd', NULL)")
    s.sql("DELETE FROM lakesql.sp.eq WHERE id = 3")
    up_q = [(1, "A", 10), (5, "e", 5)]
    cases.append(Case("sp_eq", "sp.eq", SparkReader("lakesql.sp.eq"), what="upsert",
                      cols="id BIGINT NOT NULL, v LONGTEXT, n INT, PRIMARY KEY (id)", opts="mode = 'upsert'", stmts=[
                          ("INSERT INTO sp_eq VALUES (1, 'A', 10), (5, 'e', 5)", None),
                          ("DELETE FROM sp_eq WHERE id = 2", None)],
                      expect=lambda before: upserted(before, up_q, [2]),
                      filters=[("id = 1", lambda r: r[0] == 1), ("id = 5", lambda r: r[0] == 5)],
                      post=lambda: delete_files("lakesql.sp.eq", 2, "equality")))

    # Nested columns and timestamp_ntz, attached without columns; lakesql appends.
    s.sql("CREATE TABLE lakesql.sp.nest (id BIGINT, st STRUCT<a: INT, b: STRING>, arr ARRAY<DOUBLE>, "
          "m MAP<STRING, BIGINT>, ntz TIMESTAMP_NTZ) USING iceberg TBLPROPERTIES ('format-version' = '2')")
    s.sql("INSERT INTO lakesql.sp.nest VALUES (1, named_struct('a', 1, 'b', 'x'), array(1.5, -0.0), map('k', 7), "
          "TIMESTAMP_NTZ '1969-07-20 20:17:40.000001'), (2, NULL, NULL, NULL, NULL)")
    new_s = (3, {"a": None, "b": "y"}, [2.25], {"z": -1}, datetime.datetime(1900, 1, 1))
    cases.append(Case("sp_nest", "sp.nest", SparkReader("lakesql.sp.nest"), what="append", stmts=[
        ("INSERT INTO sp_nest VALUES (3, '{\"b\": \"y\"}', '[2.25]', '{\"z\": -1}', '1900-01-01 00:00:00')", None)],
        expect=lambda before: before + [new_s]))
    return cases
