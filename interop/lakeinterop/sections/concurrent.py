"""Section 3: lakesql and delta-rs append to one Delta table at the same time.

Once on the local disk, once on versitygw (S3). lakesql writes 20 autocommit
INSERTs and 5 two-statement transactions through one connection; two
delta-rs threads append 10 times each (the GIL is released in delta-rs'
Rust code, so the commits race for real). Then:

- the log: versions 0..N, each commit file present, no gap, N = the number
  of commits made; lakesql's epochs (its `txn` versions) 1..25, each once;
- the rows: every row, tagged with its writer and a unique id, exactly once,
  read by lakesql's SELECT, delta-rs and Spark.

On S3, delta-rs 1.x commits with the default log store (put-if-absent
through object_store); `aws_conditional_put = etag` makes that an S3
`If-None-Match: *` put (delta-rs 1.x has no other locking provider: its
DynamoDB one is gone). Spark has no S3 jars here, so it reads the table
from versitygw's posix folder, where the objects are plain files.
"""
import glob
import json
import os
import random
import re
import threading
import time

import pyarrow as pa

from .. import engines, paths
from ..server import Server
from .concurrent_gw import Versitygw

LAKESQL_AUTOCOMMIT = 20
LAKESQL_TXNS = 5
DELTARS_THREADS = 2
DELTARS_APPENDS = 10  # per thread
COLS = ["id", "writer", "n"]
TYPES = ["bigint", "string", "bigint"]
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("writer", pa.string()),
                    pa.field("n", pa.int64())])


def run(ledger):
    local(ledger)
    local_upsert(ledger)
    s3(ledger)


def local(ledger):
    d = paths.workdir("concurrent-local")
    with Server(d) as srv:
        srv.exec("CREATE SINK cl INTO DELTA 'lake/cl' (id BIGINT NOT NULL, writer VARCHAR(16), n BIGINT) "
                 "WITH (auto_compact = false)")
        path = os.path.join(srv.data, "lake", "cl")
        w = race(ledger, "local", srv, "cl", path, None)
        check(ledger, "local", srv, "cl", path, path, None, w)


def s3(ledger):
    d = paths.workdir("concurrent-s3")
    with Versitygw(os.path.join(d, "gw")) as gw:
        so = {"AWS_ENDPOINT_URL": gw.endpoint, "AWS_REGION": "us-east-1",
              "AWS_ACCESS_KEY_ID": gw.env()["AWS_ACCESS_KEY_ID"],
              "AWS_SECRET_ACCESS_KEY": gw.env()["AWS_SECRET_ACCESS_KEY"],
              "AWS_ALLOW_HTTP": "true", "aws_conditional_put": "etag"}
        extra = ["--table-root", "s3://%s/prod" % gw.bucket, "--storage", "endpoint=" + gw.endpoint,
                 "--storage", "path_style=true"]
        with Server(os.path.join(d, "lakesql"), extra=extra, env=gw.env()) as srv:
            srv.exec("CREATE SINK cs INTO DELTA 'cs' (id BIGINT NOT NULL, writer VARCHAR(16), n BIGINT) "
                 "WITH (auto_compact = false)")
            _, rows = srv.query("SHOW SINKS")
            uri = "s3://%s/prod/cs" % gw.bucket
            ledger.check("s3", "lakesql", any(r[2] == uri for r in rows),
                         "sink location %s (SHOW SINKS: %s)" % (uri, rows))
            local_path = os.path.join(gw.bucket_dir(), "prod", "cs")
            w = race(ledger, "s3", srv, "cs", uri, so)
            check(ledger, "s3", srv, "cs", uri, local_path, so, w)


class _Writes:
    def __init__(self):
        self.rows = []        # rows whose write succeeded
        self.failed = []      # (writer, error) of writes that failed
        self.commits = 0      # commits that succeeded
        self.lock = threading.Lock()

    def ok(self, rows, commits=1):
        with self.lock:
            self.rows.extend(rows)
            self.commits += commits

    def fail(self, who, err):
        with self.lock:
            self.failed.append((who, repr(err)[:300]))


