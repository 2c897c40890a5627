"""The Iceberg tables section ours_iceberg has lakesql write, and how.

Each table is a sink and a list of steps; a step is one epoch (one
statement in autocommit, or several in BEGIN ... COMMIT), so one snapshot.
After each step the table records lakesql's own view: SHOW SINK STATUS's
epoch and snapshot id, and SELECT's rows; readers are compared to those.
"""
from decimal import Decimal as D

from .. import compare


class Refused:
    """A step lakesql must refuse with its unsupported-feature error (1235) naming feature."""

    def __init__(self, feature, step):
        self.feature, self.step = feature, step


# iceberg-go would write the manifest bound of '' as null (README "### Sinks").
EMPTY_PARTITION = "empty string as a partition value"


class Commit:
    def __init__(self, epoch, snapshot_id, rows):
        self.epoch, self.snapshot_id, self.rows = epoch, snapshot_id, rows


class Table:
    """A sink lakesql creates and writes.

    columns: (name, declared MySQL type, Iceberg type per the README's type
    table, NOT NULL?). filters: columns whose distinct values readers
    filter on after the last step (partition pruning).
    """

    def __init__(self, name, columns, steps, partition=None, options=None, key=(), filters=()):
        self.name = name
        self.columns = columns
        self.cols = [c[0] for c in columns]
        self.steps = steps
        self.partition = partition
        self.options = dict(options or {})
        self.key = list(key)
        self.filter_cols = list(filters)
        self.mode = self.options.get("mode", "append")
        self.format_version = int(self.options.get("format_version", 2))
        self.writer_id = self.options.get("writer_id", "lakesql-" + name)
        self.partitioned = bool(partition)
        self.commits = []
        self.filters = []  # (column, value, lakesql's rows)

    def want_types(self):
        """{column: type in Spark's spelling[ not null]}, from the README's Iceberg column."""
        return {n: compare.iceberg_type(ice) + (" not null" if nn else "") for n, _, ice, nn in self.columns}

    def canon_types(self):
        return [compare.iceberg_type(ice) for _, _, ice, _ in self.columns]

    def ddl(self, ns):
        cols = ["`%s` %s%s" % (n, decl, " NOT NULL" if nn else "") for n, decl, _, nn in self.columns]
        if self.key:
            cols.append("PRIMARY KEY (%s)" % ", ".join("`%s`" % k for k in self.key))
        sql = "CREATE SINK `%s` INTO ICEBERG '%s.%s' (%s)" % (self.name, ns, self.name, ", ".join(cols))
        if self.partition:
            sql += " PARTITION BY (%s)" % self.partition
        if self.options:
            sql += " WITH (%s)" % ", ".join("%s = %s" % (k, v if isinstance(v, int) else "'%s'" % v)
                                            for k, v in self.options.items())
        return sql

    def build(self, srv, ns, ledger):
        from ..server import error_code
        srv.exec(self.ddl(ns))
        for step in self.steps:
            if isinstance(step, Refused):
                try:
                    run_step(srv, self.name, step.step)
                except Exception as e:
                    if error_code(e) == 1235 and step.feature in str(e):
                        ledger.refused(self.name, "lakesql", step.feature)
                        continue
                    raise
                ledger.wrong(self.name, "lakesql", "not refused: %s" % step.feature)
                continue
            run_step(srv, self.name, step)
            _, st = srv.query("SHOW SINK STATUS `%s`" % self.name)
            epoch, version = st[0][2], st[0][3]
            _, rows = srv.query("SELECT %s FROM `%s`" % (", ".join("`%s`" % c for c in self.cols), self.name))
            self.commits.append(Commit(epoch, version, rows))
        sel = ", ".join("`%s`" % c for c in self.cols)
        for col in self.filter_cols:
            _, vals = srv.query("SELECT DISTINCT `%s` FROM `%s`" % (col, self.name))
            for (v,) in vals:
                if v is None:
                    _, rows = srv.query("SELECT %s FROM `%s` WHERE `%s` IS NULL" % (sel, self.name, col))
                else:
                    _, rows = srv.query("SELECT %s FROM `%s` WHERE `%s` = %%s" % (sel, self.name, col), (v,))
                self.filters.append((col, v, rows))


