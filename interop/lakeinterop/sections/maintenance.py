"""Section 4: other engines maintain the tables lakesql writes, and lakesql keeps writing.

One long-running `lakesql serve` writes an append sink and an upsert sink
(exactly-once, with changelog deletes), each epoch named with
`SET lakesql_epoch = N`, and reads both (so that it holds their snapshots).
Then, with that same server still running:

1. Spark runs OPTIMIZE, then VACUUM ... RETAIN 0 HOURS (retention check off),
   then writes a checkpoint of its own;
2. lakesql reads (its kept snapshot names files VACUUM deleted), replays
   old epochs (which must write nothing and say so with note 1105) and
   writes new ones into the compacted files; its SHOW SINK HISTORY lists
   Spark's OPTIMIZE and VACUUM, and its own OPTIMIZE SINK and VACUUM SINK
   run on the table Spark maintained (all three engines read the rows);
3. delta-rs runs optimize.compact() and vacuum(retention_hours=0), writes a
   checkpoint and deletes the log before it (cleanup_metadata with
   delta.logRetentionDuration 0), and step 2 is repeated;
4. the server is restarted and reads and replays once more;
5. Spark's CALL system.rewrite_data_files and expire_snapshots on an
   Iceberg append sink and upsert sink lakesql writes, after which lakesql
   keeps writing exactly-once (replays of old epochs write nothing).

The sinks are created with auto_compact = false, so that each OPTIMIZE
finds the small files the epochs left.

After each step lakesql's SELECT, Spark and delta-rs must each read
exactly the rows a model of the epochs says.
"""
import glob
import os
import re

from .. import engines, paths
from ..server import Server

APPEND_COLS = ["id", "v"]
APPEND_TYPES = ["bigint", "string"]
UPSERT_COLS = ["id", "v", "n"]
UPSERT_TYPES = ["bigint", "string", "bigint"]


class Model:
    """What the two tables must hold: the epochs applied in order."""

    def __init__(self):
        self.append = []
        self.upsert = {}
        self.epoch = 0

    def rows(self, which):
        if which == "ma":
            return list(self.append)
        return [(k,) + v for k, v in self.upsert.items()]


def epoch_rows(e):
    """Epoch e's writes: append rows; upserts (two new keys, and every other epoch an old key
    again, so that the upsert table keeps several files for OPTIMIZE to compact); deleted keys."""
    app = [(100 * e + i, "e%d-%d" % (e, i)) for i in range(3)]
    ups = [(2 * e, "e%d" % e, e * 10), (2 * e + 1, "e%d" % e, e * 10 + 1)]
    if e % 2 == 0 and e > 2:
        ups.append((e - 1, "e%d-again" % e, e * 10 + 2))
    dels = [2 * e - 4] if e % 3 == 0 else []
    return app, ups, dels


def write_epoch(conn, e, model=None, sinks=("ma", "mu")):
    """Writes epoch e to both sinks (append, upsert) in one transaction; returns the COMMIT's warnings."""
    app, ups, dels = epoch_rows(e)
    with conn.cursor() as c:
        c.execute("BEGIN")
        c.execute("SET lakesql_epoch = %d" % e)
        c.execute("INSERT INTO %s VALUES " % sinks[0] + ", ".join(["(%s, %s)"] * len(app)),
                  [x for r in app for x in r])
        vals = [(k, v, n, "U") for k, v, n in ups] + [(k, None, None, "D") for k in dels]
        c.execute("INSERT INTO %s (id, v, n, _op) VALUES " % sinks[1] + ", ".join(["(%s, %s, %s, %s)"] * len(vals)),
                  [x for r in vals for x in r])
        c.execute("COMMIT")
        c.execute("SHOW WARNINGS")
        warnings = list(c.fetchall())
    if model is not None:
        model.append.extend(app)
        for k, v, n in ups:
            model.upsert[k] = (v, n)
        for k in dels:
            model.upsert.pop(k, None)
        model.epoch = e
    return warnings


