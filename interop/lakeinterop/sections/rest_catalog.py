"""Section rest_catalog: a real Iceberg REST catalog, Apache Iceberg's REST test fixture.

org.apache.iceberg.rest.RESTCatalogServer (the server of the apache/iceberg-rest-fixture
image) is resolved from Maven Central with Maven (interop/rest/pom.xml) into BUILD/rest/lib
and started once per run on a free port, backed by a JdbcCatalog on a SQLite file, with its
warehouse in the run's folder. Against it:

- lakesql's Go Iceberg tests that take a catalog (sqlsink: the "rest" lake of the sink and
  multi-process tests; catalogadapter/apacheiceberg: the commit and discard tests;
  tableformat/iceberg: the row-delta, conflict and partition tests), run with `go test` and LAKESQL_ICEBERG_REST_URI;
  each Go test is one check;
- a `lakesql serve` with an append sink (a row of each common type) and an upsert sink
  (upserts, a changelog delete, DELETE and UPDATE) through catalog.type = 'rest', read by
  lakesql's SELECT, pyiceberg's RestCatalog and Spark's REST catalog.
"""
import datetime
import decimal
import json
import os
import subprocess
import time
import urllib.request

from .. import compare, engines, paths, procs, server
from .. import spark as sparkmod

ICEBERG = "1.10.0"
MAIN = "org.apache.iceberg.rest.RESTCatalogServer"
# The Go tests that run against the REST catalog: in sqlsink and catalogadapter/apacheiceberg,
# tests of their own and the "rest" lake's subtest of the tests that run on every lake; in
# tableformat/iceberg, the "rest" subtest of the row-delta, conflict and partition tests.
GO_PKGS = ["./sqlsink", "./catalogadapter/apacheiceberg", "./tableformat/iceberg"]
GO_RUN = ("^(TestRESTSinkUpsertRowDelta|TestManyProcessesAppendREST|TestSinkAppendRollbackReplayRestart|"
          "TestCommitRefusesMissingStagedFile|TestDiscardKeepsCommittedFiles|TestSameWriterTwoProcesses|"
          "TestPinnedCommitConflicts|TestEqualityDeleteUpsert|TestPositionDeletesFromIcebergGo|"
          "TestPartitionTransforms|TestPartitionedEqualityDeletes|TestEqualityColumnsAfterSpecEvolution|"
          "TestRESTConcurrentNamespace)$/^rest$")


