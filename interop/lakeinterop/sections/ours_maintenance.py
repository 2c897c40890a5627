"""Section: lakesql maintains its own tables, and the reference engines judge.

One `lakesql serve` writes four sinks, all with auto_compact = false so that
each OPTIMIZE below has its small files to find: a Delta append sink
partitioned by p (`oa`), a Delta upsert sink with changelog deletes (`ou`),
and the same two on Iceberg in the data directory's SQLite catalog (`ia`,
`iu`, format 2: upserts land as equality deletes). Each epoch, named with
`SET lakesql_epoch = N`, is one transaction per format, so one small file
(or a few) per table. Then lakesql itself runs, in order:

1. OPTIMIZE SINK ... WHERE p = 0, OPTIMIZE SINK (the rest), and OPTIMIZE SINK
   again (nothing left: Version NULL);
2. VACUUM SINK ... RETAIN 0 HOURS, refused (1210) until
   `SET lakesql_vacuum_retention_check = OFF`, then DRY RUN, then for real;
3. for Delta, log cleanup: delta-rs sets delta.logRetentionDuration to 0
   seconds (CREATE SINK passes no table properties but checkpoint_interval),
   and lakesql writes epochs until its next checkpoint, after which the log
   before it must be gone;
4. a restart of the server.

After each step lakesql, Spark and delta-rs (Delta) or Spark and pyiceberg
(Iceberg) read exactly the rows a model of the epochs says; every version
still readable reads as the model's version in lakesql (`AS OF v`) and in
delta-rs (`version=`), Spark (`VERSION AS OF`) and pyiceberg
(`scan(snapshot_id=)`); a version maintenance removed fails in lakesql with
an error naming the oldest readable one; replays of old epochs write
nothing (note 1105); Spark's DESCRIBE HISTORY and a Spark stream judge the
OPTIMIZE commit (dataChange false: the stream skips it).
"""
import glob
import json
import os
import re
import threading
import time

from .. import compare, engines, paths
from .. import spark as sparkmod
from ..server import Server, error_code
from .maintenance import _active, _data_files

NS = "om"
APPEND_COLS = ["id", "p", "v"]
APPEND_TYPES = ["bigint", "int", "string"]
UPSERT_COLS = ["id", "v", "n"]
UPSERT_TYPES = ["bigint", "string", "bigint"]
NO_AUTO = "auto_compact = false"


class Table:
    """One sink, its model (rows now), and the rows of each version it made."""

    def __init__(self, name, fmt, mode):
        self.name, self.fmt, self.mode = name, fmt, mode
        self.cols = APPEND_COLS if mode == "append" else UPSERT_COLS
        self.types = APPEND_TYPES if mode == "append" else UPSERT_TYPES
        self.append = []
        self.upsert = {}
        self.versions = {}  # version (Delta) or snapshot id (Iceberg) -> rows
        self.order = []     # the versions in commit order
        self.last = -1      # Delta: the newest version recorded
        self.oldest = None  # the oldest version maintenance left readable
        self.current = None  # () -> the table's version or snapshot id now

    def rows(self):
        if self.mode == "append":
            return list(self.append)
        return [(k,) + v for k, v in self.upsert.items()]

    def apply(self, e):
        app, ups, dels = epoch_rows(e)
        if self.mode == "append":
            self.append.extend(app)
            return
        for k, v, n in ups:
            self.upsert[k] = (v, n)
        for k in dels:
            self.upsert.pop(k, None)

    def settle(self, srv=None):
        """Records the rows now as those of every version made since the last call; returns the
        table's current version (Delta) or snapshot id (Iceberg), or None before the first.

        Nothing but this section writes the tables, so a version made in
        between (an OPTIMIZE, VACUUM's commits, delta-rs' property change)
        holds the rows the model holds now. The version is the table's own
        (self.current reads it): SHOW SINK STATUS's Table_version is the
        sink's, which its maintenance need not move.
        """
        v = self.current()
        if v is None:
            return None
        if self.fmt == "delta":
            for x in range(self.last + 1, v + 1):
                self.versions[x] = self.rows()
                self.order.append(x)
            self.last = max(self.last, v)
        elif v not in self.versions:
            self.versions[v] = self.rows()
            self.order.append(v)
        return v

    def ddl(self):
        where = "DELTA 'lake/%s'" % self.name if self.fmt == "delta" else "ICEBERG '%s.%s'" % (NS, self.name)
        if self.mode == "append":
            cols = "(id BIGINT NOT NULL, p INT NOT NULL, v VARCHAR(16), PRIMARY KEY (id)) PARTITION BY (p)"
        else:
            cols = "(id BIGINT NOT NULL, v VARCHAR(16), n BIGINT, PRIMARY KEY (id))"
        opts = ["mode = 'upsert'"] if self.mode == "upsert" else []
        if self.fmt == "delta":
            opts.append("checkpoint_interval = 5")
        return "CREATE SINK %s INTO %s %s WITH (%s)" % (self.name, where, cols, ", ".join(opts + [NO_AUTO]))