def run_step(srv, name, step):
    """Runs one step: a list of (sql, args) — args a tuple, or a list of tuples for one multi-row INSERT."""
    stmts = [(s.replace("{t}", "`%s`" % name), a) for s, a in step]
    conn = srv.conn()
    if len(stmts) > 1:
        srv.exec("BEGIN")
    try:
        for sql, args in stmts:
            with conn.cursor() as c:
                if isinstance(args, list):
                    c.executemany(sql, args)
                else:
                    c.execute(sql, args)
        if len(stmts) > 1:
            srv.exec("COMMIT")
    except Exception:
        if len(stmts) > 1:
            srv.exec("ROLLBACK")
        raise


def insert(cols, rows):
    """One multi-row INSERT statement of rows (PyMySQL's executemany makes it one)."""
    return ("INSERT INTO {t} (%s) VALUES (%s)" % (", ".join("`%s`" % c for c in cols), ", ".join(["%s"] * len(cols))), rows)


# Every type of the README's type table, with its Iceberg column.
TYPE_COLUMNS = [
    ("id", "INT", "int", True),
    ("b", "BOOLEAN", "boolean", False),
    ("b1", "TINYINT(1)", "boolean", False),
    ("ti", "TINYINT", "int", False),
    ("tiu", "TINYINT UNSIGNED", "int", False),
    ("si", "SMALLINT", "int", False),
    ("siu", "SMALLINT UNSIGNED", "int", False),
    ("mi", "MEDIUMINT", "int", False),
    ("miu", "MEDIUMINT UNSIGNED", "int", False),
    ("i", "INTEGER", "int", False),
    ("iu", "INT UNSIGNED", "long", False),
    ("bi", "BIGINT", "long", False),
    ("f", "FLOAT", "float", False),
    ("d", "DOUBLE", "double", False),
    ("dec", "DECIMAL(38,18)", "decimal(38, 18)", False),
    ("dec0", "NUMERIC", "decimal(10, 0)", False),
    ("ch", "CHAR(4)", "string", False),
    ("vc", "VARCHAR(32)", "string", False),
    ("tx", "TEXT", "string", False),
    ("ttx", "TINYTEXT", "string", False),
    ("mtx", "MEDIUMTEXT", "string", False),
    ("ltx", "LONGTEXT", "string", False),
    ("js", "JSON", "string", False),
    ("bn", "BINARY(4)", "binary", False),
    ("vb", "VARBINARY(8)", "binary", False),
    ("bl", "BLOB", "binary", False),
    ("tbl", "TINYBLOB", "binary", False),
    ("mbl", "MEDIUMBLOB", "binary", False),
    ("lbl", "LONGBLOB", "binary", False),
    ("dt", "DATE", "date", False),
    ("dtm", "DATETIME(6)", "timestamp", False),
    ("dtm0", "DATETIME", "timestamp", False),
    ("ts", "TIMESTAMP(6)", "timestamptz", False),
    ("ts0", "TIMESTAMP", "timestamptz", False),
]
_TC = [c[0] for c in TYPE_COLUMNS]
_MIN = (1, 0, 0, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808,
        -3.4028234e38, -1.7976931348623157e308, D("-99999999999999999999.999999999999999999"), D("-9999999999"),
        "", "", "", "", "", "", "[]", b"\x00", b"", b"\x00\xff", b"\x00", b"\x00", b"\x00",
        "0001-01-01", "0001-01-01 00:00:00.000000", "0001-01-01 00:00:00", "0001-01-01 00:00:00.000000", "0001-01-01 00:00:00")
_MAX = (2, 1, 1, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807,
        3.4028234e38, 1.7976931348623157e308, D("99999999999999999999.999999999999999999"), D("9999999999"),
        "zzzz", "v" * 32, "t" * 1000, "x" * 255, "m" * 5000, "l" * 10000, '{"a": [1, 2.5, null], "b": {"c": "ü"}}',
        b"\xff" * 4, b"\xff" * 8, bytes(range(256)), b"\xff" * 255, b"\xfe" * 300, b"\xfd" * 1000,
        "9999-12-31", "9999-12-31 23:59:59.999999", "9999-12-31 23:59:59", "9999-12-31 23:59:59.999999", "9999-12-31 23:59:59")
