"""Section 1 (Delta): tables lakesql writes through its SQL, read by Spark and delta-rs.

Every table is compared row for row and type for type with what lakesql's own
SELECT returns, and its types with the Delta type the README's type table
promises. The log is checked too: Spark's DESCRIBE HISTORY and delta-rs's
history() (contiguous versions, one per lakesql commit), the statistics as
delta-rs's get_add_actions() and Spark's snapshot give them against the rows of
each file, the protocol each engine sees, and time travel to older versions
against what lakesql's SELECT returned then.

Nested types are not covered: CREATE SINK has no spelling for them.
"""
import datetime
import os
import time

from .. import compare, engines, paths
from ..server import Server


# The Delta type of each declared type, as the README's type table gives it.
TYPES = [
    # (column, declared type, Delta type)
    ("id", "INT NOT NULL", "int"),
    ("b", "BOOLEAN", "boolean"),
    ("i8", "TINYINT", "tinyint"),
    ("u8", "TINYINT UNSIGNED", "smallint"),
    ("i16", "SMALLINT", "smallint"),
    ("u16", "SMALLINT UNSIGNED", "int"),
    ("i24", "MEDIUMINT", "int"),
    ("u24", "MEDIUMINT UNSIGNED", "int"),
    ("i32", "INT", "int"),
    ("u32", "INT UNSIGNED", "bigint"),
    ("i64", "BIGINT", "bigint"),
    ("f32", "FLOAT", "float"),
    ("f64", "DOUBLE", "double"),
    ("d10", "DECIMAL(10,2)", "decimal(10,2)"),
    ("d38", "DECIMAL(38,18)", "decimal(38,18)"),
    ("d0", "DECIMAL(38,0)", "decimal(38,0)"),
    ("c", "CHAR(4)", "string"),
    ("vc", "VARCHAR(64)", "string"),
    ("tt", "TINYTEXT", "string"),
    ("t", "TEXT", "string"),
    ("mt", "MEDIUMTEXT", "string"),
    ("lt", "LONGTEXT", "string"),
    ("j", "JSON", "string"),
    ("bn", "BINARY(4)", "binary"),
    ("vb", "VARBINARY(16)", "binary"),
    ("bl", "BLOB", "binary"),
    ("dt", "DATE", "date"),
    ("ntz", "DATETIME", "timestamp_ntz"),
    ("ntz6", "DATETIME(6)", "timestamp_ntz"),
    ("ts", "TIMESTAMP", "timestamp"),
    ("ts3", "TIMESTAMP(3)", "timestamp"),
    ("ts6", "TIMESTAMP(6)", "timestamp"),
    # past the 32 columns with statistics (binary ones carry null counts only)
    ("tb", "TINYBLOB", "binary"),
    ("mb", "MEDIUMBLOB", "binary"),
    ("lb", "LONGBLOB", "binary"),
]

# The order of the values below.
_ORDER = ("id b i8 u8 i16 u16 i24 u24 i32 u32 i64 f32 f64 d10 d38 d0 c vc tt t mt lt j bn vb tb bl mb lb "
          "dt ntz ntz6 ts ts3 ts6").split()
_MIN = ("1, 0, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, "
        "-3.4028234e38, -1.7976931348623157e308, -99999999.99, -99999999999999999999.999999999999999999, "
        "-99999999999999999999999999999999999999, '', '', '', '', '', '', '[]', x'', x'', x'', x'', x'', x'', "
        "'0001-01-01', '0001-01-01 00:00:00', '0001-01-01 00:00:00.000000', '0001-01-01 00:00:00', "
        "'0001-01-01 00:00:00.000', '0001-01-01 00:00:00.000000'")
_MAX = ("2, 1, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, "
        "3.4028234e38, 1.7976931348623157e308, 99999999.99, 99999999999999999999.999999999999999999, "
        "99999999999999999999999999999999999999, 'zzzz', CONCAT('ünï\u00e7ødé ✓ 😀 ', REPEAT('a', 19), '😀😀 past 32 characters'), 'x', 'tiny', 'medium', 'long', "
        "'{\"a\": [1, 2.5, null], \"b\": \"ü\"}', x'00ff00ff', x'ff00', x'ff', x'00', x'00ff', x'ffff00', "
        "'9999-12-31', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59', "
        "'9999-12-31 23:59:59.999', '9999-12-31 23:59:59.999999'")