def replay(ledger, srv, step, e, sinks=("ma", "mu")):
    """Replays epoch e into both sinks with rows of its own: nothing may land, and the note must say so."""
    conn = srv.connect()
    try:
        with conn.cursor() as c:
            c.execute("SET lakesql_epoch = %d" % e)
            n = c.execute("INSERT INTO %s VALUES (%%s, %%s)" % sinks[0], (999000 + e, "replay"))
            c.execute("SHOW WARNINGS")
            w1 = list(c.fetchall())
            c.execute("SET lakesql_epoch = %d" % e)
            m = c.execute("INSERT INTO %s (id, v, n) VALUES (%%s, %%s, %%s)" % sinks[1], (1, "replay", -1))
            c.execute("SHOW WARNINGS")
            w2 = list(c.fetchall())
        ok = n == 0 and m == 0 and _noted(w1) and _noted(w2)
        ledger.check("%s %s replay" % (step, "/".join(sinks)), "lakesql", ok,
                     "replay of epoch %d: %d and %d rows affected, notes %s / %s" % (e, n, m, w1, w2))
    finally:
        conn.close()


def _noted(warnings):
    return any(w[1] == 1105 and "replay wrote nothing" in str(w[2]) for w in warnings)


def read_all(ledger, srv, step, model, data, others=True, spark=True):
    """lakesql (and, with others, Spark and delta-rs) read both tables; each must hold the model's rows."""
    for sink, cols, types in (("ma", APPEND_COLS, APPEND_TYPES), ("mu", UPSERT_COLS, UPSERT_TYPES)):
        want = model.rows(sink)
        path = os.path.join(data, "lake", sink)
        table = "%s %s" % (step, sink)
        with ledger.guard(table, "lakesql"):
            _, got = engines.lakesql(srv, sink, cols)
            ledger.rows(table, "lakesql", want, got, types)
        if not others:
            continue
        if spark:
            with ledger.guard(table, "spark"):
                t, got = engines.spark_delta(path, columns=cols)
                if ledger.check(table, "spark", [t[c] for c in cols] == types, "types %s" % t):
                    ledger.rows(table, "spark", want, got, types)
        with ledger.guard(table, "delta-rs"):
            t, got = engines.deltars(path, columns=cols)
            if ledger.check(table, "delta-rs", [t[c] for c in cols] == types, "types %s" % t):
                ledger.rows(table, "delta-rs", want, got, types)


def _data_files(path):
    return sorted(os.path.relpath(p, path) for p in glob.glob(os.path.join(path, "**", "*.parquet"), recursive=True)
                  if "_delta_log" not in p)


def _active(path):
    from deltalake import DeltaTable
    return sorted(os.path.relpath(u.removeprefix("file://"), path) for u in DeltaTable(path).file_uris())


def _checkpoints_by(path, engine):
    """Versions that have a checkpoint and whose commit ENGINE (an engineInfo prefix) made."""
    out = []
    for cp in glob.glob(os.path.join(path, "_delta_log", "*.checkpoint.parquet")):
        v = int(os.path.basename(cp).split(".")[0])
        with open(os.path.join(path, "_delta_log", "%020d.json" % v)) as f:
            if ('"engineInfo":"%s' % engine) in f.read():
                out.append(v)
    return sorted(out)


def _spark_vacuum_conf():
    """The shared session, set for VACUUM RETAIN 0 HOURS (which the retention check refuses)."""
    from .. import spark as sparkmod
    s = sparkmod.session()
    s.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    return s


def spark_maintenance(ledger, data):
    s = _spark_vacuum_conf()
    for sink in ("ma", "mu"):
        path = os.path.join(data, "lake", sink)
        table = "spark-maintained %s" % sink
        with ledger.guard(table, "spark"):
            before = _data_files(path)
            m = s.sql("OPTIMIZE delta.`%s`" % path).collect()[0]
            metrics = m["metrics"]
            s.sql("VACUUM delta.`%s` RETAIN 0 HOURS" % path).collect()
            after = _data_files(path)
            active = _active(path)
            ledger.check(table, "spark",
                         metrics["numFilesRemoved"] > 1 and after == active and len(after) < len(before),
                         "OPTIMIZE compacted %d files into %d; VACUUM RETAIN 0 HOURS left %d of %d data files, "
                         "the %d active ones" % (metrics["numFilesRemoved"], metrics["numFilesAdded"],
                                                 len(after), len(before), len(active)))
            # OPTIMIZE and VACUUM START/END are versions 9 to 11: Spark writes the checkpoint of 10.
            cps = _checkpoints_by(path, "Apache-Spark")
            ledger.check(table, "spark", bool(cps), "checkpoints Spark wrote: versions %s" % cps)


