"""Section 2 (Delta): tables Spark and delta-rs create, attached, read and written by lakesql.

Each table is made the way its engine's users make it, with that engine's
defaults. lakesql attaches it (CREATE SINK without a column list) and its
SELECT must give what the creating engine reads, row for row and type for
type; the other engine must read the same. Where lakesql writes the table's
features, it appends and upserts, then Spark, delta-rs and lakesql must all
read the modelled rows, and Spark appends once more on top (and, on the
deletion vector table, deletes a row lakesql wrote). Where it does not, its
INSERT must be refused with 1235 naming the feature: a table with column
mapping whole, a change data feed table its upserts
(appends land, and Spark's change feed must show them as inserts). A table
with nested columns takes appends only: no key can be declared over it.
"""
import datetime
import decimal
import json
import os
import time

import pymysql

from .. import engines, paths
from .. import spark as sparkmod
from ..server import Server, error_code

D = decimal.Decimal
UTC = datetime.timezone.utc


def run(ledger):
    d = paths.workdir("theirs")
    tables = os.path.join(d, "tables")
    os.makedirs(tables)
    t = time.time()
    s = sparkmod.session()
    ledger.out("time  theirs: Spark session ready in %.0fs" % (time.time() - t))
    with Server(os.path.join(d, "srv"), extra=["--allowed-roots", tables]) as srv:
        for name, make, write in CASES:
            path = os.path.join(tables, name)
            t = made = time.time()
            with ledger.guard(name, "harness"):
                ref, key = make(s, path)
                made = time.time()
                _case(ledger, srv, name, path, ref, key, write)
            ledger.out("time  theirs: %s made in %.0fs, checked in %.0fs" % (name, made - t, time.time() - made))


def _case(ledger, srv, name, path, ref, key, write):
    """Attaches table NAME at PATH, checks reads, then the writes (or their refusal)."""
    ref_engine = "spark" if ref == "spark" else "delta-rs"
    other = "delta-rs" if ref == "spark" else "spark"
    rtypes, rrows = _read(ref_engine, path)
    cols = list(rtypes)
    srv.exec("CREATE SINK `%s` INTO DELTA %%s" % name, (path,))
    _check(ledger, name, "lakesql", rtypes, rrows, *_read_lakesql(srv, name, cols, rtypes))
    with ledger.guard(name, other):
        _check(ledger, name, other, rtypes, rrows, *_read(other, path, cols))
    if write is None:
        return
    if isinstance(write, str):  # the feature lakesql's refusal must name
        _expect_refused(ledger, srv, name, cols, rtypes, rrows, write)
        return
    model = [tuple(r) for r in rrows]
    n = len(model)
    # An append through the attached sink.
    appended = write(n + 100)
    before = _version(path)
    _insert(srv, name, cols, rtypes, appended)
    model += appended
    if name in UPSERT_REFUSED:
        # The feed needs cdc files for rows an upsert replaces or deletes.
        feature = UPSERT_REFUSED[name]
        srv.exec("DROP SINK `%s`" % name)
        srv.exec("CREATE SINK `%s` INTO DELTA %%s (%s) %s WITH (mode = 'upsert')"
                 % (name, _declare(cols, rtypes, key), _partition_clause(path)), (path,))
        ki = cols.index(key)
        upd = tuple(model[0][ki] if i == ki else v for i, v in enumerate(write(n + 200)[0]))
        _expect_refused(ledger, srv, name + " upserted", cols, rtypes, [upd], feature, sink=name)
        with ledger.guard(name + " read as a change feed", "spark"):
            _check_feed(ledger, name + " read as a change feed", path, before + 1, cols, rtypes, appended)
    elif not any(_nested(t) for t in rtypes.values()):
        model = _upsert(srv, name, path, cols, rtypes, key, write(n + 200), model)
    else:
        # CREATE SINK cannot spell a nested column, so no key can be declared
        # over this table: it takes appends only (README "Sinks").
        ledger.out("note  theirs: %s has nested columns: no upsert sink can be declared over it" % name)
    model += _cross_checkpoint(srv, name, path, cols, rtypes, write, n + 400)
    tag = name + " written by lakesql"
    with ledger.guard(tag, "lakesql"):
        _check(ledger, tag, "lakesql", rtypes, model, *_read_lakesql(srv, name, cols, rtypes))
    for eng in ("spark", "delta-rs"):
        with ledger.guard(tag, eng):
            _check(ledger, tag, eng, rtypes, model, *_read(eng, path, cols))
    # Spark still writes after lakesql, and lakesql reads what it wrote.
    tag = name + " then Spark appends"
    t_del = time.time() - 1
    with ledger.guard(tag, "lakesql"):
        last = write(n + 300)[:1]
        sparkmod.session().createDataFrame(last, _spark_schema(path)).write.format("delta").mode("append").save(path)
        model += last
        _check(ledger, tag, "lakesql", rtypes, model, *_read_lakesql(srv, name, cols, rtypes))
    if name in SPARK_DELETES:
        # Spark's DELETE puts a deletion vector on a file lakesql wrote.
        tag = name + " then Spark deletes"
        with ledger.guard(tag, "lakesql"):
            ki = cols.index(key)
            gone = appended[0][ki]
            _sp("DELETE FROM delta.`%s` WHERE `%s` = %d" % (path, key, gone))
            if not any(f.startswith("deletion_vector_") and os.path.getmtime(os.path.join(path, f)) >= t_del
                       for f in os.listdir(path)):
                raise RuntimeError("Spark's DELETE wrote no new deletion vector")
            model = [r for r in model if r[ki] != gone]
            _check(ledger, tag, "lakesql", rtypes, model, *_read_lakesql(srv, name, cols, rtypes))