_MID = ("4, 0, -1, 1, -1, 1, -1, 1, -1, 1, -1, "
        "1.5, -0.1, -0.01, -0.000000000000000001, -1, 'a b', 'O''Reilly \"q\" \\\\ /%=', 'ü', 'line\\nbreak', "
        "'tab\\there', REPEAT('日本語', 12), 'null', x'7f', x'00', x'61', x'62', x'63', x'64', "
        "'1969-12-31', '1969-12-31 23:59:59', '1900-01-01 12:34:56.123456', '1969-12-31 23:59:59', "
        "'1960-06-15 01:02:03.456', '1969-12-31 23:59:59.999999'")


def _spark(path, version=None, columns=None):
    # Quoted: Spark's select takes a dot as a field of a struct.
    quoted = ["`%s`" % c.replace("`", "``") for c in columns] if columns else None
    return engines.spark_delta(path, version=version, columns=quoted, arrow=True)


READERS = (("spark", _spark), ("delta-rs", engines.deltars))

# delta-rs (like Spark) reads statistics of the first 32 columns only
# (delta.dataSkippingNumIndexedCols); lakesql writes them for every column.
STATS_COLUMNS = 32

_NULLS = "3" + ", NULL" * (len(TYPES) - 1)


def run(ledger):
    d = paths.workdir("ours")
    t0 = time.time()
    from .. import spark as sparkmod
    sparkmod.session()
    ledger.out("(ours: Spark started in %.1fs)" % (time.time() - t0))
    with Server(d) as srv:
        ctx = Ctx(ledger, srv)
        ctx.types_table()
        ctx.ntz_table()
        ctx.partitioned()
        ctx.odd_names()
        ctx.append_sink()
        ctx.upsert_sink()