def epoch_rows(e):
    """Epoch e: four append rows over partitions 0 and 1; two new keys upserted, every
    other epoch an old key again; every third epoch a changelog delete of an older key."""
    app = [(100 * e + i, i % 2, "e%d-%d" % (e, i)) for i in range(4)]
    ups = [(2 * e, "e%d" % e, e * 10), (2 * e + 1, "e%d" % e, e * 10 + 1)]
    if e % 2 == 0 and e > 2:
        ups.append((e - 1, "e%d-again" % e, e * 10 + 2))
    dels = [2 * e - 4] if e % 3 == 0 else []
    return app, ups, dels


def write_epoch(srv, conn, pair, e):
    """Epoch e into an (append, upsert) pair of one format, one transaction."""
    app, ups, dels = epoch_rows(e)
    a, u = pair
    with conn.cursor() as c:
        c.execute("BEGIN")
        c.execute("SET lakesql_epoch = %d" % e)
        c.execute("INSERT INTO %s VALUES " % a.name + ", ".join(["(%s, %s, %s)"] * len(app)),
                  [x for r in app for x in r])
        vals = [(k, v, n, "U") for k, v, n in ups] + [(k, None, None, "D") for k in dels]
        c.execute("INSERT INTO %s (id, v, n, _op) VALUES " % u.name + ", ".join(["(%s, %s, %s, %s)"] * len(vals)),
                  [x for r in vals for x in r])
        c.execute("COMMIT")
    for t in pair:
        t.apply(e)
        t.settle(srv)