def _upsert(srv, name, path, cols, types, key, changed, model):
    """Re-attaches NAME as an upsert sink keyed on KEY; replaces, adds and deletes a row."""
    srv.exec("DROP SINK `%s`" % name)
    srv.exec("CREATE SINK `%s` INTO DELTA %%s (%s) %s WITH (mode = 'upsert')"
             % (name, _declare(cols, types, key), _partition_clause(path)), (path,))
    ki = cols.index(key)
    old = model[0]
    upd = tuple(old[ki] if i == ki else changed[0][i] for i in range(len(cols)))
    _insert(srv, name, cols, types, [upd, changed[1]])
    model = [upd if r[ki] == old[ki] else r for r in model] + [changed[1]]
    gone = model[1][ki]
    srv.exec("DELETE FROM `%s` WHERE `%s` = %%s" % (name, key), (gone,))
    return [r for r in model if r[ki] != gone]


def _nested(t):
    return t.startswith(("struct", "array", "map"))


def _read(engine, path, cols=None):
    if engine == "spark":
        return engines.spark_delta(path, columns=cols)
    return engines.deltars(path, columns=cols)


def _spark_schema(path):
    return sparkmod.session().read.format("delta").load(path).schema


def _check(ledger, table, engine, want_types, want_rows, types, rows):
    """One verdict: the types (in column order) and then the row multiset."""
    wt = list(want_types.items())
    gt = list(types.items())
    if wt != gt:
        ledger.wrong(table, engine, "types: expected %s, read %s" % (wt, gt))
        return
    ledger.rows(table, engine, want_rows, rows, [t for _, t in wt])


# MySQL column types lakesql shows for an attached table, in Spark's spelling.
_MYSQL = {"bigint": "bigint", "int": "int", "smallint": "smallint", "tinyint": "tinyint",
          "tinyint(1)": "boolean", "float": "float", "double": "double", "longtext": "string",
          "longblob": "binary", "date": "date", "timestamp(6)": "timestamp",
          "datetime(6)": "timestamp_ntz"}