def deltars_maintenance(ledger, data):
    from deltalake import DeltaTable
    for sink in ("ma", "mu"):
        path = os.path.join(data, "lake", sink)
        table = "delta-rs-maintained %s" % sink
        with ledger.guard(table, "delta-rs"):
            before = _data_files(path)
            dt = DeltaTable(path)
            m = dt.optimize.compact()
            dt = DeltaTable(path)
            gone = dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
            after = _data_files(path)
            active = _active(path)
            ledger.check(table, "delta-rs", m["numFilesRemoved"] > 1 and after == active,
                         "optimize.compact() compacted %d files into %d; vacuum removed %d, left %d of %d "
                         "data files, the %d active ones" % (m["numFilesRemoved"], m["numFilesAdded"], len(gone),
                                                             len(after), len(before), len(active)))
            # A checkpoint of delta-rs' own, and the log before it deleted: the version
            # lakesql's kept snapshot stands on is gone, so it must read the checkpoint.
            dt = DeltaTable(path)
            dt.alter.set_table_properties({"delta.logRetentionDuration": "interval 0 seconds"})
            dt = DeltaTable(path)
            dt.create_checkpoint()
            dt.cleanup_metadata()
            # (Spark's .crc files stay: delta-rs deletes only commits and checkpoints.)
            log = sorted(f for f in os.listdir(os.path.join(path, "_delta_log"))
                         if re.fullmatch(r"\d{20}\.(json|checkpoint\.parquet)", f))
            v = dt.version()
            ledger.check(table, "delta-rs", log == ["%020d.checkpoint.parquet" % v, "%020d.json" % v],
                         "checkpoint at version %d, the log before it cleaned up: %s" % (v, log))


def run(ledger):
    d = paths.workdir("maintenance")
    model = Model()
    srv = Server(d).start()
    try:
        srv.exec("CREATE SINK ma INTO DELTA 'lake/ma' (id BIGINT NOT NULL, v VARCHAR(16), PRIMARY KEY (id)) "
                 "WITH (auto_compact = false)")
        srv.exec("CREATE SINK mu INTO DELTA 'lake/mu' (id BIGINT NOT NULL, v VARCHAR(16), n BIGINT, "
                 "PRIMARY KEY (id)) WITH (mode = 'upsert', auto_compact = false)")
        conn = srv.connect()
        for e in range(1, 9):
            write_epoch(conn, e, model)
        read_all(ledger, srv, "written", model, srv.data, others=False)

        spark_maintenance(ledger, srv.data)
        read_all(ledger, srv, "after Spark", model, srv.data, others=False)
        replay(ledger, srv, "after Spark", 3)
        replay(ledger, srv, "after Spark", 8)
        for e in range(9, 13):
            write_epoch(conn, e, model)
        read_all(ledger, srv, "after Spark, written", model, srv.data, spark=False)
        spark_history(ledger, srv)
        ours_after_spark(ledger, srv)
        read_all(ledger, srv, "after Spark, ours", model, srv.data)
        replay(ledger, srv, "after Spark, ours", 12)
        # Our OPTIMIZE left one file per table: new epochs give delta-rs
        # small files to compact again.
        for e in range(13, 16):
            write_epoch(conn, e, model)

        deltars_maintenance(ledger, srv.data)
        read_all(ledger, srv, "after delta-rs", model, srv.data, others=False)
        replay(ledger, srv, "after delta-rs", 5)
        replay(ledger, srv, "after delta-rs", 15)
        for e in range(16, 19):
            write_epoch(conn, e, model)
        conn.close()
        # Spark reads once more at the end, not here: it costs seconds a read.
        read_all(ledger, srv, "after delta-rs, written", model, srv.data, spark=False)
        srv.stop()

        srv = Server(d).start()
        read_all(ledger, srv, "restarted", model, srv.data, others=False)
        replay(ledger, srv, "restarted", 18)
        conn = srv.connect()
        write_epoch(conn, 19, model)
        conn.close()
        read_all(ledger, srv, "restarted, written", model, srv.data)
        staged_vacuum(ledger, srv)
        spark_iceberg_maintenance(ledger, srv)
    finally:
        srv.stop()