class Run:
    """The section's state: the server, the four tables, the readers."""

    def __init__(self, ledger, d):
        self.ledger = ledger
        self.dir = d
        self.srv = None
        self.delta = (Table("oa", "delta", "append"), Table("ou", "delta", "upsert"))
        self.ice = (Table("ia", "iceberg", "append"), Table("iu", "iceberg", "upsert"))
        self.epoch = {"delta": 0, "iceberg": 0}
        self.cat = None
        for t in self.delta:
            t.current = lambda t=t: _delta_version(self.path(t))
        for t in self.ice:
            t.current = lambda t=t: self.snapshot_id(t)

    def snapshot_id(self, t):
        sn = self.catalog().load_table("%s.%s" % (NS, t.name)).current_snapshot()
        return None if sn is None else sn.snapshot_id

    def tables(self):
        return self.delta + self.ice

    def path(self, t):
        return os.path.join(self.srv.data, "lake", t.name)

    def write(self, n):
        conn = self.srv.connect()
        try:
            for _ in range(n):
                for fmt, pair in (("delta", self.delta), ("iceberg", self.ice)):
                    self.epoch[fmt] += 1
                    write_epoch(self.srv, conn, pair, self.epoch[fmt])
        finally:
            conn.close()

    def write_one(self, fmt):
        conn = self.srv.connect()
        try:
            pair = self.delta if fmt == "delta" else self.ice
            self.epoch[fmt] += 1
            write_epoch(self.srv, conn, pair, self.epoch[fmt])
        finally:
            conn.close()

    # --- reads ---------------------------------------------------------------

    def read(self, step, tables=None, spark=True, others=True):
        """Each table's rows now, by lakesql and (with others) the format's other readers."""
        tables = tables or self.tables()
        for t in tables:
            table = "%s %s" % (step, t.name)
            with self.ledger.guard(table, "lakesql"):
                _, got = engines.lakesql(self.srv, t.name, t.cols)
                self.ledger.rows(table, "lakesql", t.rows(), got, t.types)
        if not others:
            return
        for t in tables:
            table = "%s %s" % (step, t.name)
            if t.fmt == "delta":
                if spark:
                    with self.ledger.guard(table, "spark"):
                        _, got = engines.spark_delta(self.path(t), columns=t.cols)
                        self.ledger.rows(table, "spark", t.rows(), got, t.types)
                with self.ledger.guard(table, "delta-rs"):
                    _, got = engines.deltars(self.path(t), columns=t.cols)
                    self.ledger.rows(table, "delta-rs", t.rows(), got, t.types)
            else:
                self.pyiceberg_read(table, t)
        ice = [t for t in tables if t.fmt == "iceberg"]
        if spark and ice:
            with self.ledger.guard("%s %s" % (step, "/".join(t.name for t in ice)), "spark"):
                got = self.spark_iceberg([(t, None) for t in ice])
                for t in ice:
                    self.ledger.rows("%s %s" % (step, t.name), "spark", t.rows(), got[(t.name, None)], t.types)

    def pyiceberg_read(self, table, t, snapshot_id=None):
        """pyiceberg reads t (at snapshot_id); a snapshot with equality deletes it cannot read is noted.

        Returns whether it read."""
        with self.ledger.guard(table, "pyiceberg"):
            tbl = self.catalog().load_table("%s.%s" % (NS, t.name))
            sid = snapshot_id if snapshot_id is not None else tbl.current_snapshot().snapshot_id
            if has_eq_deletes(tbl, sid):
                self.ledger.out("note  ours_maintenance: %s by pyiceberg: snapshot %d has equality deletes, "
                                "which pyiceberg 0.12 does not read" % (table, sid))
                return False
            arrow = tbl.scan(snapshot_id=sid, selected_fields=tuple(t.cols)).to_arrow()
            want = t.rows() if snapshot_id is None else t.versions[snapshot_id]
            self.ledger.rows(table, "pyiceberg", want, engines.arrow_rows(arrow, t.cols), t.types)
            return True
        return False

    def catalog(self):
        if self.cat is None:
            from pyiceberg.catalog.sql import SqlCatalog
            db = os.path.join(self.srv.data, "iceberg", "catalog.db")
            self.cat = SqlCatalog("lakesql", uri="sqlite:///" + db,
                                  warehouse="file://" + os.path.join(self.srv.data, "iceberg", "warehouse"))
        return self.cat

    def spark_iceberg(self, reads):
        """{(table, snapshot id or None): rows} of [(Table, snapshot id or None)] in one Spark query.

        The two tables have three columns each: every branch casts them to text."""
        sparkmod.iceberg_sqlite_catalog("lakesql", self.srv.data)
        sparkmod.drop_catalogs()  # lakesql committed since Spark's last read
        branches = []
        for i, (t, sid) in enumerate(reads):
            cols = ", ".join("CAST(`%s` AS STRING) AS c%d" % (c, j) for j, c in enumerate(t.cols))
            branches.append("SELECT %d AS _i, %s FROM lakesql.%s.%s%s" % (
                i, cols, NS, t.name, "" if sid is None else " VERSION AS OF %d" % sid))
        out = {(t.name, sid): [] for t, sid in reads}
        for r in sparkmod.session().sql(" UNION ALL ".join(branches)).collect():
            t, sid = reads[r[0]]
            out[(t.name, sid)].append(tuple(_typed(list(r)[1:], t.types)))
        return out

    def lakesql_as_of(self, t, v):
        return self.srv.query("SELECT %s FROM `%s` AS OF %d" % (", ".join("`%s`" % c for c in t.cols), t.name, v))[1]

    def time_travel(self, step, t, oldest=None):
        """Every recorded version from oldest on reads as the model's, in lakesql and the other readers;
        the version before oldest is refused by lakesql naming oldest."""
        if oldest is None:
            vs = list(t.order)
        elif t.fmt == "delta":
            vs = [v for v in t.order if v >= oldest]
        else:
            vs = t.order[t.order.index(oldest):]
        table = "%s %s, time travel" % (step, t.name)
        with self.ledger.guard(table, "lakesql"):
            bad = []
            for v in vs:
                d = compare.diff_rows(t.versions[v], self.lakesql_as_of(t, v), t.types)
                if d:
                    bad.append("AS OF %d: %s" % (v, d))
            self.ledger.check(table, "lakesql", not bad, "; ".join(bad[:3]) if bad else
                              "AS OF each of %d versions (%s..%s) as the model" % (len(vs), vs[0], vs[-1]))
        earlier = [v for v in t.order[:t.order.index(vs[0])]] if vs else []
        if oldest is not None and earlier:
            gone = earlier[-1]
            with self.ledger.guard(table + ", gone", "lakesql"):
                err = None
                try:
                    self.lakesql_as_of(t, gone)
                except Exception as e:
                    err = e
                self.ledger.check(table + ", gone", "lakesql", err is not None and names_version(err, vs[0]),
                                  "AS OF %d (removed): %s" % (gone, "read, not refused" if err is None else
                                                             "%s %s" % (error_code(err), str(err)[:300])))
        if t.fmt == "delta":
            with self.ledger.guard(table, "delta-rs"):
                bad = []
                for v in vs:
                    _, got = engines.deltars(self.path(t), version=v, columns=t.cols)
                    d = compare.diff_rows(t.versions[v], got, t.types)
                    if d:
                        bad.append("version %d: %s" % (v, d))
                self.ledger.check(table, "delta-rs", not bad, "; ".join(bad[:3]) if bad else
                                  "version= each of %d versions (%d..%d) as the model" % (len(vs), vs[0], vs[-1]))
            return
        with self.ledger.guard(table, "spark"):
            got = self.spark_iceberg([(t, v) for v in vs])
            bad = []
            for v in vs:
                d = compare.diff_rows(t.versions[v], got[(t.name, v)], t.types)
                if d:
                    bad.append("VERSION AS OF %d: %s" % (v, d))
            self.ledger.check(table, "spark", not bad, "; ".join(bad[:3]) if bad else
                              "VERSION AS OF each of %d snapshots as the model" % len(vs))
        with self.ledger.guard(table, "pyiceberg"):
            tbl = self.catalog().load_table("%s.%s" % (NS, t.name))
            bad, read = [], 0
            for v in vs:
                if has_eq_deletes(tbl, v):
                    continue
                read += 1
                arrow = tbl.scan(snapshot_id=v, selected_fields=tuple(t.cols)).to_arrow()
                d = compare.diff_rows(t.versions[v], engines.arrow_rows(arrow, t.cols), t.types)
                if d:
                    bad.append("snapshot %d: %s" % (v, d))
            self.ledger.check(table, "pyiceberg", not bad, "; ".join(bad[:3]) if bad else
                              "scan(snapshot_id=) of %d snapshots as the model (%d with equality deletes "
                              "it does not read)" % (read, len(vs) - read))

    def replay(self, step, fmt, e):
        """Epoch e again with rows of its own, into both sinks of fmt: nothing lands, and note 1105 says so."""
        a, u = self.delta if fmt == "delta" else self.ice
        conn = self.srv.connect()
        try:
            with self.ledger.guard("%s %s/%s replay" % (step, a.name, u.name), "lakesql"):
                with conn.cursor() as c:
                    c.execute("SET lakesql_epoch = %d" % e)
                    n = c.execute("INSERT INTO %s VALUES (%%s, %%s, %%s)" % a.name, (999000 + e, 0, "replay"))
                    c.execute("SHOW WARNINGS")
                    w1 = list(c.fetchall())
                    c.execute("SET lakesql_epoch = %d" % e)
                    m = c.execute("INSERT INTO %s (id, v, n) VALUES (%%s, %%s, %%s)" % u.name, (1, "replay", -1))
                    c.execute("SHOW WARNINGS")
                    w2 = list(c.fetchall())
                ok = n == 0 and m == 0 and _noted(w1) and _noted(w2)
                self.ledger.check("%s %s/%s replay" % (step, a.name, u.name), "lakesql", ok,
                                  "replay of epoch %d: %d and %d rows affected, notes %s / %s" % (e, n, m, w1, w2))
        finally:
            conn.close()

    def replays(self, step):
        for fmt in ("delta", "iceberg"):
            self.replay(step, fmt, 3)
            self.replay(step, fmt, self.epoch[fmt])


