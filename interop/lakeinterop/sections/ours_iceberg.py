"""Section 1, Iceberg: tables lakesql writes into its own SQLite catalog, read by pyiceberg and Spark.

Every table is written through lakesql's SQL (CREATE SINK ... INTO ICEBERG,
INSERT, changelog `_op` rows, UPDATE, DELETE) into the data directory's
default catalog, DATA/iceberg/catalog.db. While the server still holds that
file open, pyiceberg opens it through its own SqlCatalog and Spark through
Iceberg's JdbcCatalog; each must read the rows and types lakesql's SELECT
returns, at the current snapshot and at every older one (time travel), and
the snapshots must be the ones lakesql committed (ids, lakesql.writer-id,
lakesql.epoch).
"""
import collections
import datetime
import os
import sqlite3
import threading
import time

from .. import compare, engines, paths
from .. import spark as sparkmod
from ..server import Server
from . import ours_iceberg_tables as tables

NS = "interop"


def run(ledger):
    d = paths.workdir("ours_iceberg")
    took = collections.Counter()
    # Spark's JVM starts while lakesql writes (when no section before started it).
    boot = threading.Thread(target=sparkmod.session, daemon=True)
    boot.start()
    with Server(d) as srv:
        built = []
        start = time.time()
        for t in tables.TABLES:
            with ledger.guard(t.name, "lakesql"):
                t.build(srv, NS, ledger)
                built.append(t)
        took["lakesql writes"] += time.time() - start
        # Readers open the catalog while lakesql still has it open (WAL).
        db = os.path.join(srv.data, "iceberg", "catalog.db")
        cat_name = _catalog_name(ledger, db)
        if cat_name is None:
            return
        cat = None
        with ledger.guard("(catalog)", "pyiceberg"):
            from pyiceberg.catalog.sql import SqlCatalog
            cat = SqlCatalog(cat_name, uri="sqlite:///" + db,
                             warehouse="file://" + os.path.join(srv.data, "iceberg", "warehouse"))
        start = time.time()
        boot.join()
        took["waiting for spark"] += time.time() - start
        sparkmod.iceberg_sqlite_catalog(cat_name, srv.data, cat_name)
        spark_snaps = None
        start = time.time()
        with ledger.guard("(snapshots)", "spark"):
            spark_snaps = _spark_snapshots(cat_name, [t.name for t in built])
        took["spark"] += time.time() - start
        for t in built:
            if cat is not None:
                start = time.time()
                with ledger.guard(t.name, "pyiceberg"):
                    _pyiceberg(ledger, cat, t)
                took["pyiceberg"] += time.time() - start
            start = time.time()
            if spark_snaps is not None:
                with ledger.guard(t.name, "spark"):
                    _spark(ledger, cat_name, t, spark_snaps)
            took["spark"] += time.time() - start
    ledger.out("ours_iceberg: " + ", ".join("%s %.0fs" % kv for kv in took.items()))


def _catalog_name(ledger, db):
    """The one catalog_name lakesql's rows carry in iceberg_tables."""
    with ledger.guard("(catalog)", "pyiceberg"):
        c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        try:
            names = [r[0] for r in c.execute("SELECT DISTINCT catalog_name FROM iceberg_tables")]
            mode = c.execute("PRAGMA journal_mode").fetchone()[0]
        finally:
            c.close()
        ok = len(names) == 1 and mode == "wal"
        ledger.check("(catalog)", "pyiceberg", ok, "catalog_name %s, journal_mode %s" % (names, mode))
        return names[0] if ok else None
    return None


# --- pyiceberg ---------------------------------------------------------------

