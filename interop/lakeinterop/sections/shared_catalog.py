"""Section shared_catalog: four lakesql servers write one Iceberg table through iceberg-go's
SQL catalog on PostgreSQL, at the same time; pyiceberg reads the result.

The test starts its own PostgreSQL (Debian's binaries) on a free loopback port in a folder
of the run. Each `lakesql serve` has its own data directory and writer id and a sink on the
one table; each writes 25 epochs (SET lakesql_epoch = e, then an autocommit INSERT of rows
tagged writer and epoch) while the others do. Then: every row lands once (lakesql's SELECT on
every server, pyiceberg's scan), there are 100 snapshots, each summary names one (writer,
epoch) pair once, and every data file holds only the rows of the snapshot that added it.
"""
import os
import pwd
import signal
import subprocess
import threading

from .. import compare, engines, paths, procs, server

PG_BIN = os.environ.get("LAKESQL_INTEROP_PG_BIN", "/usr/lib/postgresql/15/bin")
WRITERS = 4
EPOCHS = 25
ROWS = 2  # rows per epoch
TABLE = "shared.events"
COLUMNS = "(writer VARCHAR(16) NOT NULL, epoch BIGINT NOT NULL, n BIGINT NOT NULL, tag VARCHAR(64))"
# The Iceberg types of COLUMNS, in Spark's spelling (compare.iceberg_type).
TYPES = {"writer": "string", "epoch": "bigint", "n": "bigint", "tag": "string"}