def race(ledger, where, srv, sink, uri, storage_options):
    """Runs lakesql's and delta-rs' writers together; returns what each reported written."""
    w = _Writes()
    start = threading.Barrier(1 + DELTARS_THREADS)
    # delta-rs' first commit is slow (it loads the table); lakesql waits for it after its
    # first epoch, and both pace their writes a little, so that their commits interleave.
    first = threading.Event()
    rnd = random.Random(16)

    def lakesql():
        conn = srv.connect()
        try:
            start.wait()
            n = 0
            for i in range(LAKESQL_AUTOCOMMIT + LAKESQL_TXNS):
                if i == 1:
                    first.wait(120)
                time.sleep(rnd.uniform(0, 0.03))
                if i % 5 == 2 and i // 5 < LAKESQL_TXNS:
                    stmts = []
                    for _ in range(2):
                        rows = [(10000 + n + k, "lakesql", n + k) for k in range(2)]
                        n += 2
                        stmts.append(rows)
                    try:
                        with conn.cursor() as c:
                            c.execute("BEGIN")
                            for rows in stmts:
                                c.execute("INSERT INTO `%s` VALUES %s" % (sink, ", ".join(["(%s, %s, %s)"] * len(rows))),
                                          [v for r in rows for v in r])
                            c.execute("COMMIT")
                        w.ok([r for rows in stmts for r in rows])
                    except Exception as e:
                        w.fail("lakesql txn", e)
                else:
                    rows = [(10000 + n + k, "lakesql", n + k) for k in range(3)]
                    n += 3
                    try:
                        with conn.cursor() as c:
                            c.execute("INSERT INTO `%s` VALUES %s" % (sink, ", ".join(["(%s, %s, %s)"] * 3)),
                                      [v for r in rows for v in r])
                        w.ok(rows)
                    except Exception as e:
                        w.fail("lakesql", e)
        finally:
            conn.close()

    def deltars(t):
        from deltalake import CommitProperties, DeltaTable, write_deltalake
        # Opening the table first starts delta-rs' runtime and store, which would
        # otherwise delay its first commit until lakesql has made half of its own.
        DeltaTable(uri, storage_options=storage_options)
        start.wait()
        pace = random.Random(t)
        for i in range(DELTARS_APPENDS):
            time.sleep(pace.uniform(0, 0.1))  # its appends are faster than lakesql's epochs
            base = 20000 + 1000 * t + 10 * i
            rows = [(base + k, "deltars-%d" % t, i) for k in range(2)]
            tbl = pa.Table.from_pylist([dict(zip(COLS, r)) for r in rows], schema=SCHEMA)
            try:
                write_deltalake(uri, tbl, mode="append", storage_options=storage_options,
                                commit_properties=CommitProperties(max_commit_retries=100))
                w.ok(rows)
                first.set()
            except Exception as e:
                w.fail("deltars-%d" % t, e)
                first.set()

    threads = [threading.Thread(target=lakesql)] + [threading.Thread(target=deltars, args=(t,)) for t in range(DELTARS_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ledger.check(where, "writers", not w.failed,
                 "%d commits, %d rows written by lakesql and delta-rs at once%s"
                 % (w.commits, len(w.rows), "; failed: %s" % w.failed if w.failed else ""))
    return w


def _log_files(local_path):
    """{version: path} of the commit files in the table's _delta_log."""
    out = {}
    for p in glob.glob(os.path.join(local_path, "_delta_log", "*.json")):
        m = re.fullmatch(r"(\d{20})\.json", os.path.basename(p))
        if m:
            out[int(m.group(1))] = p
    return out


def _actions(p):
    with open(p) as f:
        return [json.loads(x) for x in f if x.strip()]


def check(ledger, where, srv, sink, uri, local_path, storage_options, w):
    table = "%s %s" % (where, sink)
    with ledger.guard(table, "log"):
        files = _log_files(local_path)
        want = 1 + w.commits  # version 0 is CREATE SINK's
        vs = sorted(files)
        ledger.check(table, "log", vs == list(range(want)),
                     "versions 0..%d contiguous, one per commit (read %d files: %s)"
                     % (want - 1, len(vs), _ranges(vs)))
        epochs, writers, switches, retried, last = [], {}, 0, 0, None
        by_lakesql, lost_to_lakesql = set(), 0
        for v in vs:
            acts = _actions(files[v])
            ci = next((a["commitInfo"] for a in acts if "commitInfo" in a), {})
            txn = [a["txn"] for a in acts if "txn" in a]
            who = "lakesql" if txn else ci.get("engineInfo", ci.get("clientVersion", "?"))
            if v == 0:
                continue
            writers[who] = writers.get(who, 0) + 1
            if last is not None and who != last:
                switches += 1
            last = who
            epochs += [t["version"] for t in txn if t.get("appId") == "lakesql-" + sink]
            k = (ci.get("operationMetrics") or {}).get("num_retries", 0)
            if k:
                retried += 1
                lost_to_lakesql += sum(1 for u in range(v - k, v) if u in by_lakesql)
            if txn:
                by_lakesql.add(v)
        n_lakesql = LAKESQL_AUTOCOMMIT + LAKESQL_TXNS
        ledger.check(table, "log", sorted(epochs) == list(range(1, n_lakesql + 1)),
                     "lakesql's epochs 1..%d each once (read %s); commits by writer %s; %d writer switches "
                     "in version order; %d delta-rs commits lost races and were retried (%d of the versions "
                     "they lost went to lakesql)"
                     % (n_lakesql, _ranges(sorted(epochs)), writers, switches, retried, lost_to_lakesql))
    want = [tuple(r) for r in w.rows]
    with ledger.guard(table, "lakesql"):
        _, got = engines.lakesql(srv, sink, COLS)
        ledger.rows(table, "lakesql", want, got, TYPES)
    with ledger.guard(table, "delta-rs"):
        types, got = engines.deltars(uri, columns=COLS, storage_options=storage_options)
        if ledger.check(table, "delta-rs", [types[c] for c in COLS] == TYPES, "types %s" % types):
            ledger.rows(table, "delta-rs", want, got, TYPES)
    with ledger.guard(table, "spark"):
        types, got = engines.spark_delta(local_path, columns=COLS)
        note = "" if local_path == uri else " (read from versitygw's posix folder %s)" % local_path
        if ledger.check(table, "spark", [types[c] for c in COLS] == TYPES, "types %s%s" % (types, note)):
            ledger.rows(table, "spark", want, got, TYPES)


def _ranges(vs):
    """[0,1,2,5,6] as '0-2,5-6'."""
    out, i = [], 0
    while i < len(vs):
        j = i
        while j + 1 < len(vs) and vs[j + 1] == vs[j] + 1:
            j += 1
        out.append("%d-%d" % (vs[i], vs[j]) if j > i else str(vs[i]))
        i = j + 1
    return ",".join(out) or "none"


UPSERT_EPOCHS = 20
KEYS = 6  # few keys, so that most appends of delta-rs hold keys lakesql's merges rewrite


def local_upsert(ledger):
    """An upsert sink's merges race delta-rs' appends of rows with the same keys.

    README: a merge that finds data added since it read the table is redone, so the
    table equals the commits applied in log order (an upsert replaces every row of
    its keys, an append adds its rows). The expected rows are built so from the log:
    lakesql's commits by their epoch (txn), delta-rs' by the rows of their files.
    """
    import pyarrow.parquet as pq
    table = "local cu (upsert)"
    d = paths.workdir("concurrent-upsert")
    with Server(d) as srv:
        srv.exec("CREATE SINK cu INTO DELTA 'lake/cu' (id BIGINT NOT NULL, writer VARCHAR(16), n BIGINT, "
                 "PRIMARY KEY (id)) WITH (mode = 'upsert', auto_compact = false)")
        path = os.path.join(srv.data, "lake", "cu")
        epochs, failed, deleted_read = {}, [], [0]
        start = threading.Barrier(1 + DELTARS_THREADS)

        def lakesql():
            conn = srv.connect()
            try:
                start.wait()
                for e in range(1, UPSERT_EPOCHS + 1):
                    rows = [((e + k) % KEYS, "lakesql", e) for k in range(2)]
                    try:
                        with conn.cursor() as c:
                            c.execute("SET lakesql_epoch = %d" % e)
                            c.execute("INSERT INTO cu VALUES (%s, %s, %s), (%s, %s, %s)", [v for r in rows for v in r])
                        epochs[e] = rows
                    except Exception as ex:
                        failed.append(("lakesql epoch %d" % e, repr(ex)[:300]))
            finally:
                conn.close()

        def deltars(t):
            from deltalake import CommitProperties, DeltaTable, write_deltalake
            DeltaTable(path)
            start.wait()
            for i in range(DELTARS_APPENDS):
                # Paced, so that lakesql's merges (slower than appends) land in between
                # instead of being redone until delta-rs is done.
                time.sleep(0.1)
                rows = [((3 * i + t) % KEYS, "deltars-%d" % t, i)]
                tbl = pa.Table.from_pylist([dict(zip(COLS, r)) for r in rows], schema=SCHEMA)
                for attempt in range(20):
                    try:
                        write_deltalake(path, tbl, mode="append",
                                        commit_properties=CommitProperties(max_commit_retries=100))
                        break
                    except Exception as ex:
                        # delta-rs counts an append as having read the whole table, so a
                        # merge that removed files since makes it fail (ConcurrentDeleteRead)
                        # with nothing written; its users send it again, as here.
                        if "deleted data this operation read" in str(ex) and attempt < 19:
                            deleted_read[0] += 1
                            continue
                        failed.append(("deltars-%d" % t, repr(ex)[:300]))
                        break

        threads = [threading.Thread(target=lakesql)] + [threading.Thread(target=deltars, args=(t,)) for t in range(DELTARS_THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # lakesql may give up a merge after 20 redos (1213, README); anything else is wrong.
        bad = [f for f in failed if not (f[0].startswith("lakesql") and "1213" in f[1])]
        ledger.check(table, "writers", not bad,
                     "%d lakesql epochs and %d delta-rs appends landed (%d appends failed on a merge that "
                     "removed files and were sent again); failed: %s"
                     % (len(epochs), DELTARS_THREADS * DELTARS_APPENDS - len([f for f in failed if f[0].startswith("deltars")]),
                        deleted_read[0], failed or "none"))
        with ledger.guard(table, "log"):
            files = _log_files(path)
            model, merges, appends, order = [], 0, 0, []
            for v in sorted(files)[1:]:
                acts = _actions(files[v])
                txn = [a["txn"]["version"] for a in acts if "txn" in a]
                if txn:
                    rows = epochs.get(txn[0])
                    if rows is None:
                        raise AssertionError("version %d holds epoch %d, which lakesql did not report landed" % (v, txn[0]))
                    keys = {r[0] for r in rows}
                    model = [r for r in model if r[0] not in keys] + rows
                    merges += 1
                    order.append("L")
                else:
                    order.append("d")
                    for a in acts:
                        if "add" in a:
                            model += [tuple(r[c] for c in COLS) for r in
                                      pq.read_table(os.path.join(path, a["add"]["path"])).to_pylist()]
                    appends += 1
            ledger.check(table, "log", sorted(files) == list(range(1 + merges + appends))
                         and merges == len(epochs) and appends == DELTARS_THREADS * DELTARS_APPENDS,
                         "versions 0..%d contiguous: %d merges by lakesql, %d appends by delta-rs, in log order %s"
                         % (max(files), merges, appends, "".join(order)))
        with ledger.guard(table, "lakesql"):
            _, got = engines.lakesql(srv, "cu", COLS)
            ledger.rows(table, "lakesql", model, got, TYPES, what="rows (the commits applied in log order)")
        with ledger.guard(table, "delta-rs"):
            _, got = engines.deltars(path, columns=COLS)
            ledger.rows(table, "delta-rs", model, got, TYPES, what="rows (the commits applied in log order)")
