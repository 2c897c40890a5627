"""Section: the Delta writer table features on tables lakesql creates, judged by Spark and delta-rs.

One `lakesql serve` creates four upsert sinks: `fi` (in_commit_timestamps),
`fr` (row_tracking), `fv` (v2_checkpoints, a checkpoint every 2 commits) and
`fa` (all three). Each takes inserts, upserts and changelog deletes over
several transactions. Then:

1. lakesql, Spark and delta-rs read the rows a model says;
2. the log: every commit of fi and fa starts with commitInfo carrying an
   increasing inCommitTimestamp, and Spark's DESCRIBE HISTORY shows those
   times; every checkpoint of fv and fa is UUID-named and classic ones
   there are none;
3. row ids: Spark's _metadata.row_id and row_commit_version of fr and fa
   are each row's baseRowId + its index in its file and its file's
   defaultRowCommitVersion, read from lakesql's log and the files;
4. Spark appends a row to each table, and lakesql writes after it: its
   next commit's inCommitTimestamp is above Spark's, its row ids above
   Spark's high-water mark; all three engines read the rows again.
"""
import glob
import json
import os

from .. import engines, paths
from .. import spark as sparkmod
from ..server import Server

COLS = ["id", "v"]
TYPES = ["bigint", "string"]
SINKS = {
    "fi": "in_commit_timestamps = true",
    "fr": "row_tracking = true, checkpoint_interval = 100",
    "fv": "v2_checkpoints = true, checkpoint_interval = 2",
    "fa": "in_commit_timestamps = true, row_tracking = true, v2_checkpoints = true, checkpoint_interval = 3",
}


def _log(path):
    """The commits of the table at path, in order: lists of actions."""
    out = []
    for f in sorted(glob.glob(os.path.join(path, "_delta_log", "*.json"))):
        if os.path.basename(f)[:20].isdigit() and os.path.basename(f)[20:] == ".json":
            with open(f) as fh:
                out.append([json.loads(line) for line in fh if line.strip()])
    return out


def _live_adds(commits):
    live = {}
    for actions in commits:
        for a in actions:
            if "add" in a:
                live[a["add"]["path"]] = a["add"]
            elif "remove" in a:
                live.pop(a["remove"]["path"], None)
    return live


def _expected_row_ids(path):
    """id -> (row id, row commit version) from the log's live adds and the files' row order."""
    import pyarrow.parquet as pq
    from urllib.parse import unquote
    out = {}
    for p, add in _live_adds(_log(path)).items():
        ids = pq.read_table(os.path.join(path, unquote(p)), columns=["id"]).column("id").to_pylist()
        for i, k in enumerate(ids):
            out[k] = (add["baseRowId"] + i, add["defaultRowCommitVersion"])
    return out


def _icts(path):
    out = []
    for v, actions in enumerate(_log(path)):
        first = actions[0].get("commitInfo") if actions else None
        out.append(None if first is None else first.get("inCommitTimestamp"))
    return out


def _hwm(path):
    mark = -1
    for actions in _log(path):
        for a in actions:
            d = a.get("domainMetadata")
            if d and d["domain"] == "delta.rowTracking":
                mark = json.loads(d["configuration"])["rowIdHighWaterMark"]
    return mark