def _noted(warnings):
    return any(w[1] == 1105 and "replay wrote nothing" in str(w[2]) for w in warnings)


def names_version(err, version):
    """Whether an error's text names version."""
    return re.search(r"\b%d\b" % version, str(err)) is not None


def _typed(vals, types):
    out = []
    for v, ty in zip(vals, types):
        out.append(None if v is None else int(v) if ty in ("bigint", "int") else v)
    return out


def has_eq_deletes(tbl, snapshot_id):
    from .ours_iceberg import _has_eq_deletes
    return _has_eq_deletes(tbl, snapshot_id)


def one_row(srv, sql):
    """{column: value} of a statement's one result row."""
    names, rows = srv.query(sql)
    if len(rows) != 1:
        raise AssertionError("%s: %d rows, not one: %s" % (sql, len(rows), rows[:3]))
    return dict(zip(names, rows[0]))


# --- Delta -------------------------------------------------------------------

def _delta_version(path):
    """The table's version, by delta-rs. With delta.logRetentionDuration 0, lakesql's log
    cleanup (in the background, after a checkpoint) may delete a commit delta-rs has listed
    but not read yet: that load is tried again."""
    from deltalake import DeltaTable
    for _ in range(20):
        try:
            return DeltaTable(path).version()
        except Exception as e:
            if "not found" not in str(e).lower():
                raise
            time.sleep(0.2)
    return DeltaTable(path).version()


def status_moved(run, t, v):
    """SHOW SINK STATUS's Table_version is the version maintenance made."""
    table = "optimize %s, status" % t.name
    with run.ledger.guard(table, "lakesql"):
        _, st = run.srv.query("SHOW SINK STATUS `%s`" % t.name)
        run.ledger.check(table, "lakesql", st[0][3] == v, "Table_version %s after OPTIMIZE made %s" % (st[0][3], v))


def _commit(path, v):
    """The actions of Delta commit v."""
    with open(os.path.join(path, "_delta_log", "%020d.json" % v)) as f:
        return [json.loads(x) for x in f if x.strip()]