class Ctx:
    def __init__(self, ledger, srv):
        self.ledger = ledger
        self.srv = srv

    def path(self, name):
        return os.path.join(self.srv.data, "lake", name)

    def create(self, name, cols, extra=""):
        self.srv.exec("CREATE SINK `%s` INTO DELTA 'lake/%s' (%s) %s" % (name, name, cols, extra))

    def select(self, name, cols):
        _, rows = engines.lakesql(self.srv, name, cols)
        return rows

    # ---- the comparisons every table gets

    def read_all(self, name, cols, delta_types, history=None, versions=()):
        """Spark and delta-rs read NAME: rows and types; then its log."""
        t0 = time.time()
        self._read_all(name, cols, delta_types, history, versions)
        self.ledger.out("(ours: %s checked in %.1fs)" % (name, time.time() - t0))

    def _read_all(self, name, cols, delta_types, history, versions):
        want = self.select(name, cols)
        path = self.path(name)
        ltypes = [delta_types[c] for c in cols]
        for eng, reader in READERS:
            with self.ledger.guard(name, eng):
                types, got = reader(path, columns=cols)
                t = compare.diff_types(delta_types, types)
                if t is not None:
                    self.ledger.wrong(name, eng, "types: " + t)
                else:
                    self.ledger.rows(name, eng, want, got, ltypes)
        self.stats(name, cols, delta_types)
        if history is not None:
            self.history(name, history)
        self.detail(name, delta_types)
        for v, rows in versions:
            for eng, reader in READERS:
                with self.ledger.guard("%s@v%d" % (name, v), eng):
                    _, got = reader(path, version=v, columns=cols)
                    self.ledger.rows("%s@v%d" % (name, v), eng, rows, got, ltypes)

    def detail(self, name, delta_types):
        """The protocol both engines see: reader 1 / writer 2 (appendOnly and
        invariants implied), or, with a timestamp_ntz column, reader 3 /
        writer 7 listing timestampNtz (and invariants, for a NOT NULL column);
        Spark's file count and partition columns against delta-rs's."""
        from deltalake import DeltaTable
        from .. import spark as sparkmod
        path = self.path(name)
        dt = DeltaTable(path)
        notnull = any(not f.nullable for f in dt.schema().fields)
        if "timestamp_ntz" in delta_types.values():
            want = (3, 7, ["timestampNtz"], sorted(["timestampNtz"] + (["invariants"] if notnull else [])))
            spark_feats = sorted(set(want[2]) | set(want[3]))
        else:
            want = (1, 2, None, None)
            spark_feats = ["appendOnly", "invariants"]
        with self.ledger.guard(name + " protocol", "delta-rs"):
            p = dt.protocol()
            got = (p.min_reader_version, p.min_writer_version, sorted(p.reader_features) if p.reader_features else None,
                   sorted(p.writer_features) if p.writer_features else None)
            self.ledger.check(name + " protocol", "delta-rs", got == want, "protocol %s, want %s" % (got, want))
        with self.ledger.guard(name + " protocol", "spark"):
            r = sparkmod.session().sql("DESCRIBE DETAIL delta.`%s`" % path.replace("`", "``")).collect()[0]
            nfiles = len(_arrow(dt.get_add_actions()).to_pylist())
            got = (r.minReaderVersion, r.minWriterVersion, sorted(r.tableFeatures), r.numFiles, list(r.partitionColumns))
            exp = (want[0], want[1], spark_feats, nfiles, list(dt.metadata().partition_columns))
            self.ledger.check(name + " protocol", "spark", got == exp, "detail %s, want %s" % (got, exp))

    def history(self, name, ops):
        """Both engines' histories: versions 0..n contiguous, operations as lakesql's commits.

        ops is the list of operations expected, version by version.
        """
        from .. import spark as sparkmod
        path = self.path(name)
        with self.ledger.guard(name + " history", "spark"):
            rows = sparkmod.session().sql("DESCRIBE HISTORY delta.`%s`" % path).select("version", "operation").collect()
            got = sorted((r.version, r.operation) for r in rows)
            want = list(enumerate(ops))
            self.ledger.check(name + " history", "spark", got == want,
                              "%d versions" % len(got) if got == want else "history %s, expected %s" % (got, want))
        with self.ledger.guard(name + " history", "delta-rs"):
            from deltalake import DeltaTable
            h = DeltaTable(path).history()
            got = sorted((e["version"], e.get("operation")) for e in h)
            want = list(enumerate(ops))
            self.ledger.check(name + " history", "delta-rs", got == want,
                              "%d versions" % len(got) if got == want else "history %s, expected %s" % (got, want))

    def stats(self, name, cols, delta_types):
        """Each engine's view of the statistics against the rows of each file:
        delta-rs's get_add_actions(), and Spark's own parse of them (the
        snapshot's withStats, by the stats schema it skips files with)."""
        from deltalake import DeltaTable
        path = self.path(name)
        with self.ledger.guard(name + " stats", "delta-rs"):
            dt = DeltaTable(path)
            parts = set(dt.metadata().partition_columns)
            indexed = [f.name for f in dt.schema().fields][:STATS_COLUMNS]
            acts = _arrow(dt.get_add_actions(flatten=True)).to_pylist()
            self._check_files(name, "delta-rs", path, acts, [c for c in cols if c in indexed and c not in parts], delta_types)
        with self.ledger.guard(name + " stats", "spark"):
            from pyspark.sql import DataFrame
            from .. import spark as sparkmod
            s = sparkmod.session()
            log = s._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(s._jsparkSession, path)
            df = DataFrame(log.update(False, s._jvm.scala.Option.empty(), s._jvm.scala.Option.empty()).withStats(), s)
            acts = []
            for r in df.select("path", "stats").toArrow().to_pylist():
                st = r["stats"] or {}
                a = {"path": r["path"], "num_records": st.get("numRecords")}
                for k, pre in (("minValues", "min."), ("maxValues", "max."), ("nullCount", "null_count.")):
                    for c, v in (st.get(k) or {}).items():
                        a[pre + c] = v
                acts.append(a)
            self._check_files(name, "spark", path, acts, [c for c in cols if c in indexed and c not in parts], delta_types)

    def _check_files(self, name, eng, path, acts, cols, delta_types):
        import pyarrow.parquet as pq
        bad = []
        for a in acts:
            tbl = pq.read_table(os.path.join(path, _unquote(a["path"])))
            if a.get("num_records") != tbl.num_rows:
                bad.append("%s: num_records %s, file has %d" % (a["path"], a.get("num_records"), tbl.num_rows))
            for c in cols:
                if c not in tbl.column_names:
                    bad.append("%s: no column %s" % (a["path"], c))
                    continue
                bad += _check_stats(a, c, delta_types[c], tbl.column(c).to_pylist())
        self.ledger.check(name + " stats", eng, not bad and acts,
                          "%d files" % len(acts) if not bad else "; ".join(bad[:6]))

    # ---- the tables

    def types_table(self):
        cols = ", ".join("`%s` %s" % (c, t) for c, t, _ in TYPES)
        self.create("types", cols, "WITH (checkpoint_interval = 2)")
        names = [c for c, _, _ in TYPES]
        ins = "INSERT INTO types (%s) VALUES " % ", ".join(_ORDER)
        self.srv.exec(ins + "(%s), (%s)" % (_MIN, _MAX))
        v1 = self.select("types", names)
        self.srv.exec(ins + "(%s), (%s)" % (_NULLS, _MID))
        self.read_all("types", names, {c: t for c, _, t in TYPES}, history=["CREATE TABLE", "WRITE", "WRITE"],
                      versions=[(1, v1)])

    def ntz_table(self):
        """DATETIME(p) columns (timestamp_ntz), partitioned by one too."""
        self.create("ntz", "id INT NOT NULL, p DATETIME(6), a DATETIME, b DATETIME(3), c DATETIME(6)", "PARTITION BY (p)")
        self.srv.exec("INSERT INTO ntz VALUES "
                      "(1, '2024-03-10 02:30:00', '0001-01-01 00:00:00', '0001-01-01 00:00:00.001', '0001-01-01 00:00:00.000001'), "
                      "(2, '1969-12-31 23:59:59', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999', '9999-12-31 23:59:59.999999'), "
                      "(3, NULL, NULL, NULL, NULL), "
                      "(4, '1969-12-31 23:59:59.999999', '1969-12-31 23:59:59', '1969-12-31 23:59:59.5', '1969-12-31 23:59:59.999999'), "
                      "(5, '2024-03-10 02:30:00.123456', '2024-06-15 10:20:30', '2024-06-15 10:20:30.1234', '2024-06-15 10:20:30.1234565')")
        types = {"id": "int", "p": "timestamp_ntz", "a": "timestamp_ntz", "b": "timestamp_ntz", "c": "timestamp_ntz"}
        self.read_all("ntz", list(types), types, history=["CREATE TABLE", "WRITE"])

    def partitioned(self):
        """Partition values that need escaping, of four partition column types
        (string, int, date, timestamp) in one table, so folders nest; a
        checkpoint at version 2 holds the partition values too."""
        strs = ["a b", "a/b", "a=b", "100%", "%2F", "it's", '"dq"', "ünï 日本", "", None, "x\\y", "a:b#c?d", " lead", "UPPER"]
        ints = ["-2147483648", "2147483647", "0", "NULL", "-1"]
        dates = ["'0001-01-01'", "'9999-12-31'", "'1969-12-31'", "NULL", "'2024-02-29'", "'1970-01-01'"]
        tss = ["'0001-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'", "'1969-12-31 23:59:59.000001'", "NULL",
               "'2024-06-15 10:20:30.123456'", "'1970-01-01 00:00:00'", "'2024-06-15 10:20:30'"]
        cols = ["id", "ks", "ki", "kd", "kt", "v"]
        types = {"id": "int", "ks": "string", "ki": "int", "kd": "date", "kt": "timestamp", "v": "string"}
        self.create("part", "id INT NOT NULL, ks VARCHAR(32), ki INT, kd DATE, kt TIMESTAMP(6), v VARCHAR(16)",
                    "PARTITION BY (ks, ki, kd, kt) WITH (checkpoint_interval = 2)")

        def rows(n, first, note):
            return ", ".join("(%d, %s, %s, %s, %s, %s)" % (first + i, _lit(strs[i % len(strs)]), ints[i % len(ints)],
                                                          dates[i % len(dates)], tss[i % len(tss)], note)
                             for i in range(n))
        self.srv.exec("INSERT INTO part VALUES " + rows(len(strs) * 2, 0, "'first'"))
        v1 = self.select("part", cols)
        self.srv.exec("INSERT INTO part VALUES " + rows(len(strs), 100, "NULL"))
        self.read_all("part", cols, types, history=["CREATE TABLE", "WRITE", "WRITE"], versions=[(1, v1)])

    def odd_names(self):
        """Column names with a space, a dot, a comma, unicode: statistics keys
        and a partition folder of such a name."""
        cols = ["a b", "ü.x", "c,d", "Ǆ"]
        self.create("names", "`a b` INT, `ü.x` VARCHAR(4), `c,d` INT NOT NULL, `Ǆ` DATE", "PARTITION BY (`a b`)")
        self.srv.exec("INSERT INTO names VALUES (1, 'x', 2, '2024-01-01'), (NULL, NULL, 3, NULL), (1, 'y', 4, '1969-01-01')")
        self.read_all("names", cols, {"a b": "int", "ü.x": "string", "c,d": "int", "Ǆ": "date"},
                      history=["CREATE TABLE", "WRITE"])

    def append_sink(self):
        """An append sink, one commit per statement and one transaction of two."""
        cols = ["id", "name", "amount", "at"]
        self.create("app", "id BIGINT NOT NULL, name VARCHAR(32), amount DECIMAL(12,3), at TIMESTAMP(3)")
        seen = []
        for i in range(4):
            self.srv.exec("INSERT INTO app VALUES (%d, 'n%d', %d.125, '2024-01-0%d 00:00:00.5'), (%d, NULL, NULL, NULL)"
                          % (i * 2, i, i, i + 1, i * 2 + 1))
            seen.append((i + 1, self.select("app", cols)))
        c = self.srv.connect(autocommit=False)
        try:
            with c.cursor() as cur:
                cur.execute("INSERT INTO app VALUES (100, 'tx', -1.5, '1960-01-01 00:00:00')")
                cur.execute("INSERT INTO app VALUES (100, 'tx dup key', -1.5, '1960-01-01 00:00:00')")
            c.commit()
        finally:
            c.close()
        self.read_all("app", cols, {"id": "bigint", "name": "string", "amount": "decimal(12,3)", "at": "timestamp"},
                      history=["CREATE TABLE"] + ["WRITE"] * 5, versions=[seen[1]])

    def upsert_sink(self):
        """An upsert sink with changelog deletes, over 25 commits (checkpoints at 10 and 20)."""
        cols = ["id", "k2", "v", "n", "at"]
        self.create("ups", "id INT NOT NULL, k2 VARCHAR(8) NOT NULL, v VARCHAR(32), n BIGINT, at DATETIME(6), "
                    "PRIMARY KEY (id, k2)", "PARTITION BY (k2) WITH (mode = 'upsert', auto_compact = false)")  # pins every version
        seen = {}
        version = 0
        ops = ["CREATE TABLE"]

        def commit(sql):
            nonlocal version
            self.srv.exec(sql)
            version += 1
            ops.append("MERGE")
            seen[version] = self.select("ups", cols)

        for i in range(12):
            commit("INSERT INTO ups VALUES (%d, 'a', 'v%d', %d, '2024-01-01 00:00:%02d.000001'), (%d, 'b', NULL, NULL, NULL)"
                   % (i, i, i * i, i, i))
        for i in range(0, 12, 3):  # changelog: delete one, update another, in one statement
            commit("INSERT INTO ups (_op, id, k2, v, n, at) VALUES ('D', %d, 'a', NULL, NULL, NULL), "
                   "('U', %d, 'b', 'upd%d', -%d, '1969-07-20 20:17:40.5')" % (i, i + 1, i, i))
        commit("INSERT INTO ups (_op, id, k2, v, n, at) VALUES ('I', 50, 'a', 'x', 1, NULL), ('-D', 50, 'a', NULL, NULL, NULL), "
               "('+U', 51, 'a', 'y', 2, NULL), ('r', 52, 'a', 'r', 3, NULL), ('c', 53, 'a', 'c', 4, NULL), "
               "('U-', 52, 'a', NULL, NULL, NULL), ('-U', 2, 'a', NULL, NULL, NULL)")
        commit("UPDATE ups SET v = 'bulk' WHERE k2 = 'b' AND id < 4")
        commit("DELETE FROM ups WHERE id = 11")
        for i in range(8):
            commit("INSERT INTO ups VALUES (%d, 'c', 'late%d', %d, '9999-12-31 23:59:59.999999')" % (i, i, i))
        commit("INSERT INTO ups (_op, id, k2, v, n, at) VALUES ('D', 0, 'c', NULL, NULL, NULL), ('D', 999, 'zz', NULL, NULL, NULL)")
        assert version > 25, version
        _, st = self.srv.query("SHOW SINK STATUS ups")
        self.ledger.check("ups status", "lakesql", st and st[0][3] == version,
                          "Table_version %s, %d commits" % (st[0][3] if st else None, version))
        logs = sorted(os.listdir(os.path.join(self.path("ups"), "_delta_log")))
        self.ledger.check("ups checkpoints", "lakesql", any(f.endswith(".checkpoint.parquet") for f in logs),
                          "checkpoints: %s" % [f for f in logs if "checkpoint" in f])
        # At the first checkpoint and one commit past it (older versions
        # replay the JSON alone, as app@v1 does).
        pick = [10, 11]
        self.read_all("ups", cols, {"id": "int", "k2": "string", "v": "string", "n": "bigint", "at": "timestamp_ntz"},
                      history=ops, versions=[(v, seen[v]) for v in pick])