_NULLS = (3,) + (None,) * (len(TYPE_COLUMNS) - 1)
_TEXT = (4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1.1, 0.1, D("0.000000000000000001"), D("-1"),
         "日本語ü", "naïve — ✓ 🎉 “q”", "it's \"quoted\" \\ back\\slash", "\t\n\r", " ", "Ω€𝄞" * 50, '"ünï"',
         b"\x00\x00", b"\x00\xff\x00", b"", b"\xff", b"", b"\x00" * 3,
         "1970-01-01", "1970-01-01 00:00:00.000000", "1970-01-01 00:00:00", "1970-01-01 00:00:00.000000", "1970-01-01 00:00:00")
_OLD = (5, 0, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, -1.5e-45, 5e-324, D("-0.000000000000000001"), D("1"),
        "a", "/=%'", "\\N", "NULL", "0", "'", "null", b"\x01", b"\x00" * 8, b"\xff\x00", b"", b"\x00", b"",
        "1969-12-31", "1969-12-31 23:59:59.999999", "1582-10-10 12:00:00", "1969-12-31 23:59:59.000001", "1000-06-15 01:02:03")
_ROUND = (6, 1, 0, 42, 200, 1000, 60000, 100000, 10000000, 123456789, 3000000000, 1 << 62,
          3.14159, 2.718281828459045, D("12345678901234567890.123456789012345678"), D("1234567890"),
          "ab", "x", "y", "z", "w", "v", '{"k": 1e400}', b"ab", b"abc", b"abcd", b"a", b"b", b"c",
          "2024-02-29", "2024-02-29 12:34:56.123456", "2024-02-29 12:34:56.5", "1900-03-01 00:00:00.000001", "2024-02-29 23:59:59.7")

TYPES = Table("types", TYPE_COLUMNS, [
    [insert(_TC, [_MIN, _MAX])],
    [insert(_TC, [_NULLS]), insert(_TC, [_TEXT])],
    [insert(_TC, [_OLD, _ROUND])],
], options={"writer_id": "interop-types"})

# Identity partitions with values a path or a URL would mangle.
_PV = ["a b", "a/b", "a=b", "100%", "%2F", "it's", '"dq"', "ünï 😀", "null", None, "x?y#z&", "..", " lead", "C:\\x"]
PART_IDENTITY = Table("part_identity", [
    ("id", "INT", "int", True), ("p", "VARCHAR(40)", "string", False), ("n", "INT", "int", False),
    ("v", "VARCHAR(8)", "string", False),
], [
    [insert(["id", "p", "n", "v"], [(i, p, (i % 3) - 1 if i % 4 else None, "v%d" % i) for i, p in enumerate(_PV[:7])])],
    [insert(["id", "p", "n", "v"], [(i + 7, p, (i % 3) - 1 if i % 4 else None, "w%d" % i) for i, p in enumerate(_PV[7:])]
            + [(30, "a/b", 5, "again")])],
    Refused(EMPTY_PARTITION, [insert(["id", "p", "n", "v"], [(31, "", 1, "empty")])]),
], partition="p, n", filters=["p", "n"])

PART_TIME = Table("part_time", [
    ("id", "INT", "int", True), ("ts", "TIMESTAMP(6)", "timestamptz", False),
    ("dtm", "DATETIME(6)", "timestamp", False), ("dt", "DATE", "date", False),
    ("d2", "DATE", "date", False), ("v", "VARCHAR(8)", "string", False),
], [
    [insert(["id", "ts", "dtm", "dt", "d2", "v"], [
        (1, "2024-06-15 10:20:30.000001", "2024-06-15 10:20:30.000001", "2024-06-15", "2024-06-15", "a"),
        (2, "1969-12-31 23:59:59.999999", "1969-12-31 23:59:59.999999", "1969-12-31", "1969-12-31", "pre"),
        (3, "1970-01-01 00:00:00", "1970-01-01 00:00:00", "1970-01-01", "1970-01-01", "epoch"),
    ])],
    [insert(["id", "ts", "dtm", "dt", "d2", "v"], [
        (4, None, None, None, None, "null"),
        (5, "0001-01-01 00:00:00", "0001-01-01 00:00:00", "0001-01-01", "0001-01-01", "first"),
        (6, "9999-12-31 23:59:59.999999", "9999-12-31 23:59:59.999999", "9999-12-31", "9999-12-31", "last"),
        (7, "1900-02-28 23:00:00", "1899-12-31 23:59:59", "1600-02-29", "1582-10-10", "old"),
    ])],
], partition="day(ts), hour(dtm), month(dt), year(d2)", filters=["dt", "d2"])