def _partition_files(path, p):
    return sorted(f for f in _active(path) if f.startswith("p=%d/" % p))


def delta_optimize(run):
    ledger, srv = run.ledger, run.srv
    oa, ou = run.delta
    pa = run.path(oa)
    optimized, optimized_ou = [], []
    with ledger.guard("optimize %s where p = 0" % oa.name, "lakesql"):
        p0, p1 = _partition_files(pa, 0), _partition_files(pa, 1)
        r = one_row(srv, "OPTIMIZE SINK %s WHERE p = 0" % oa.name)
        v = oa.settle(srv)
        ou.settle(srv)
        n0, n1 = _partition_files(pa, 0), _partition_files(pa, 1)
        ledger.check("optimize %s where p = 0" % oa.name, "lakesql",
                     r.get("Version") == v and r.get("Partitions") == 1 and r.get("Files_removed") == len(p0)
                     and len(n0) == r.get("Files_added") == 1 and n1 == p1,
                     "%s; partition 0 went from %d files to %d, partition 1 kept its %d: %s"
                     % (r, len(p0), len(n0), len(p1), "unchanged" if n1 == p1 else "CHANGED"))
        optimized = [v]
    for t in (oa, ou):
        table = "optimize %s" % t.name
        with ledger.guard(table, "lakesql"):
            before = _active(run.path(t))
            r = one_row(srv, "OPTIMIZE SINK %s" % t.name)
            v = t.settle(srv)
            after = _active(run.path(t))
            ledger.check(table, "lakesql", r.get("Version") == v and r.get("Files_removed", 0) > 1
                         and len(after) < len(before),
                         "%s; %d live files, then %d" % (r, len(before), len(after)))
            if t is oa:
                optimized.append(v)
            else:
                optimized_ou.append(v)
            again = one_row(srv, "OPTIMIZE SINK %s" % t.name)
            ledger.check(table + ", again", "lakesql", again.get("Version") is None and t.settle(srv) == v,
                         "nothing left to compact: %s" % again)
    # Each OPTIMIZE commit changes no data: every add and remove has dataChange false.
    for t, vs in ((oa, optimized), (ou, optimized_ou)):
        table = "optimize %s, the log" % t.name
        if not vs:
            ledger.wrong(table, "lakesql", "no OPTIMIZE commit to look at")
            continue
        with ledger.guard(table, "lakesql"):
            bad, ops = [], []
            for v in vs:
                acts = _commit(run.path(t), v)
                ops += [a["commitInfo"].get("operation") for a in acts if "commitInfo" in a]
                files = [a.get("add") or a.get("remove") for a in acts if "add" in a or "remove" in a]
                bad += ["v%d %s dataChange %s" % (v, f["path"], f.get("dataChange")) for f in files
                        if f.get("dataChange") is not False]
                if not any("add" in a for a in acts) or not any("remove" in a for a in acts):
                    bad.append("v%d has no add or no remove" % v)
            ledger.check(table, "lakesql", not bad and ops == ["OPTIMIZE"] * len(vs),
                         "commits %s: operations %s, %s" % (vs, ops, "; ".join(bad[:3]) or
                                                            "every add and remove dataChange false"))
        with ledger.guard(table, "spark"):
            h = {r["version"]: r for r in sparkmod.session().sql(
                "DESCRIBE HISTORY delta.`%s`" % run.path(t)).collect()}
            got = [(v, h[v]["operation"], h[v]["isBlindAppend"]) if v in h else (v, None, None) for v in vs]
            ledger.check(table, "spark", all(op == "OPTIMIZE" and blind is not True for _, op, blind in got),
                         "DESCRIBE HISTORY: (version, operation, isBlindAppend) %s" % got)
    # A Spark stream from the first OPTIMIZE on must skip the commits (dataChange false): no rows.
    table = "optimize %s, streamed" % oa.name
    with ledger.guard(table, "spark"):
        if not optimized:
            raise AssertionError("no OPTIMIZE commit to stream from")
        s = sparkmod.session()
        q = (s.readStream.format("delta").option("startingVersion", optimized[0]).load(pa)
             .writeStream.format("memory").queryName("ours_maintenance_stream")
             .option("checkpointLocation", os.path.join(run.dir, "stream-checkpoint"))
             .trigger(availableNow=True).start())
        q.awaitTermination(300)
        n = s.sql("SELECT count(*) FROM ours_maintenance_stream").collect()[0][0]
        ledger.check(table, "spark", n == 0, "a stream from version %d on (the OPTIMIZE commits %s) read %d rows"
                     % (optimized[0], optimized, n))
    # lakesql's history names them too.
    for t in (oa, ou):
        history_has(run, "optimize %s, history" % t.name, t, "OPTIMIZE")