def _lit(v):
    if v is None:
        return "NULL"
    return "'" + v.replace("\\", "\\\\").replace("'", "''") + "'"


def _arrow(x):
    import pyarrow as pa
    if isinstance(x, pa.Table):
        return x
    if hasattr(x, "to_pyarrow"):
        return x.to_pyarrow()
    return pa.table(x)


def _unquote(p):
    from urllib.parse import unquote
    return unquote(p)


def _check_stats(a, c, typ, vals):
    """What the add action a's statistics for column c get wrong about vals."""
    bad = []
    nn = [v for v in vals if v is not None]
    nulls = len(vals) - len(nn)
    nc = a.get("null_count." + c)
    if nc != nulls:
        bad.append("%s: null_count.%s %s, file has %d" % (a["path"], c, nc, nulls))
    if typ in ("boolean", "binary") or not nn:
        return bad
    lo, hi = a.get("min." + c), a.get("max." + c)
    if lo is None or hi is None:
        return bad + ["%s: %s has no min/max (%r..%r)" % (a["path"], c, lo, hi)]
    if typ == "string":
        tlo, thi = min(nn), max(nn)
        # A cut bound is a prefix (min) or a prefix and U+10FFFF (max).
        if lo is not None and not (tlo.startswith(lo) and (lo == tlo or len(lo) == 32)):
            bad.append("%s: min.%s %r, file has %r" % (a["path"], c, lo, tlo))
        if hi is not None and not (hi == thi or (hi.endswith("\U0010ffff") and thi.startswith(hi[:-1]))):
            bad.append("%s: max.%s %r, file has %r" % (a["path"], c, hi, thi))
        return bad
    tlo, thi = min(nn), max(nn)
    if typ == "timestamp" or typ == "timestamp_ntz":
        # Truncated to milliseconds: min is at or below, max below the next millisecond.
        def ms(x):
            x = x.replace(tzinfo=None) if isinstance(x, datetime.datetime) else x
            return x.replace(microsecond=x.microsecond // 1000 * 1000)
        ok = lambda s, t: s is None or ms(s) == ms(t)
        if not ok(lo, tlo) or not ok(hi, thi):
            bad.append("%s: %s stats %r..%r, file has %r..%r" % (a["path"], c, lo, hi, tlo, thi))
        return bad
    if typ == "float":
        ok = lambda s, t: s is None or compare.f32(s) == compare.f32(t)
    else:
        ok = lambda s, t: s is None or s == t
    if not ok(lo, tlo) or not ok(hi, thi):
        bad.append("%s: %s stats %r..%r, file has %r..%r" % (a["path"], c, lo, hi, tlo, thi))
    return bad