def _pyiceberg(ledger, cat, t):
    tbl = cat.load_table("%s.%s" % (NS, t.name))
    eng = "pyiceberg"
    # Types: the README's Iceberg column of each declared type, nullability included.
    got = {f.name: compare.iceberg_type(f.field_type) + ("" if not f.required else " not null")
           for f in tbl.schema().fields}
    d = compare.diff_types(t.want_types(), got)
    ledger.check(t.name, eng, d is None, "types: " + (d or "%d columns as declared" % len(got)))
    _snapshots(ledger, t, eng, [(s.snapshot_id, s.parent_snapshot_id, dict(s.summary.additional_properties))
                                for s in tbl.snapshots()])
    _delete_files(ledger, t, tbl)
    if t.partitioned:
        _partition_values(ledger, t, tbl)
    # Rows: the current snapshot and each older one lakesql recorded.
    for i, c in enumerate(t.commits):
        what = "rows at snapshot %d of %d" % (i + 1, len(t.commits))
        if _has_eq_deletes(tbl, c.snapshot_id):
            # pyiceberg 0.12 plans no equality deletes (README "### Sinks"); it
            # must refuse rather than read the rows they delete.
            try:
                tbl.scan(snapshot_id=c.snapshot_id).to_arrow()
            except ValueError as e:
                if "equality deletes" in str(e):
                    ledger.out("note  ours_iceberg: %s by pyiceberg: %s: pyiceberg does not read equality deletes" % (t.name, what))
                    continue
                raise
            ledger.wrong(t.name, eng, what + ": pyiceberg read a snapshot with equality deletes; compare it now")
            continue
        arrow = tbl.scan(snapshot_id=c.snapshot_id, selected_fields=tuple(t.cols)).to_arrow()
        rows = engines.arrow_rows(arrow, t.cols)
        ledger.rows(t.name, eng, c.rows, rows, t.canon_types(), what=what)
    if t.filters:
        # pyiceberg prunes files by their partition values: a wrong value loses rows.
        from pyiceberg.expressions import EqualTo, IsNull
        if not _has_eq_deletes(tbl, t.commits[-1].snapshot_id):
            bad = []
            for col, val, want in t.filters:
                lit = val.isoformat() if isinstance(val, datetime.date) else val
                expr = IsNull(col) if val is None else EqualTo(col, lit)
                arrow = tbl.scan(row_filter=expr, selected_fields=tuple(t.cols)).to_arrow()
                rows = engines.arrow_rows(arrow, t.cols)
                dd = compare.diff_rows(want, rows, t.canon_types())
                if dd:
                    bad.append("%s = %r: %s" % (col, val, dd))
            ledger.check(t.name, eng, not bad, "filtered scans: " + ("; ".join(bad) if bad else "%d partition values, pruned right" % len(t.filters)))


def _has_eq_deletes(tbl, snapshot_id):
    """Whether the snapshot has live equality delete files."""
    for m in tbl.snapshot_by_id(snapshot_id).manifests(tbl.io):
        for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
            if _content(e.data_file) == "EQUALITY_DELETES":
                return True
    return False


def _content(f):
    """A data file's content kind by name (format 1 manifests leave it a plain 0)."""
    from pyiceberg.manifest import DataFileContent
    return DataFileContent(int(f.content)).name


def _delete_files(ledger, t, tbl):
    """Upserts of a format-2 table land as equality deletes on the key; format 1 has none."""
    if t.mode != "upsert":
        return
    kinds = {}
    for m in tbl.current_snapshot().manifests(tbl.io):
        for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
            f = e.data_file
            key = (_content(f), tuple(f.equality_ids or ()))
            kinds[key] = kinds.get(key, 0) + 1
    key_ids = tuple(sorted(tbl.schema().find_field(k).field_id for k in t.key))
    if t.format_version == 1:
        ok = set(k for k, _ in kinds) == {"DATA"}
        want = "data files only"
    else:
        dels = {k for k in kinds if k[0] != "DATA"}
        ok = bool(dels) and all(k[0] == "EQUALITY_DELETES" and tuple(sorted(k[1])) == key_ids for k in dels)
        want = "equality deletes on field ids %s" % (key_ids,)
    ledger.check(t.name, "pyiceberg", ok, "format %d delete files, want %s: %s" % (
        t.format_version, want, ", ".join("%s%s x%d" % (k[0], list(k[1]) if k[1] else "", n) for k, n in sorted(kinds.items()))))