def run(ledger):
    d = paths.workdir("features_delta")
    srv = Server(d).start()
    model = {t: {} for t in SINKS}
    try:
        for t, opts in SINKS.items():
            srv.exec("CREATE SINK %s INTO DELTA 'lake/%s' (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(16)) "
                     "WITH (mode = 'upsert', auto_compact = false, %s)" % (t, t, opts))
        for e in range(1, 6):
            for t in SINKS:
                rows = [(10 * e + i, "e%d" % e) for i in range(3)] + [(e, "u%d" % e)]
                srv.exec("INSERT INTO %s VALUES %s" % (t, ", ".join("(%d, '%s')" % r for r in rows)))
                for k, v in rows:
                    model[t][k] = v
                if e % 2 == 0:
                    gone = 10 * (e - 1)
                    srv.exec("INSERT INTO %s (_op, id, v) VALUES ('D', %d, NULL)" % (t, gone))
                    model[t].pop(gone, None)
        path = {t: os.path.join(srv.data, "lake", t) for t in SINKS}
        _read(ledger, srv, model, path, "written")
        for t in ("fi", "fa"):
            with ledger.guard(t, "log"):
                icts = _icts(path[t])
                ok = all(x is not None for x in icts) and all(b > a for a, b in zip(icts, icts[1:]))
                ledger.check(t, "log", ok, "inCommitTimestamp first and increasing in %d commits" % len(icts))
            with ledger.guard(t, "spark"):
                hist = sparkmod.session().sql("DESCRIBE HISTORY delta.`%s`" % path[t]).select("version", "timestamp").collect()
                got = {r[0]: int(round(r[1].timestamp() * 1000)) for r in hist}
                want = {v: x for v, x in enumerate(_icts(path[t]))}
                ledger.check(t, "spark", got == want, "DESCRIBE HISTORY shows the in-commit timestamps (%d versions)" % len(got))
        for t in ("fv", "fa"):
            with ledger.guard(t, "log"):
                cps = [os.path.basename(f) for f in glob.glob(os.path.join(path[t], "_delta_log", "*.checkpoint*.parquet"))]
                classic = [f for f in cps if f.endswith(".checkpoint.parquet")]
                ledger.check(t, "log", cps and not classic, "%d UUID-named checkpoints, no classic one (%s)" % (len(cps), classic))
        for t in ("fr", "fa"):
            _row_ids(ledger, t, path[t])

        # Spark writes after lakesql, then lakesql after Spark.
        for t in SINKS:
            with ledger.guard(t, "spark"):
                s = sparkmod.session()
                s.sql("INSERT INTO delta.`%s` VALUES (9000, 'spark')" % path[t])
                model[t][9000] = "spark"
                ledger.right(t, "spark", "appended")
        spark_ict = {t: _icts(path[t])[-1] for t in ("fi", "fa")}
        spark_hwm = {t: _hwm(path[t]) for t in ("fr", "fa")}
        for t in SINKS:
            srv.exec("INSERT INTO %s VALUES (9001, 'after')" % t)
            model[t][9001] = "after"
        for t in ("fi", "fa"):
            with ledger.guard(t, "log"):
                ours = _icts(path[t])[-1]
                ledger.check(t, "log", spark_ict[t] is not None and ours > spark_ict[t],
                             "lakesql's inCommitTimestamp %s after Spark's %s" % (ours, spark_ict[t]))
        for t in ("fr", "fa"):
            with ledger.guard(t, "log"):
                last = [a["add"] for a in _log(path[t])[-1] if "add" in a]
                ok = last and all(a["baseRowId"] > spark_hwm[t] for a in last)
                ledger.check(t, "log", ok, "row ids above Spark's high-water mark %d" % spark_hwm[t])
            _row_ids(ledger, t, path[t])
        _read(ledger, srv, model, path, "after Spark")
    finally:
        srv.stop()


def _read(ledger, srv, model, path, what):
    for t in SINKS:
        want = sorted(model[t].items())
        with ledger.guard(t, "lakesql"):
            _, got = srv.query("SELECT id, v FROM %s" % t)
            ledger.rows(t, "lakesql", want, [tuple(r) for r in got], TYPES, what=what + " rows")
        with ledger.guard(t, "spark"):
            _, got = engines.spark_delta(path[t], columns=COLS)
            ledger.rows(t, "spark", want, got, TYPES, what=what + " rows")
        with ledger.guard(t, "delta-rs"):
            _, got = engines.deltars(path[t], columns=COLS)
            ledger.rows(t, "delta-rs", want, got, TYPES, what=what + " rows")


def _row_ids(ledger, t, path):
    with ledger.guard(t, "spark"):
        df = sparkmod.session().read.format("delta").load(path).select("id", "_metadata.row_id", "_metadata.row_commit_version")
        got = {r[0]: (r[1], r[2]) for r in df.collect()}
        want = _expected_row_ids(path)
        bad = [(k, got.get(k), w) for k, w in want.items() if got.get(k) != w]
        ledger.check(t, "spark", not bad and len(got) == len(want),
                     "_metadata.row_id and row_commit_version of %d rows as lakesql assigned them%s" % (len(want), " " + str(bad[:3]) if bad else ""))