def spark_history(ledger, srv):
    """lakesql's SHOW SINK HISTORY lists the OPTIMIZE and VACUUM Spark committed."""
    for sink in ("ma", "mu"):
        table = "spark-maintained %s, history" % sink
        with ledger.guard(table, "lakesql"):
            names, rows = srv.query("SHOW SINK HISTORY %s" % sink)
            ops = [dict(zip(names, r))["Operation"] for r in rows]
            ledger.check(table, "lakesql", {"OPTIMIZE", "VACUUM START", "VACUUM END"} <= set(ops),
                         "operations, newest first: %s" % ops[:10])


def ours_after_spark(ledger, srv):
    """lakesql's own OPTIMIZE SINK and VACUUM SINK on the tables Spark maintained."""
    with ledger.guard("SET lakesql_vacuum_retention_check = OFF", "lakesql"):
        srv.exec("SET lakesql_vacuum_retention_check = OFF")
    for sink in ("ma", "mu"):
        path = os.path.join(srv.data, "lake", sink)
        table = "spark-maintained %s, our OPTIMIZE" % sink
        with ledger.guard(table, "lakesql"):
            before = _active(path)
            names, rows = srv.query("OPTIMIZE SINK %s" % sink)
            r = dict(zip(names, rows[0]))
            after = _active(path)
            ledger.check(table, "lakesql", r["Version"] is not None and r["Files_removed"] > 1 and len(after) < len(before),
                         "%s; %d live files, then %d" % (r, len(before), len(after)))
        table = "spark-maintained %s, our VACUUM" % sink
        with ledger.guard(table, "lakesql"):
            before = _data_files(path)
            names, rows = srv.query("VACUUM SINK %s RETAIN 0 HOURS" % sink)
            r = dict(zip(names, rows[0]))
            after = _data_files(path)
            ledger.check(table, "lakesql", after == _active(path) and len(after) < len(before),
                         "%s; %d data files, then %d, the live ones" % (r, len(before), len(after)))


def spark_iceberg_maintenance(ledger, srv):
    """Spark's rewrite_data_files and expire_snapshots on lakesql's Iceberg sinks; lakesql keeps writing."""
    from .. import spark as sparkmod
    srv.exec("CREATE SINK mia INTO ICEBERG 'mt.mia' (id BIGINT NOT NULL, v VARCHAR(16), PRIMARY KEY (id)) "
             "WITH (auto_compact = false)")
    srv.exec("CREATE SINK miu INTO ICEBERG 'mt.miu' (id BIGINT NOT NULL, v VARCHAR(16), n BIGINT, "
             "PRIMARY KEY (id)) WITH (mode = 'upsert', auto_compact = false)")
    model = Model()
    conn = srv.connect()
    for e in range(1, 7):
        write_epoch(conn, e, model, ("mia", "miu"))
    conn.close()
    s = sparkmod.session()
    sparkmod.iceberg_sqlite_catalog("lakesql", srv.data)
    for sink in ("mia", "miu"):
        table = "spark-maintained %s" % sink
        with ledger.guard(table, "spark"):
            rw = s.sql("CALL lakesql.system.rewrite_data_files(table => 'mt.%s', "
                       "options => map('min-input-files', '2', 'delete-file-threshold', '1'))" % sink).collect()[0]
            ex = s.sql("CALL lakesql.system.expire_snapshots(table => 'mt.%s', "
                       "older_than => current_timestamp(), retain_last => 1)" % sink).collect()[0]
            snaps = s.sql("SELECT count(*) FROM lakesql.mt.%s.snapshots" % sink).collect()[0][0]
            ledger.check(table, "spark", rw["rewritten_data_files_count"] > 1 and snaps == 1,
                         "rewrite_data_files rewrote %d files into %d; expire_snapshots deleted %d data files, "
                         "%d manifest lists; %d snapshot left" % (
                             rw["rewritten_data_files_count"], rw["added_data_files_count"],
                             ex["deleted_data_files_count"], ex["deleted_manifest_lists_count"], snaps))
    ice_read(ledger, srv, "spark-maintained", model)
    for e in (3, 6):
        replay(ledger, srv, "spark-maintained", e, ("mia", "miu"))
    conn = srv.connect()
    for e in range(7, 9):
        write_epoch(conn, e, model, ("mia", "miu"))
    conn.close()
    ice_read(ledger, srv, "spark-maintained, written", model, spark=True)