def _partition_values(ledger, t, tbl):
    """Each live data file's partition tuple is what pyiceberg's transforms make of its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = tbl.schema()
    specs = tbl.specs()
    bad, files = [], 0
    for m in tbl.current_snapshot().manifests(tbl.io):
        for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
            f = e.data_file
            if _content(f) != "DATA":
                continue
            files += 1
            spec = specs[f.spec_id]
            with tbl.io.new_input(f.file_path).open() as fh:  # pyiceberg's own FileIO
                data = pq.read_table(fh)
            for i, pf in enumerate(spec.fields):
                src = schema.find_field(pf.source_id)
                col = data.column(src.name)
                if pa.types.is_timestamp(col.type):
                    col = col.cast(pa.timestamp("us", tz=col.type.tz)).cast(pa.int64())
                elif pa.types.is_date(col.type):
                    col = col.cast(pa.int32())
                fn = pf.transform.transform(src.field_type)
                made = {fn(v) for v in col.to_pylist()}
                stored = f.partition[i]
                if made != {stored}:
                    bad.append("%s: %s(%s) of the rows is %s, the file says %r" % (
                        os.path.basename(f.file_path), pf.transform, src.name, sorted(made, key=repr), stored))
    ledger.check(t.name, "pyiceberg", not bad and files > 0,
                 "partition values: " + ("; ".join(bad[:4]) if bad else "%d files, every transform agrees" % files))


def _snapshots(ledger, t, eng, snaps):
    """The table's snapshots are lakesql's commits: ids, writer id and epochs, in order."""
    want = [(c.snapshot_id, t.writer_id, str(c.epoch)) for c in t.commits]
    got = [(sid, s.get("lakesql.writer-id"), s.get("lakesql.epoch")) for sid, _, s in _lineage(snaps)]
    ledger.check(t.name, eng, got == want, "snapshots: %d committed, %d read%s" % (
        len(want), len(got), "" if got == want else ": want %s, read %s" % (want, got)))


def _lineage(snaps):
    """(id, parent, summary) snapshots oldest first, by parent links (commit times may tie)."""
    children = {}
    for sn in snaps:
        children.setdefault(sn[1], []).append(sn)
    out, parent = [], None
    while len(children.get(parent, ())) == 1:
        sn = children[parent][0]
        out.append(sn)
        parent = sn[0]
    # A fork or a stray snapshot stays visible: the count then differs.
    return out + [sn for sn in snaps if sn not in out]


# --- Spark -------------------------------------------------------------------

def _spark_snapshots(cat_name, names):
    """{table: [(id, parent, summary)]} of every table's snapshots metadata table, in one query."""
    q = " UNION ALL ".join("SELECT '%s' AS t, snapshot_id, parent_id, summary FROM %s.%s.%s.snapshots" % (n, cat_name, NS, n)
                           for n in names)
    out = {n: [] for n in names}
    for r in sparkmod.session().sql(q).collect():
        out[r.t].append((r.snapshot_id, r.parent_id, dict(r.summary)))
    return out


def _spark(ledger, cat_name, t, spark_snaps):
    s = sparkmod.session()
    name = "%s.%s.%s" % (cat_name, NS, t.name)
    eng = "spark"
    cols = ", ".join("`%s`" % c for c in t.cols)
    df = s.sql("SELECT %s FROM %s" % (cols, name))
    got = {f.name: f.dataType.simpleString() + ("" if f.nullable else " not null") for f in df.schema.fields}
    d = compare.diff_types(t.want_types(), got)
    ledger.check(t.name, eng, d is None, "types: " + (d or "%d columns as declared" % len(got)))
    _snapshots(ledger, t, eng, spark_snaps[t.name])
    # PySpark cannot hand year-1 timestamps to Python (its conversion goes
    # through local time): the JVM renders them as text (UTC), parsed here.
    ts = [i for i, ty in enumerate(t.canon_types()) if ty in ("timestamp", "timestamp_ntz")]
    cols = ", ".join("CAST(`%s` AS STRING) AS `%s`" % (c, c) if i in ts else "`%s`" % c for i, c in enumerate(t.cols))

    def collect(q, args=None, tagged=0):
        out = []
        for r in s.sql(q, args=args).collect():
            r = list(r)
            for i in ts:
                i += tagged
                if r[i] is not None:
                    r[i] = datetime.datetime.fromisoformat(r[i])
            out.append(tuple(r))
        return out

    # One query (one Spark job) per table: a branch per snapshot (the current
    # one plainly, older ones by VERSION AS OF) and one per filtered value
    # (each pruned on its own), tagged by kind and index.
    branches, args = [], []
    for i, c in enumerate(t.commits):
        branches.append("SELECT 0 AS `_k`, %d AS `_i`, %s FROM %s%s" % (
            i, cols, name, "" if i == len(t.commits) - 1 else " VERSION AS OF %d" % c.snapshot_id))
    for i, (col, val, _) in enumerate(t.filters):
        if val is None:
            cond = "`%s` IS NULL" % col
        elif isinstance(val, datetime.date):
            cond = "`%s` = DATE '%s'" % (col, val.isoformat())  # PySpark sends year 1 as '1-01-01'
        else:
            cond, args = "`%s` = ?" % col, args + [val]
        branches.append("SELECT 1 AS `_k`, %d AS `_i`, %s FROM %s WHERE %s" % (i, cols, name, cond))
    got = {}
    for r in collect(" UNION ALL ".join(branches), args or None, tagged=2):
        got.setdefault(r[:2], []).append(r[2:])
    for i, c in enumerate(t.commits):
        what = "rows at snapshot %d of %d" % (i + 1, len(t.commits))
        ledger.rows(t.name, eng, c.rows, got.get((0, i), []), t.canon_types(), what=what)
    if t.filters:
        bad = []
        for i, (col, val, want) in enumerate(t.filters):
            dd = compare.diff_rows(want, got.get((1, i), []), t.canon_types())
            if dd:
                bad.append("%s = %r: %s" % (col, val, dd))
        ledger.check(t.name, eng, not bad, "filtered reads: " + ("; ".join(bad) if bad else "%d partition values, pruned right" % len(t.filters)))