def history_has(run, table, t, op):
    """SHOW SINK HISTORY lists an operation starting with op (newest first)."""
    with run.ledger.guard(table, "lakesql"):
        names, rows = run.srv.query("SHOW SINK HISTORY %s" % t.name)
        hist = [dict(zip(names, r)) for r in rows]
        ops = [h.get("Operation") for h in hist]
        vers = [h.get("Version") for h in hist]
        ordered = vers == sorted(vers, reverse=True) if t.fmt == "delta" else True
        run.ledger.check(table, "lakesql", any(str(o).startswith(op) for o in ops) and ordered,
                         "%d entries, operations %s" % (len(hist), ops[:8]))
        return hist
    return []


def vacuum_refused(run, t):
    table = "vacuum %s, retention check" % t.name
    with run.ledger.guard(table, "lakesql"):
        run.srv.exec("SET lakesql_vacuum_retention_check = ON")
        err = None
        try:
            run.srv.query("VACUUM SINK %s RETAIN 0 HOURS" % t.name)
        except Exception as e:
            err = e
        run.ledger.check(table, "lakesql", error_code(err) == 1210,
                         "RETAIN 0 HOURS with the check on: %s" % (
                             "ran" if err is None else "%s %s" % (error_code(err), str(err)[:200])))


def retention_check_off(run):
    with run.ledger.guard("SET lakesql_vacuum_retention_check = OFF", "lakesql"):
        run.srv.exec("SET lakesql_vacuum_retention_check = OFF")


def delta_vacuum(run):
    ledger, srv = run.ledger, run.srv
    vacuum_refused(run, run.delta[0])
    retention_check_off(run)
    oldest = {}
    for t in run.delta:
        path = run.path(t)
        table = "vacuum %s" % t.name
        with ledger.guard(table + ", dry run", "lakesql"):
            on_disk = _data_files(path)
            stale = sorted(set(on_disk) - set(_active(path)))
            names, rows = srv.query("VACUUM SINK %s RETAIN 0 HOURS DRY RUN" % t.name)
            listed = sorted(dict(zip(names, r))["Path"] for r in rows)
            ledger.check(table + ", dry run", "lakesql", listed == stale and _data_files(path) == on_disk
                         and len(stale) > 0,
                         "listed %d files, the %d not live (%s); deleted none" % (len(listed), len(stale),
                                                                               "the same" if listed == stale else
                                                                               "listed %s, stale %s" % (listed[:3], stale[:3])))
        with ledger.guard(table, "lakesql"):
            before = _data_files(path)
            r = one_row(srv, "VACUUM SINK %s RETAIN 0 HOURS" % t.name)
            t.settle(srv)
            after = _data_files(path)
            active = _active(path)
            ledger.check(table, "lakesql", after == active and r.get("Files_deleted") == len(before) - len(after) > 0,
                         "%s; %d data files, then %d, the %d live ones" % (r, len(before), len(after), len(active)))
            oldest[t.name] = t.oldest = r.get("Oldest_version")
        history_has(run, table + ", history", t, "VACUUM")
    run.read("vacuumed")
    for t in run.delta:
        o = oldest.get(t.name)
        run.time_travel("vacuumed", t, o if o in t.versions else t.order[-1])


def delta_log_cleanup(run):
    """delta.logRetentionDuration 0 (set by delta-rs), then lakesql's commits up to its next checkpoint."""
    from deltalake import DeltaTable
    ledger = run.ledger
    base = {}
    for t in run.delta:
        dt = DeltaTable(run.path(t))
        dt.alter.set_table_properties({"delta.logRetentionDuration": "interval 0 seconds"})
        t.settle()
        base[t.name] = max(_checkpoints(run.path(t)) or [-1])
    # Log cleanup runs at most once an hour per table and process: a fresh
    # process runs it at its first checkpoint.
    run.srv.stop()
    run.srv = Server(run.dir).start()
    for _ in range(6):
        if all(max(_checkpoints(run.path(t)) or [-1]) > base[t.name] for t in run.delta):
            break
        run.write_one("delta")
    for t in run.delta:
        table = "log cleanup %s" % t.name
        path = run.path(t)
        with ledger.guard(table, "lakesql"):
            cp = max(_checkpoints(path) or [-1])
            log = _log_versions(path)
            # Cleanup may run after the commit returns: wait for it a while.
            deadline = time.time() + 20
            while min(log) < cp and time.time() < deadline:
                time.sleep(0.2)
                log = _log_versions(path)
            ledger.check(table, "lakesql", cp > base[t.name] and min(log) == cp and _checkpoints(path) == [cp],
                         "lakesql's checkpoint at %d; commits left in the log %d..%d, checkpoints %s"
                         % (cp, min(log), max(log), _checkpoints(path)))
    run.read("log cleaned up")
    for t in run.delta:
        t.oldest = max(t.oldest or 0, min(_log_versions(run.path(t))))
        run.time_travel("log cleaned up", t, t.oldest)