class Postgres:
    """A PostgreSQL server of the run's own: initdb into DIR/pgdata, socket in DIR.

    initdb and postgres refuse to run as root; as root they run as the postgres user
    (or nobody), which then owns DIR.
    """

    def __init__(self, dir):
        self.dir = dir
        self.data = os.path.join(dir, "pgdata")
        self.port = None
        self.proc = None
        self.user = "lakesql"
        self.prefix = []
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                pw = pwd.getpwnam("nobody")
            self.prefix = ["setpriv", "--reuid", str(pw.pw_uid), "--regid", str(pw.pw_gid), "--clear-groups"]
            self.uid, self.gid = pw.pw_uid, pw.pw_gid

    def _run(self, args, **kw):
        return subprocess.run(self.prefix + args, check=True, stdin=subprocess.DEVNULL, **kw)

    def start(self, timeout=60):
        os.makedirs(self.dir, exist_ok=True)
        if self.prefix:
            os.chown(self.dir, self.uid, self.gid)
        log = open(os.path.join(self.dir, "initdb.log"), "w")
        self._run([os.path.join(PG_BIN, "initdb"), "-D", self.data, "-U", self.user, "--auth=trust",
                   "-E", "UTF8", "--no-locale", "--no-sync"], stdout=log, stderr=subprocess.STDOUT)
        self.port = procs.free_port()
        out = open(os.path.join(self.dir, "postgres.log"), "w")
        self.proc = subprocess.Popen(
            self.prefix + [os.path.join(PG_BIN, "postgres"), "-D", self.data, "-k", self.dir, "-p", str(self.port),
                           "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=100"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        import psycopg2

        def serving():
            try:
                psycopg2.connect(host="127.0.0.1", port=self.port, user=self.user, dbname="postgres").close()
                return True
            except psycopg2.OperationalError:
                return False
        procs.wait_ready(self.proc, "postgres", serving, timeout, out.name, interval=0.2)
        return self

    def url(self, scheme="postgres"):
        """The database's URL (lib/pq: postgres://, SQLAlchemy: postgresql+psycopg2://)."""
        q = "?sslmode=disable" if scheme == "postgres" else ""
        return "%s://%s@127.0.0.1:%d/postgres%s" % (scheme, self.user, self.port, q)

    def stop(self):
        procs.stop(self.proc, signal.SIGINT)  # SIGINT: PostgreSQL's fast shutdown

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def expected_rows():
    return [("w%d" % w, e, n, "w%d-e%d-n%d" % (w, e, n))
            for w in range(1, WRITERS + 1) for e in range(1, EPOCHS + 1) for n in range(ROWS)]


def write_epochs(srv, writer, errors):
    """EPOCHS autocommit INSERTs on srv, each its own named epoch."""
    try:
        c = srv.connect()
        try:
            with c.cursor() as cur:
                for e in range(1, EPOCHS + 1):
                    cur.execute("SET lakesql_epoch = %d" % e)
                    vals = ", ".join("('%s', %d, %d, '%s-e%d-n%d')" % (writer, e, n, writer, e, n) for n in range(ROWS))
                    cur.execute("INSERT INTO ev (writer, epoch, n, tag) VALUES " + vals)
        finally:
            c.close()
    except Exception as exc:  # reported by the caller
        errors.append("%s: %r" % (writer, exc))


UPSERT_EPOCHS = 8
KEYS = 5  # keys per writer
UPSERT_COLUMNS = "(k BIGINT NOT NULL PRIMARY KEY, writer VARCHAR(16), epoch BIGINT, v VARCHAR(64))"
UPSERT_TYPES = {"k": "bigint", "writer": "string", "epoch": "bigint", "v": "string"}


def upsert_epochs(srv, writer, w, errors):
    """UPSERT_EPOCHS epochs into each upsert sink on srv: every epoch upserts the writer's own
    keys; the last deletes one of them with a changelog row. Automatic epoch numbers."""
    try:
        c = srv.connect()
        try:
            with c.cursor() as cur:
                for e in range(1, UPSERT_EPOCHS + 1):
                    for sink in ("kv2", "kv1"):
                        rows = []
                        for j in range(KEYS):
                            k = w * 100 + j
                            if e == UPSERT_EPOCHS and j == KEYS - 1:
                                rows.append("('D', %d, NULL, NULL, NULL)" % k)
                            else:
                                rows.append("('U', %d, '%s', %d, '%s-e%d-k%d')" % (k, writer, e, writer, e, k))
                        cur.execute("INSERT INTO %s (_op, k, writer, epoch, v) VALUES %s" % (sink, ", ".join(rows)))
        finally:
            c.close()
    except Exception as exc:  # reported by the caller
        errors.append("%s: %r" % (writer, exc))


def upsert_expected():
    e = UPSERT_EPOCHS
    return [(w * 100 + j, "w%d" % w, e, "w%d-e%d-k%d" % (w, e, w * 100 + j))
            for w in range(1, WRITERS + 1) for j in range(KEYS - 1)]


def check_table(ledger, table_label, tbl, lakesql_rows, want_pairs, want_types=TYPES, files=True):
    """pyiceberg's reading of tbl against lakesql's rows, and the snapshots' epochs.

    want_pairs is the multiset of (writer-id, epoch) the snapshot summaries must hold, each once.
    """
    with ledger.guard(table_label, "pyiceberg"):
        arrow = tbl.scan().to_arrow()
        names = [f.name for f in tbl.schema().fields]
        got = engines.arrow_rows(arrow, names)
        types = {f.name: compare.iceberg_type(f.field_type) for f in tbl.schema().fields}
        d = compare.diff_types(want_types, types)
        if d:
            ledger.wrong(table_label, "pyiceberg", "types: " + d)
        else:
            ledger.rows(table_label, "pyiceberg", lakesql_rows, got, [types[n] for n in names])
    with ledger.guard(table_label + " snapshots", "pyiceberg"):
        check_snapshots(ledger, table_label + " snapshots", tbl, want_pairs, files)


def check_snapshots(ledger, label, tbl, want_pairs, files_of_epochs=True):
    """Every snapshot of the current branch names one wanted (writer, epoch) once, and every
    live data file holds only rows of that writer and epoch."""
    import collections
    import pyarrow.parquet as pq
    meta = tbl.metadata
    chain = []
    s = tbl.current_snapshot()
    while s is not None:
        chain.append(s)
        s = meta.snapshot_by_id(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    pairs = collections.Counter()
    by_id = {}
    for s in chain:
        props = s.summary.additional_properties if s.summary else {}
        p = (props.get("lakesql.writer-id"), int(props.get("lakesql.epoch", -1)))
        pairs[p] += 1
        by_id[s.snapshot_id] = p
    want = collections.Counter(want_pairs)
    order = {}
    for s in reversed(chain):  # oldest first: each writer's epochs must rise
        w, e = by_id[s.snapshot_id]
        if e <= order.get(w, -1):
            ledger.wrong(label, "pyiceberg", "writer %s's epoch %d follows its epoch %d" % (w, e, order[w]))
            return
        order[w] = e
    if pairs != want:
        ledger.wrong(label, "pyiceberg", "%d snapshots; summaries missing %s, unexpected %s"
                     % (len(chain), sorted((want - pairs).elements())[:5], sorted((pairs - want).elements())[:5]))
        return
    # Each live data file belongs to the snapshot that added it: its rows carry that pair.
    bad = []
    files = 0
    io = tbl.io
    for m in tbl.current_snapshot().manifests(io) if files_of_epochs else ():
        for entry in m.fetch_manifest_entry(io, discard_deleted=True):
            files += 1
            p = by_id.get(entry.snapshot_id)
            path = entry.data_file.file_path
            with io.new_input(path).open() as f:
                t = pq.read_table(f, columns=["writer", "epoch"])
            got = set(zip(t.column("writer").to_pylist(), t.column("epoch").to_pylist()))
            if p is None or got != {p}:
                bad.append("%s added by %s holds %s" % (os.path.basename(path), p, sorted(got)[:3]))
    # How interleaved the writers' commits were: a switch of writer between consecutive
    # snapshots means the writers' epochs overlapped, where pinned commits lose races.
    switches = sum(1 for a, b in zip(chain, chain[1:]) if by_id[a.snapshot_id][0] != by_id[b.snapshot_id][0])
    what = "%d data files, each of its snapshot's epoch" % files if files_of_epochs else "upserts rewrite rows: files not attributed"
    ledger.check(label, "pyiceberg", not bad,
                 "%d snapshots, one per (writer, epoch), in each writer's order, %d writer switches; %s"
                 % (len(chain), switches, what)
                 if not bad else "; ".join(bad[:3]))


def sink_sql(props, writer_id, sink="ev", table=TABLE, columns=COLUMNS, extra=()):
    opts = ", ".join(["catalog.`%s` = '%s'" % (k, v) for k, v in props.items()] + ["writer_id = '%s'" % writer_id]
                     # one snapshot per (writer, epoch) is what the section checks
                     + ["auto_compact = false"] + list(extra))
    return "CREATE SINK %s INTO ICEBERG '%s' %s WITH (%s)" % (sink, table, columns, opts)


def run(ledger):
    run_dir = paths.workdir("shared_catalog")
    warehouse = os.path.join(run_dir, "warehouse")
    os.makedirs(warehouse)
    pg = Postgres(os.path.join(run_dir, "pg"))
    with ledger.guard("(postgres)", "harness"):
        pg.start()
    if pg.proc is None or pg.proc.poll() is not None:
        return
    servers = []
    try:
        props = {"type": "sql", "uri": pg.url(), "sql.driver": "postgres", "warehouse": "file://" + warehouse}
        for w in range(1, WRITERS + 1):
            srv = server.Server(os.path.join(run_dir, "w%d" % w), extra=["--allowed-roots", run_dir])
            servers.append(srv)
            srv.start()
        # The four servers create their sinks at once, on the catalog's first use: each opens
        # the fresh catalog (creating its tables), one creates the Iceberg table, the others
        # attach to it with the same columns.
        errors = []

        def create(w, srv):
            try:
                c = srv.connect()
                try:
                    with c.cursor() as cur:
                        cur.execute(sink_sql(props, "w%d" % w))
                finally:
                    c.close()
            except Exception as exc:  # recorded below
                errors.append("w%d: %r" % (w, exc))
        threads = [threading.Thread(target=create, args=(w, srv)) for w, srv in enumerate(servers, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if not ledger.check(TABLE + " create", "lakesql", not errors,
                            "%d CREATE SINKs at once on a fresh catalog" % WRITERS if not errors else "; ".join(errors)[:800]):
            return
        for w, srv in enumerate(servers, 1):
            # Upsert sinks: format 2 (equality deletes) and format 1 (files rewritten).
            for fv in (2, 1):
                srv.exec(sink_sql(props, "w%d" % w, "kv%d" % fv, "shared.kv%d" % fv, UPSERT_COLUMNS,
                                  ["mode = 'upsert'", "format_version = %d" % fv]))
        errors = []
        threads = [threading.Thread(target=write_epochs, args=(srv, "w%d" % w, errors))
                   for w, srv in enumerate(servers, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ledger.check(TABLE + " writes", "lakesql", not errors,
                     "%d writers × %d epochs committed" % (WRITERS, EPOCHS) if not errors else "; ".join(errors)[:800])
        want = expected_rows()
        got0 = None
        for w, srv in enumerate(servers, 1):
            with ledger.guard("%s via w%d" % (TABLE, w), "lakesql"):
                _, got = srv.query("SELECT writer, epoch, n, tag FROM ev")
                ledger.rows("%s via w%d" % (TABLE, w), "lakesql", want, got)
                if got0 is None:
                    got0 = got
        # A replay of a committed epoch writes nothing, through the shared catalog too.
        with ledger.guard(TABLE + " replay", "lakesql"):
            c = servers[1].connect()
            try:
                with c.cursor() as cur:
                    cur.execute("SET lakesql_epoch = 7")
                    n = cur.execute("INSERT INTO ev (writer, epoch, n, tag) VALUES ('w2', 7, 99, 'replayed')")
            finally:
                c.close()
            _, after = servers[0].query("SELECT COUNT(*) FROM ev WHERE n = 99")
            ledger.check(TABLE + " replay", "lakesql", n == 0 and after[0][0] == 0,
                         "a replayed epoch wrote %s rows, %s landed" % (n, after[0][0]))
        from pyiceberg.catalog.sql import SqlCatalog
        cat = SqlCatalog("lakesql", uri=pg.url("postgresql+psycopg2"), warehouse="file://" + warehouse)
        with ledger.guard(TABLE, "pyiceberg"):
            tbl = cat.load_table(TABLE)
            pairs = [("w%d" % w, e) for w in range(1, WRITERS + 1) for e in range(1, EPOCHS + 1)]
            check_table(ledger, TABLE, tbl, got0 if got0 is not None else want, pairs)

        # Upserts of each writer's own keys, at the same time: a writer's deletes and
        # rewrites must not touch another's rows, whichever commit wins a race.
        errors = []
        threads = [threading.Thread(target=upsert_epochs, args=(srv, "w%d" % w, w, errors))
                   for w, srv in enumerate(servers, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ledger.check("shared.kv writes", "lakesql", not errors,
                     "%d writers × %d upsert epochs × 2 tables committed" % (WRITERS, UPSERT_EPOCHS)
                     if not errors else "; ".join(errors)[:800])
        want = upsert_expected()
        pairs = [("w%d" % w, e) for w in range(1, WRITERS + 1) for e in range(1, UPSERT_EPOCHS + 1)]
        for fv in (2, 1):
            ident = "shared.kv%d" % fv
            got = None
            for w, srv in enumerate(servers, 1):
                with ledger.guard("%s via w%d" % (ident, w), "lakesql"):
                    _, rows = srv.query("SELECT k, writer, epoch, v FROM kv%d" % fv)
                    ledger.rows("%s via w%d" % (ident, w), "lakesql", want, rows)
                    if got is None:
                        got = rows
            with ledger.guard(ident, "pyiceberg"):
                tbl = cat.load_table(ident)
                if fv == 1:
                    check_table(ledger, ident, tbl, got if got is not None else want, pairs, UPSERT_TYPES, files=False)
                else:
                    # pyiceberg 0.12 reads no equality deletes (README, Sinks): the summaries only.
                    check_snapshots(ledger, ident + " snapshots", tbl, pairs, False)
    finally:
        for srv in servers:
            srv.stop()
        pg.stop()