def classpath():
    """BUILD/rest/lib, filled by Maven from interop/rest/pom.xml when the pom changes."""
    import hashlib
    pom = os.path.join(paths.ROOT, "interop", "rest", "pom.xml")
    lib = os.path.join(paths.BUILD, "rest", "lib")
    stamp = os.path.join(paths.BUILD, "rest", "pom.sha256")
    want = hashlib.sha256(open(pom, "rb").read()).hexdigest()
    have = open(stamp).read().strip() if os.path.exists(stamp) else ""
    if have != want or not os.path.isdir(lib):
        import shutil
        shutil.rmtree(lib, ignore_errors=True)
        os.makedirs(os.path.dirname(stamp), exist_ok=True)
        log = os.path.join(paths.BUILD, "rest", "mvn.log")
        with open(log, "w") as out:
            r = subprocess.run(["mvn", "-q", "-B", "-f", pom, "dependency:copy-dependencies",
                                "-DoutputDirectory=" + lib], stdout=out, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError("mvn could not resolve %s (exit %d): %s" % (pom, r.returncode, open(log).read()[-1500:]))
        with open(stamp, "w") as f:
            f.write(want)
    return os.path.join(lib, "*")


class RESTFixture:
    """The REST catalog test fixture on a free port, its catalog and warehouse in DIR.

    It is configured by environment (CATALOG_x_y is property x.y, __ a dash); Jetty binds
    all interfaces (the fixture has no host setting), the port is a free loopback one.
    """

    def __init__(self, dir):
        self.dir = dir
        self.warehouse = os.path.join(dir, "warehouse")
        self.port = None
        self.proc = None

    @property
    def uri(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self, timeout=90):
        cp = classpath()
        os.makedirs(self.warehouse, exist_ok=True)
        self.port = procs.free_port()
        env = dict(os.environ,
                   CATALOG_WAREHOUSE="file://" + self.warehouse,
                   CATALOG_URI="jdbc:sqlite:" + os.path.join(self.dir, "catalog.db"),
                   CATALOG_JDBC_SCHEMA__VERSION="V1",
                   CATALOG_REST_PORT=str(self.port))
        out = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen(["java", "-Xmx384m", "-cp", cp, MAIN], env=env, stdout=out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

        def answers():
            try:
                with urllib.request.urlopen(self.uri + "/v1/config", timeout=2) as r:
                    json.load(r)
                return True
            except OSError:
                return False
        procs.wait_ready(self.proc, MAIN, answers, timeout, out.name, interval=0.3)
        return self

    def stop(self):
        procs.stop(self.proc, timeout=20)


def go_tests(ledger, rest):
    """The Go tests of GO_RUN against the fixture; each leaf test's verdict is a check."""
    env = dict(os.environ, LAKESQL_ICEBERG_REST_URI=rest.uri)
    log = os.path.join(rest.dir, "go-test.json")
    start = time.time()
    with open(log, "w") as out:
        # -p 1: the packages' tests share the catalog's table names, so they must not run at once.
        r = subprocess.run(["go", "test", "-tags", "duckdb_arrow", "-count=1", "-p", "1", "-json", "-run", GO_RUN] + GO_PKGS,
                           cwd=paths.ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    ledger.out("interop: rest_catalog: go test took %.0fs" % (time.time() - start))
    verdicts, output = {}, {}
    for line in open(log):
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        t = ev.get("Test")
        if not t:
            continue
        t = ev.get("Package", "").rsplit("/", 1)[-1] + "." + t
        if ev.get("Action") == "output":
            output.setdefault(t, []).append(ev.get("Output", ""))
        elif ev.get("Action") in ("pass", "fail", "skip"):
            verdicts[t] = ev["Action"]
    # Leaves only: a parent's verdict is its subtests'.
    leaves = [t for t in verdicts if not any(o.startswith(t + "/") for o in verdicts)]
    for t in sorted(leaves):
        v = verdicts[t]
        detail = "passed" if v == "pass" else v + ": " + "".join(output.get(t, []))[-600:].strip()
        ledger.check("go " + t, "go test", v == "pass", detail)
    # A test named in GO_RUN that no package holds any more (moved, renamed) is wrong, not silent.
    ran = {t.split(".", 1)[1].split("/")[0] for t in verdicts}
    for name in GO_RUN.split("^(", 1)[1].split(")$", 1)[0].split("|"):
        if name not in ran:
            ledger.wrong("go " + name, "go test", "named in GO_RUN but no test of %s ran" % " ".join(GO_PKGS))
    if not leaves:
        ledger.wrong("go " + " ".join(GO_PKGS), "go test", "no test ran (exit %d): %s" % (r.returncode, open(log).read()[-800:]))
    elif r.returncode != 0 and all(verdicts[t] == "pass" for t in leaves):
        ledger.wrong("go " + " ".join(GO_PKGS), "go test", "go test exited %d: %s" % (r.returncode, open(log).read()[-800:]))


APPEND_COLS = ("(id INT NOT NULL, big BIGINT, d DOUBLE, amount DECIMAL(12,3), name VARCHAR(32), "
               "day DATE, at DATETIME(6), ok BOOLEAN)")
APPEND_TYPES = {"id": "int", "big": "bigint", "d": "double", "amount": "decimal(12,3)", "name": "string",
                "day": "date", "at": "timestamp_ntz", "ok": "boolean"}
UPSERT_COLS = "(id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(32), n INT)"
UPSERT_TYPES = {"id": "bigint", "v": "string", "n": "int"}


def write_tables(srv, props):
    """The sinks' tables: {identifier: (sink, types, epochs, readers)}."""
    opts = ", ".join("catalog.`%s` = '%s'" % kv for kv in props.items())
    srv.exec("CREATE SINK app INTO ICEBERG 'rest_db.app' %s WITH (%s)" % (APPEND_COLS, opts))
    srv.exec("INSERT INTO app VALUES (1, 9223372036854775807, 1.5, 12345.678, 'a b', '2024-02-29', "
             "'2024-02-29 12:34:56.123456', TRUE), (2, -1, -0.25, -0.001, 'ünï', '1969-12-31', "
             "'1900-01-01 00:00:00', FALSE), (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
    srv.exec("INSERT INTO app VALUES (4, 0, 1e300, 999999999.999, '', '0001-01-01', '9999-12-31 23:59:59.999999', TRUE)")
    tables = {"rest_db.app": ("app", APPEND_TYPES, 2, ("pyiceberg", "spark"))}
    # Upserts: format 2 lands equality deletes, which pyiceberg 0.12 cannot read (README,
    # Sinks); format 1 rewrites the files holding the keys, which every reader reads.
    for sink, fv, readers in (("ups", 2, ("spark",)), ("ups1", 1, ("pyiceberg", "spark"))):
        srv.exec("CREATE SINK %s INTO ICEBERG 'rest_db.%s' %s WITH (mode = 'upsert', format_version = %d, %s)"
                 % (sink, sink, UPSERT_COLS, fv, opts))
        srv.exec("INSERT INTO %s VALUES (1, 'one', 1), (2, 'two', 2), (3, 'three', 3), (4, 'four', 4), (5, 'five', 5)" % sink)
        srv.exec("INSERT INTO %s (_op, id, v, n) VALUES ('U', 2, 'TWO', 20), ('D', 3, NULL, NULL), ('I', 6, 'six', 6)" % sink)
        srv.exec("DELETE FROM %s WHERE id = 4" % sink)
        srv.exec("UPDATE %s SET n = n + 100 WHERE id = 5" % sink)
        tables["rest_db." + sink] = (sink, UPSERT_TYPES, 4, readers)
    return tables


def sql_checks(ledger, rest, run_dir):
    srv = server.Server(os.path.join(run_dir, "lakesql"), extra=["--allowed-roots", rest.dir])
    with srv:
        tables = write_tables(srv, {"type": "rest", "uri": rest.uri})
        want = {"rest_db.app": [(1, 9223372036854775807, 1.5, decimal.Decimal("12345.678"), "a b",
                                 datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 12, 34, 56, 123456), 1),
                                (2, -1, -0.25, decimal.Decimal("-0.001"), "ünï", datetime.date(1969, 12, 31),
                                 datetime.datetime(1900, 1, 1), 0),
                                (3, None, None, None, None, None, None, None),
                                (4, 0, 1e300, decimal.Decimal("999999999.999"), "", datetime.date(1, 1, 1),
                                 datetime.datetime(9999, 12, 31, 23, 59, 59, 999999), 1)],
                "rest_db.ups": [(1, "one", 1), (2, "TWO", 20), (5, "five", 105), (6, "six", 6)]}
        want["rest_db.ups1"] = want["rest_db.ups"]
        from pyiceberg.catalog.rest import RestCatalog
        cat = RestCatalog("rest", uri=rest.uri)
        for ident, (sink, types, snaps, readers) in tables.items():
            cols = list(types)
            ordered = [types[c] for c in cols]
            got = None
            with ledger.guard(ident, "lakesql"):
                _, got = srv.query("SELECT %s FROM %s" % (", ".join(cols), sink))
                ledger.rows(ident, "lakesql", want[ident], got, ordered)
            if got is None:
                continue
            tbl = None
            with ledger.guard(ident + " snapshots", "pyiceberg"):
                tbl = cat.load_table(ident)
            if tbl is None:
                continue
            if "pyiceberg" in readers:
                with ledger.guard(ident, "pyiceberg"):
                    ptypes = {f.name: compare.iceberg_type(f.field_type) for f in tbl.schema().fields}
                    d = compare.diff_types(types, ptypes)
                    arrow = tbl.scan(selected_fields=tuple(cols)).to_arrow()
                    prow = engines.arrow_rows(arrow, cols)
                    if d:
                        ledger.wrong(ident, "pyiceberg", "types: " + d)
                    else:
                        ledger.rows(ident, "pyiceberg", got, prow, ordered)
            with ledger.guard(ident + " snapshots", "pyiceberg"):
                chain = []
                s = tbl.current_snapshot()
                while s is not None:
                    chain.append(s)
                    s = tbl.metadata.snapshot_by_id(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
                epochs = [(s.summary.additional_properties.get("lakesql.writer-id"),
                           s.summary.additional_properties.get("lakesql.epoch")) for s in reversed(chain)]
                wantep = [("lakesql-" + sink, str(e)) for e in range(1, snaps + 1)]
                ledger.check(ident + " snapshots", "pyiceberg", epochs == wantep,
                             "%d snapshots, epochs 1..%d of lakesql-%s" % (len(chain), snaps, sink)
                             if epochs == wantep else "summaries %s, want %s" % (epochs, wantep))
            with ledger.guard(ident, "spark"):
                sparkmod.iceberg_catalog("lakerest", type="rest", uri=rest.uri, cache_enabled="false")
                stypes, srows = engines.spark_sql("SELECT %s FROM lakerest.%s" % (", ".join(cols), ident))
                d = compare.diff_types(types, stypes)
                if d:
                    ledger.wrong(ident, "spark", "types: " + d)
                else:
                    ledger.rows(ident, "spark", got, srows, ordered)


def foreign_writes(ledger, rest, run_dir):
    """Spark writes into lakesql's REST tables, then a restarted lakesql (its sinks reopened
    from sinks.json) upserts over Spark's rows; every reader agrees after."""
    srv = server.Server(os.path.join(run_dir, "lakesql"), extra=["--allowed-roots", rest.dir])
    # Spark's catalog caches a table it loaded (cache-enabled); lakesql's commits after
    # Spark's own are seen only with the cache off.
    sparkmod.iceberg_catalog("lakerest", type="rest", uri=rest.uri, cache_enabled="false")
    s = sparkmod.session()
    with ledger.guard("rest_db.ups after spark", "spark"):
        s.sql("INSERT INTO lakerest.rest_db.ups VALUES (7, 'seven', 7), (8, 'eight', 8)").collect()
        s.sql("INSERT INTO lakerest.rest_db.ups1 VALUES (7, 'seven', 7), (8, 'eight', 8)").collect()
    with srv:
        for sink in ("ups", "ups1"):
            ident = "rest_db." + sink
            srv.exec("INSERT INTO %s (_op, id, v, n) VALUES ('U', 7, 'SEVEN', 70), ('D', 1, NULL, NULL)" % sink)
            want = [(2, "TWO", 20), (5, "five", 105), (6, "six", 6), (7, "SEVEN", 70), (8, "eight", 8)]
            got = None
            with ledger.guard(ident + " after spark", "lakesql"):
                _, got = srv.query("SELECT id, v, n FROM %s" % sink)
                ledger.rows(ident + " after spark", "lakesql", want, got, ["bigint", "string", "int"])
            if got is None:
                continue
            with ledger.guard(ident + " after spark", "spark"):
                _, srows = engines.spark_sql("SELECT id, v, n FROM lakerest.%s" % ident)
                ledger.rows(ident + " after spark", "spark", got, srows, ["bigint", "string", "int"])
            if sink == "ups1":
                with ledger.guard(ident + " after spark", "pyiceberg"):
                    from pyiceberg.catalog.rest import RestCatalog
                    arrow = RestCatalog("rest", uri=rest.uri).load_table(ident).scan(selected_fields=("id", "v", "n")).to_arrow()
                    prow = engines.arrow_rows(arrow, ("id", "v", "n"))
                    ledger.rows(ident + " after spark", "pyiceberg", got, prow, ["bigint", "string", "int"])


def run(ledger):
    run_dir = paths.workdir("rest_catalog")
    rest = RESTFixture(os.path.join(run_dir, "rest"))
    os.makedirs(rest.dir)
    with ledger.guard("(%s %s)" % (MAIN, ICEBERG), "harness"):
        rest.start()
    if rest.proc is None or rest.proc.poll() is not None:
        return
    try:
        go_tests(ledger, rest)
        sql_checks(ledger, rest, run_dir)
        foreign_writes(ledger, rest, run_dir)
    finally:
        rest.stop()