PART_HASH = Table("part_hash", [
    ("id", "BIGINT", "long", True), ("s", "VARCHAR(20)", "string", False), ("k", "INT", "int", False),
    ("dec", "DECIMAL(10,2)", "decimal(10, 2)", False), ("bin", "VARBINARY(8)", "binary", False),
    ("v", "VARCHAR(8)", "string", False),
], [
    [insert(["id", "s", "k", "dec", "bin", "v"], [
        (1, "abcdef", -1, D("-1.25"), b"\x00\xff\x01", "a"),
        (2, "ab", -10, D("0.00"), b"", "b"),
        (3, "-", 9, D("99999999.99"), None, "c"),
        (-4, None, None, None, b"\xff", "d"),
    ])],
    [insert(["id", "s", "k", "dec", "bin", "v"], [
        (9223372036854775807, "ünïcode", 10, D("-0.01"), b"\x01\x02\x03", "e"),
        (-9223372036854775808, "日本語の本", 2147483647, D("12.34"), b"\x00", "f"),
        (0, "a/b=c%", -11, D("0.50"), b"\x00\x00", "g"),
    ])],
    Refused(EMPTY_PARTITION, [insert(["id", "s", "k", "dec", "bin", "v"], [(5, "", 1, D("1.00"), b"", "h")])]),
], partition="bucket(4, id), truncate(3, s), truncate(10, k), bucket(3, dec), truncate(2, bin)",
    filters=["id", "s", "k", "dec", "bin"])

_UC = ["id", "k", "v", "n"]
_UCOLS = [("id", "INT", "int", True), ("k", "VARCHAR(16)", "string", True),
          ("v", "VARCHAR(16)", "string", False), ("n", "BIGINT", "long", False)]
_UOPS = _UC + ["_op"]


def _upsert_steps(empty=""):
    return [
        [insert(_UC, [(1, "a", "one", 1), (2, "b", "two", 2), (3, "c/=%", "three", 3), (4, "ü", "four", 4)])],
        [insert(_UOPS, [(1, "a", "one!", 10, "U"), (2, "b", None, None, "D"), (5, "e", "five", 5, "I"),
                        (5, "e", "five+", 55, "+U"), (3, "c/=%", "three", 3, "-U"), (3, "c/=%", "3!", 33, "+U"),
                        (7, "never", None, None, "-D")])],
        [("UPDATE {t} SET v = 'upd' WHERE n > 4", None)],
        [("DELETE FROM {t} WHERE id = 1", None)],
        [insert(_UC, [(1, "a", "back", 1)]), insert(_UC, [(6, empty, "q'uote", None)]),
         insert(_UOPS, [(4, "ü", None, None, "D")])],
    ]


# The tables below pin every snapshot they commit: no auto-compaction.
UPSERT = Table("upsert_v2", _UCOLS, _upsert_steps(), options={"mode": "upsert", "auto_compact": "false"}, key=["id", "k"])
UPSERT_V1 = Table("upsert_v1", _UCOLS, _upsert_steps(), options={"mode": "upsert", "format_version": 1, "auto_compact": "false"}, key=["id", "k"])
UPSERT_PART = Table("upsert_part", _UCOLS, _upsert_steps(" ") + [
    Refused(EMPTY_PARTITION, [insert(_UOPS, [(6, "", "x", None, "I")])]),
    Refused(EMPTY_PARTITION, [insert(_UOPS, [(8, "", None, None, "D")])]),
], partition="k", options={"mode": "upsert", "auto_compact": "false"},
                    key=["id", "k"], filters=["k"])

TABLES = [TYPES, PART_IDENTITY, PART_TIME, PART_HASH, UPSERT, UPSERT_V1, UPSERT_PART]