def _read_lakesql(srv, name, cols, want_types):
    """(types, rows) of lakesql's SELECT; a nested column must show as longtext (JSON text)."""
    _, meta = srv.query("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
                        "WHERE TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (name,))
    shown = {c: (t.decode() if isinstance(t, bytes) else t) for c, t in meta}
    types = {}
    for c, t in shown.items():
        want = want_types.get(c, "")
        if t == "longtext" and want.startswith(("struct", "array", "map")):
            types[c] = want  # nested columns are JSON text, compared through compare.nested
        elif t.startswith("decimal"):
            types[c] = t.replace(" ", "")
        else:
            types[c] = _MYSQL.get(t, "mysql " + t)
    names, rows = engines.lakesql(srv, name, cols)
    return {c: types.get(c, "absent") for c in names}, rows


def _declare(cols, types, key):
    """The column list of an upsert sink over an existing table: its own types, KEY the key."""
    out = []
    for c in cols:
        t = types[c]
        if t.startswith(("struct", "array", "map")):
            raise RuntimeError("CREATE SINK cannot declare nested column %s" % c)
        out.append("`%s` %s%s" % (c, _TO_MYSQL.get(t, t), " NOT NULL" if c == key else ""))
    out.append("PRIMARY KEY (`%s`)" % key)
    return ", ".join(out)


_TO_MYSQL = {"string": "LONGTEXT", "timestamp": "TIMESTAMP(6)", "timestamp_ntz": "DATETIME(6)",
             "binary": "LONGBLOB", "int": "INT"}


def _partition_clause(path):
    from deltalake import DeltaTable
    p = DeltaTable(path).metadata().partition_columns
    return "PARTITION BY (%s)" % ", ".join("`%s`" % c for c in p) if p else ""


def _insert(srv, name, cols, types, rows):
    """One INSERT of ROWS (one epoch, one commit)."""
    ph = "(" + ", ".join(["%s"] * len(cols)) + ")"
    args = [_sqlval(v, types[c]) for r in rows for c, v in zip(cols, r)]
    srv.exec("INSERT INTO `%s` (%s) VALUES %s" % (name, ", ".join("`%s`" % c for c in cols),
                                                  ", ".join([ph] * len(rows))), args)


def _sqlval(v, typ):
    if v is None:
        return None
    if typ.startswith(("struct", "array", "map")):
        return _json(v)
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(UTC).replace(tzinfo=None)
        return v.isoformat(sep=" ", timespec="microseconds")
    return v


def _json(v):
    """JSON text of a nested value, decimals with their exact digits."""
    if v is None:
        return "null"
    if isinstance(v, dict):
        return "{" + ", ".join("%s: %s" % (json.dumps(str(k)), _json(x)) for k, x in v.items()) + "}"
    if hasattr(v, "asDict"):  # a Spark Row (a tuple too)
        return _json(v.asDict(recursive=False))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_json(x) for x in v) + "]"
    if isinstance(v, D):
        return format(v, "f")
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(UTC).replace(tzinfo=None)
        return json.dumps(v.isoformat(sep=" ", timespec="microseconds"))
    if isinstance(v, datetime.date):
        return json.dumps(v.isoformat())
    return json.dumps(v)