def ice_read(ledger, srv, step, model, spark=False):
    from .. import spark as sparkmod
    for sink, which, cols, types in (("mia", "ma", APPEND_COLS, APPEND_TYPES), ("miu", "mu", UPSERT_COLS, UPSERT_TYPES)):
        table = "%s %s" % (step, sink)
        with ledger.guard(table, "lakesql"):
            _, got = engines.lakesql(srv, sink, cols)
            ledger.rows(table, "lakesql", model.rows(which), got, types)
        if spark:
            with ledger.guard(table, "spark"):
                sparkmod.drop_catalogs()
                got = [tuple(r) for r in sparkmod.session().sql(
                    "SELECT %s FROM lakesql.mt.%s" % (", ".join(cols), sink)).collect()]
                ledger.rows(table, "spark", model.rows(which), got, types)


def staged_vacuum(ledger, srv):
    """A vacuum with retention 0 deletes the files an open epoch has staged: COMMIT must fail,
    land nothing, and the same epoch sent again must land whole.

    Delta's own docs warn that a retention below the writers' longest transaction loses
    their files; lakesql stages an epoch's buffer as files in the table's folder once
    flush_rows is reached, so this is that case. delta-rs' full vacuum (which, as Spark's,
    deletes files the log does not name) does it here: Spark's VACUUM costs far more.
    """
    from deltalake import DeltaTable
    from ..server import error_code
    path = os.path.join(srv.data, "lake", "mf")
    table = "vacuum mid-epoch mf"
    srv.exec("CREATE SINK mf INTO DELTA 'lake/mf' (id BIGINT NOT NULL, v VARCHAR(16)) WITH (flush_rows = 2)")
    rows = [(i, "r%d" % i) for i in range(6)]
    # Two statements: a due flush stages the buffer before the next batch is taken.
    ins = "INSERT INTO mf VALUES " + ", ".join(["(%s, %s)"] * 3)
    halves = [[x for r in rows[:3] for x in r], [x for r in rows[3:] for x in r]]
    conn = srv.connect()
    try:
        with ledger.guard(table, "lakesql"):
            with conn.cursor() as c:
                c.execute("BEGIN")
                c.execute("SET lakesql_epoch = 1")
                for h in halves:
                    c.execute(ins, h)
                staged = _data_files(path)
                DeltaTable(path).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False,
                                        full=True)
                left = _data_files(path)
                err = None
                try:
                    c.execute("COMMIT")
                except Exception as e:
                    err = e
            _, got = engines.lakesql(srv, "mf", ["id", "v"])
            ledger.check(table, "lakesql", bool(staged) and not left and err is not None and not got,
                         "%d files staged, %d left after VACUUM; COMMIT failed with %s (%s); %d rows landed"
                         % (len(staged), len(left), error_code(err), str(err)[:300], len(got)))
        with ledger.guard(table + ", sent again", "lakesql"):
            with conn.cursor() as c:
                c.execute("BEGIN")
                c.execute("SET lakesql_epoch = 1")
                for h in halves:
                    c.execute(ins, h)
                c.execute("COMMIT")
            _, got = engines.lakesql(srv, "mf", ["id", "v"])
            ledger.rows(table + ", sent again", "lakesql", rows, got, APPEND_TYPES)
        with ledger.guard(table + ", sent again", "delta-rs"):
            _, got = engines.deltars(path, columns=["id", "v"])
            ledger.rows(table + ", sent again", "delta-rs", rows, got, APPEND_TYPES)
    finally:
        conn.close()