def _checkpoints(path):
    return sorted(int(os.path.basename(c).split(".")[0])
                  for c in glob.glob(os.path.join(path, "_delta_log", "*.checkpoint*.parquet")))


def _log_versions(path):
    return sorted(int(f[:20]) for f in os.listdir(os.path.join(path, "_delta_log")) if re.fullmatch(r"\d{20}\.json", f))


# --- Iceberg -----------------------------------------------------------------

def _live_files(tbl, snapshot_id=None):
    """Paths (file URIs) of the data and delete files live in a snapshot (the current one by default)."""
    sn = tbl.snapshot_by_id(snapshot_id) if snapshot_id is not None else tbl.current_snapshot()
    out = set()
    for m in sn.manifests(tbl.io):
        for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
            out.add(e.data_file.file_path)
    return out


def _disk_files(tbl, sub):
    root = tbl.location().removeprefix("file://")
    return {"file://" + p for p in glob.glob(os.path.join(root, sub, "**", "*"), recursive=True) if os.path.isfile(p)}


def iceberg_optimize(run):
    ledger, srv = run.ledger, run.srv
    ia, iu = run.ice
    with ledger.guard("optimize %s where p = 0" % ia.name, "lakesql"):
        tbl = run.catalog().load_table("%s.%s" % (NS, ia.name))
        before = _live_files(tbl)
        r = one_row(srv, "OPTIMIZE SINK %s WHERE p = 0" % ia.name)
        sid = ia.settle(srv)
        tbl = run.catalog().load_table("%s.%s" % (NS, ia.name))
        after = _live_files(tbl)
        kept1 = {f for f in before if "/p=1/" in f} <= after
        gone0 = {f for f in before if "/p=0/" in f}
        ledger.check("optimize %s where p = 0" % ia.name, "lakesql",
                     r.get("Version") == sid and r.get("Partitions") == 1 and r.get("Files_removed") == len(gone0)
                     and not (gone0 & after) and kept1 and tbl.current_snapshot().summary.operation.value in
                     ("replace", "overwrite"),
                     "%s; partition 0's %d files replaced, partition 1's kept: %s; snapshot operation %s"
                     % (r, len(gone0), kept1, tbl.current_snapshot().summary.operation.value))
        status_moved(run, ia, sid)
    for t in run.ice:
        table = "optimize %s" % t.name
        with ledger.guard(table, "lakesql"):
            tbl = run.catalog().load_table("%s.%s" % (NS, t.name))
            before = _live_files(tbl)
            r = one_row(srv, "OPTIMIZE SINK %s" % t.name)
            sid = t.settle(srv)
            tbl = run.catalog().load_table("%s.%s" % (NS, t.name))
            after = _live_files(tbl)
            ok = r.get("Version") == sid and r.get("Files_removed", 0) > 1 and len(after) < len(before)
            detail = "%s; %d live files, then %d" % (r, len(before), len(after))
            if t.mode == "upsert":
                # Every data file was rewritten with the deletes applied: none is left to apply.
                ok = ok and r.get("Delete_files_removed", 0) > 0 and not has_eq_deletes(tbl, sid)
                detail += "; equality deletes left: %s" % has_eq_deletes(tbl, sid)
            ledger.check(table, "lakesql", ok, detail)
            again = one_row(srv, "OPTIMIZE SINK %s" % t.name)
            ledger.check(table + ", again", "lakesql", again.get("Version") is None and t.settle(srv) == sid,
                         "nothing left to compact: %s" % again)
        history_has(run, table + ", history", t, ("REPLACE", "OVERWRITE"))