def _cross_checkpoint(srv, name, path, cols, types, write, start):
    """Appends one row a commit up to the next multiple of 10, where lakesql checkpoints
    (the table's interval, 10 when unset), and waits for that checkpoint; returns the rows."""
    target = (_version(path) // 10 + 1) * 10
    rows = []
    while _version(path) < target:
        r = write(start + 10 * len(rows))[:1]
        _insert(srv, name, cols, types, r)
        rows += r
    cp = os.path.join(path, "_delta_log", "%020d.checkpoint.parquet" % target)
    deadline = time.time() + 60
    while not os.path.exists(cp):
        if time.time() > deadline:
            raise RuntimeError("lakesql wrote no checkpoint at version %d" % target)
        time.sleep(0.2)
    return rows


def _version(path):
    from deltalake import DeltaTable
    return DeltaTable(path).version()


def _check_feed(ledger, tag, path, version, cols, types, appended):
    """Spark's change feed from VERSION on (lakesql's append) must be exactly the appended rows, as inserts."""
    df = (sparkmod.session().read.format("delta").option("readChangeFeed", "true")
          .option("startingVersion", version).load(path))
    got = [tuple(r[c] for c in cols) + (r["_change_type"],) for r in df.collect()]
    want = [tuple(r) + ("insert",) for r in appended]
    ledger.rows(tag, "spark", want, got, [types[c] for c in cols] + ["string"], what="change rows")


def _expect_refused(ledger, srv, name, cols, types, rows, feature, sink=None):
    """lakesql's INSERT into SINK (NAME) must be 1235 naming FEATURE."""
    row = tuple(rows[0]) if rows else None
    try:
        _insert(srv, sink or name, cols, types, [row])
    except pymysql.err.MySQLError as e:
        msg = str(e.args[1]) if len(e.args) > 1 else str(e)
        if error_code(e) == 1235 and feature in msg:
            ledger.refused(name, "lakesql", feature)
        else:
            ledger.wrong(name, "lakesql", "write: expected 1235 naming %s, got %s" % (feature, e))
        return
    ledger.wrong(name, "lakesql", "write was accepted; expected 1235 naming %s" % feature)


# ---- the tables ---------------------------------------------------------

def _sp(sql):
    sparkmod.session().sql(sql)


def spark_partitioned(s, path):
    """Partitioned, a CREATE and 10 INSERTs: version 10 is a Spark checkpoint."""
    _sp("CREATE TABLE delta.`%s` (id BIGINT NOT NULL, p STRING, v DOUBLE, note STRING) USING delta PARTITIONED BY (p)" % path)
    parts = ["a", "b c", "x/y=z", "ünï", None]
    for i in range(10):
        _sp("INSERT INTO delta.`%s` VALUES (%d, %s, %s, 'n%d')"
            % (path, i, "NULL" if parts[i % 5] is None else "'%s'" % parts[i % 5], i * 1.5, i))
    if not os.path.exists(os.path.join(path, "_delta_log", "00000000000000000010.checkpoint.parquet")):
        raise RuntimeError("Spark wrote no checkpoint at version 10")
    return "spark", "id"


def partitioned_rows(start):
    return [(start, "b c", 0.25, "lakesql"), (start + 1, None, -1.0, None), (start + 2, "new", 2.0, "x")]


_NESTED_DDL = ("id BIGINT NOT NULL, ntz TIMESTAMP_NTZ, ts TIMESTAMP, d DATE, dec DECIMAL(38,18), "
               "s STRUCT<a: INT, b: STRING, c: DECIMAL(38,18)>, arr ARRAY<INT>, m MAP<STRING, BIGINT>, "
               "combo ARRAY<STRUCT<k: STRING, vals: ARRAY<DOUBLE>, mm: MAP<STRING, STRUCT<x: INT>>>>, "
               "ms MAP<STRING, ARRAY<STRUCT<t: TIMESTAMP, n: TIMESTAMP_NTZ>>>")


def spark_types(s, path):
    """timestamp_ntz, timestamps before 1970, DECIMAL(38,18), nested types; Spark 4 makes it writer 7."""
    _sp("CREATE TABLE delta.`%s` (%s) USING delta" % (path, _NESTED_DDL))
    _sp("""INSERT INTO delta.`%s` VALUES
      (1, TIMESTAMP_NTZ'1969-07-20 20:17:40.123456', TIMESTAMP'1900-01-01 00:00:00.000001', DATE'1969-12-31',
       12345678901234567890.123456789012345678, named_struct('a', 1, 'b', 'x', 'c', -0.000000000000000001),
       array(1, NULL, 3), map('k', 1L, 'l', NULL),
       array(named_struct('k', 'p', 'vals', array(1.5D, -2.0D), 'mm', map('q', named_struct('x', 7))), NULL),
       map('a', array(named_struct('t', TIMESTAMP'1960-02-29 12:00:00', 'n', TIMESTAMP_NTZ'2024-06-15 10:20:30.000001')))),
      (2, TIMESTAMP_NTZ'2024-02-29 23:59:59.999999', TIMESTAMP'1969-12-31 23:59:59.999999', DATE'0001-01-01',
       -99999999999999999999.999999999999999999, named_struct('a', NULL, 'b', NULL, 'c', NULL),
       array(), map(), array(), map()),
      (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)""" % path)
    return "spark", "id"


def nested_rows(start):
    return [
        (start, datetime.datetime(1950, 5, 6, 7, 8, 9, 10), datetime.datetime(1901, 12, 13, 20, 45, 52, 1),
         datetime.date(1955, 1, 2), D("-1.000000000000000001"),
         {"a": -5, "b": "é\"q", "c": D("3.141592653589793238")}, [7, 8], {"z": -1},
         [{"k": "r", "vals": [], "mm": {}}], {"b": [{"t": datetime.datetime(2000, 1, 1), "n": None}]}),
        (start + 1, datetime.datetime(2030, 1, 1), None, None, D("0.5"), None, None, None, None, None),
    ]


def spark_dv(s, path):
    """Deletion vectors on, rows removed by a Spark DELETE (a DV, not a rewrite)."""
    _sp("CREATE TABLE delta.`%s` (id BIGINT NOT NULL, v STRING) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')" % path)
    _sp("INSERT INTO delta.`%s` SELECT id, concat('v', id) FROM range(20)" % path)
    _sp("DELETE FROM delta.`%s` WHERE id %% 3 = 0" % path)
    if not any(f.startswith("deletion_vector_") for f in os.listdir(path)):
        raise RuntimeError("Spark's DELETE wrote no deletion vector")
    return "spark", "id"


def spark_column_mapping(s, path):
    """Column mapping in name mode, a top-level and a nested column renamed."""
    _sp("CREATE TABLE delta.`%s` (id BIGINT NOT NULL, old_name STRING, s STRUCT<a: INT, b: STRING>) USING delta "
        "TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', "
        "'delta.minWriterVersion' = '5')" % path)
    _sp("INSERT INTO delta.`%s` VALUES (1, 'one', named_struct('a', 1, 'b', 'x')), (2, NULL, NULL)" % path)
    _sp("ALTER TABLE delta.`%s` RENAME COLUMN old_name TO new_name" % path)
    _sp("ALTER TABLE delta.`%s` RENAME COLUMN s.a TO aa" % path)
    _sp("INSERT INTO delta.`%s` VALUES (3, 'three', named_struct('aa', 3, 'b', 'z'))" % path)
    return "spark", "id"


def spark_check_constraint(s, path):
    """A CHECK constraint added by ALTER TABLE: Spark makes the table writer 3."""
    _sp("CREATE TABLE delta.`%s` (id BIGINT NOT NULL, v STRING) USING delta" % path)
    _sp("INSERT INTO delta.`%s` VALUES (1, 'a'), (2, NULL)" % path)
    _sp("ALTER TABLE delta.`%s` ADD CONSTRAINT id_positive CHECK (id > 0)" % path)
    return "spark", "id"


def spark_cdf(s, path):
    """Change data feed on, with an UPDATE and a DELETE (files under _change_data)."""
    _sp("CREATE TABLE delta.`%s` (id BIGINT NOT NULL, v STRING) USING delta "
        "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')" % path)
    _sp("INSERT INTO delta.`%s` SELECT id, concat('v', id) FROM range(8)" % path)
    _sp("UPDATE delta.`%s` SET v = 'updated' WHERE id = 2" % path)
    _sp("DELETE FROM delta.`%s` WHERE id = 5" % path)
    if not os.path.isdir(os.path.join(path, "_change_data")):
        raise RuntimeError("Spark wrote no _change_data folder")
    return "spark", "id"


def column_mapping_rows(start):
    """Rows of spark_column_mapping after its renames: lakesql writes them by physical name."""
    return [(start, "lakesql", {"aa": start, "b": "w"}), (start + 1, None, None)]


def simple_rows(start):
    return [(start, "lakesql"), (start + 1, None), (start + 2, "z")]


def deltars_partitioned(s, path):
    """write_deltalake partitioned, three commits, then create_checkpoint()."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("p", pa.string()),
                        ("v", pa.float64()), ("note", pa.string())])
    for i in range(3):
        t = pa.table({"id": [i * 2, i * 2 + 1], "p": ["a b", None if i else "c0"],
                      "v": [i + 0.5, -i * 1.0], "note": ["r%d" % i, None]}, schema=schema)
        write_deltalake(path, t, partition_by=["p"], mode="append")
    DeltaTable(path).create_checkpoint()
    return "delta-rs", "id"


def deltars_types(s, path):
    """DeltaTable.create with timestamp_ntz, timestamps before 1970, DECIMAL(38,18), nested types."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake
    tsu = pa.timestamp("us", tz="UTC")
    schema = pa.schema([
        # id stays nullable: delta-rs puts a NOT NULL column in a writer 7 table without
        # the invariants feature, which Spark 4 then refuses to read.
        ("id", pa.int64()), ("ntz", pa.timestamp("us")), ("ts", tsu),
        ("d", pa.date32()), ("dec", pa.decimal128(38, 18)),
        ("s", pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.decimal128(38, 18))])),
        ("arr", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.int64())),
        ("combo", pa.list_(pa.struct([("k", pa.string()), ("vals", pa.list_(pa.float64())),
                                      ("mm", pa.map_(pa.string(), pa.struct([("x", pa.int32())])))]))),
        ("ms", pa.map_(pa.string(), pa.list_(pa.struct([("t", tsu), ("n", pa.timestamp("us"))])))),
    ])
    DeltaTable.create(path, schema=schema)
    rows = [
        (1, datetime.datetime(1969, 7, 20, 20, 17, 40, 123456), datetime.datetime(1900, 1, 1, 0, 0, 0, 1, UTC),
         datetime.date(1969, 12, 31), D("12345678901234567890.123456789012345678"),
         {"a": 1, "b": "x", "c": D("-0.000000000000000001")}, [1, None, 3], [("k", 1), ("l", None)],
         [{"k": "p", "vals": [1.5, -2.0], "mm": [("q", {"x": 7})]}, None],
         [("a", [{"t": datetime.datetime(1960, 2, 29, 12, tzinfo=UTC), "n": datetime.datetime(2024, 6, 15, 10, 20, 30, 1)}])]),
        (2, None, None, None, None, None, None, None, None, None),
    ]
    cols = [list(c) for c in zip(*rows)]
    write_deltalake(path, pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, schema)], schema=schema),
                    mode="append")
    return "delta-rs", "id"


# (name, make(spark, path) -> (reference engine, key), write): write is a
# function of a start id giving rows to write, a feature name whose refusal
# is expected, or None.
CASES = [
    ("spark_partitioned", spark_partitioned, partitioned_rows),
    ("spark_types", spark_types, nested_rows),
    ("spark_dv", spark_dv, simple_rows),
    ("spark_column_mapping", spark_column_mapping, lambda start: column_mapping_rows(start)),
    ("spark_check_constraint", spark_check_constraint, simple_rows),
    ("spark_cdf", spark_cdf, simple_rows),
    ("deltars_partitioned", deltars_partitioned, partitioned_rows),
    ("deltars_types", deltars_types, nested_rows),
]

# Tables whose appends lakesql writes but whose upserts it refuses, naming the feature.
UPSERT_REFUSED = {"spark_cdf": "changeDataFeed"}

# Tables where Spark deletes a lakesql-written row at the end (with a deletion vector).
SPARK_DELETES = {"spark_dv"}