def iceberg_vacuum(run):
    ledger, srv = run.ledger, run.srv
    vacuum_refused(run, run.ice[0])
    retention_check_off(run)
    for t in run.ice:
        table = "vacuum %s" % t.name
        name = "%s.%s" % (NS, t.name)
        with ledger.guard(table + ", dry run", "lakesql"):
            tbl = run.catalog().load_table(name)
            data_before = _disk_files(tbl, "data")
            names, rows = srv.query("VACUUM SINK %s RETAIN 0 HOURS DRY RUN" % t.name)
            listed = [dict(zip(names, r)) for r in rows]
            ledger.check(table + ", dry run", "lakesql", len(listed) > 0 and _disk_files(tbl, "data") == data_before
                         and len(run.catalog().load_table(name).snapshots()) == len(tbl.snapshots()),
                         "listed %d files (%s); deleted none, expired nothing" % (
                             len(listed), sorted({x.get("Reason") for x in listed})))
        with ledger.guard(table, "lakesql"):
            tbl = run.catalog().load_table(name)
            snaps_before = len(tbl.snapshots())
            r = one_row(srv, "VACUUM SINK %s RETAIN 0 HOURS" % t.name)
            tbl = run.catalog().load_table(name)
            left = [s.snapshot_id for s in tbl.snapshots()]
            needed = set()
            for sid in left:
                needed |= _live_files(tbl, sid)
            disk = _disk_files(tbl, "data")
            ledger.check(table, "lakesql", r.get("Snapshots_expired", 0) > 0 and len(left) < snaps_before
                         and disk == needed,
                         "%s; %d snapshots, then %d; %d data and delete files on disk, %d named by the snapshots "
                         "left%s" % (r, snaps_before, len(left), len(disk), len(needed),
                                     "" if disk == needed else ": extra %s, missing %s" % (
                                         sorted(disk - needed)[:2], sorted(needed - disk)[:2])))
            # Manifests and manifest lists only expired snapshots named are gone too.
            lists = {s.manifest_list for s in tbl.snapshots()}
            mans = {m.manifest_path for s in tbl.snapshots() for m in s.manifests(tbl.io)}
            avro = {f for f in _disk_files(tbl, "metadata") if f.endswith(".avro")}
            ledger.check(table + ", metadata", "lakesql", avro <= lists | mans,
                         "%d manifest and list files on disk, %d not named by a snapshot left"
                         % (len(avro), len(avro - lists - mans)))
            t.order = [v for v in t.order if v in left]
        history_has(run, table + ", history", t, "")
    run.read("vacuumed", tables=list(run.ice))
    for t in run.ice:
        run.time_travel("vacuumed", t, t.order[0])
        gone = [v for v in t.versions if v not in t.order]
        if gone:
            table = "vacuumed %s, time travel, expired" % t.name
            with ledger.guard(table, "lakesql"):
                err = None
                try:
                    run.lakesql_as_of(t, gone[0])
                except Exception as e:
                    err = e
                ledger.check(table, "lakesql", err is not None and names_version(err, t.order[0]),
                             "AS OF expired snapshot %d: %s" % (gone[0], "read, not refused" if err is None else
                                                                 "%s %s" % (error_code(err), str(err)[:300])))


# --- the run -----------------------------------------------------------------

def as_of_timestamp(run):
    """AS OF TIMESTAMP between two commits reads the older one, as delta-rs' version of it."""
    time.sleep(1.1)
    t = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    time.sleep(1.1)
    run.write(1)
    for tb in (run.delta[0], run.ice[0]):
        table = "as of timestamp %s" % tb.name
        with run.ledger.guard(table, "lakesql"):
            v = tb.order[-2]
            _, got = run.srv.query("SELECT %s FROM `%s` AS OF TIMESTAMP('%s')" % (
                ", ".join("`%s`" % c for c in tb.cols), tb.name, t))
            run.ledger.rows(table, "lakesql", tb.versions[v], got, tb.types,
                            what="rows of version %d, current at %s" % (v, t))


def create(run):
    for t in run.tables():
        with run.ledger.guard("create %s" % t.name, "lakesql"):
            try:
                run.srv.exec(t.ddl())
            except Exception as e:
                if NO_AUTO not in t.ddl() or error_code(e) != 1210 or "auto_compact" not in str(e):
                    raise
                run.ledger.wrong("create %s" % t.name, "lakesql", "auto_compact refused: %s" % str(e)[:200])
                run.srv.exec(t.ddl().replace(", " + NO_AUTO, "").replace(" WITH (" + NO_AUTO + ")", ""))
            t.settle(run.srv)


def run(ledger):
    d = paths.workdir("ours_maintenance")
    boot = threading.Thread(target=sparkmod.session, daemon=True)
    boot.start()
    r = Run(ledger, d)
    r.srv = Server(d).start()
    try:
        create(r)
        r.write(4)
        as_of_timestamp(r)
        r.write(3)
        r.read("written", spark=False)
        boot.join()
        for t in r.tables():
            r.time_travel("written", t)

        delta_optimize(r)
        iceberg_optimize(r)
        r.read("optimized")
        for t in r.tables():
            r.time_travel("optimized", t)
        r.replays("optimized")
        r.write(2)

        delta_vacuum(r)
        iceberg_vacuum(r)
        r.replays("vacuumed")
        r.write(1)

        delta_log_cleanup(r)
        r.replays("log cleaned up")
        r.srv.stop()

        r.srv = Server(d).start()
        r.read("restarted", others=False)
        r.replays("restarted")
        r.write(1)
        r.read("restarted, written")
    finally:
        r.srv.stop()
