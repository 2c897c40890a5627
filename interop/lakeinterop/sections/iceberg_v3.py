"""Section iceberg_v3: a format version 3 table lakesql writes with deletion vectors, read by pyiceberg and Spark.

lakesql creates the table (CREATE SINK ... WITH (format_version = 3)) and
upserts and deletes into it: on v3 those land as deletion vectors (Puffin
files of deletion-vector-v1 blobs, one live DV per data file, a DV that
grows replacing the old one in the same snapshot), not equality deletes.
pyiceberg 0.12 and Spark with the Iceberg 1.10 runtime must read the rows
lakesql's SELECT returns at every snapshot; pyiceberg checks the delete
files are DVs and that no data file has two; Spark reads the row-lineage
column _row_id (unique across the table). OPTIMIZE then folds the DVs into
new files, which both must read the same.
"""
import os

from .. import engines, paths
from .. import spark as sparkmod
from ..server import Server

NS = "interop"
NAME = "v3dv"
COLS = ["id", "v"]
TYPES = ["long", "string"]

STEPS = [
    "INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
    "INSERT INTO {t} VALUES (5, 'e'), (6, 'f'), (7, 'g')",
    # 2 deleted, 3 and 6 upserted: DVs on both files.
    "INSERT INTO {t} (_op, id, v) VALUES ('D', 2, NULL), ('U', 3, 'c2'), ('U', 6, 'f2'), ('I', 8, 'h')",
    # 1 and 4 are in the first file, which has a DV: it is replaced.
    "INSERT INTO {t} (_op, id, v) VALUES ('D', 1, NULL), ('U', 4, 'd2')",
    "DELETE FROM {t} WHERE id = 8",
]


def run(ledger):
    d = paths.workdir("iceberg_v3")
    with Server(d) as srv:
        commits = []
        with ledger.guard(NAME, "lakesql"):
            srv.exec("CREATE SINK `%s` INTO ICEBERG '%s.%s' (id BIGINT NOT NULL PRIMARY KEY, v TEXT) "
                     "WITH (mode = 'upsert', format_version = 3, auto_compact = FALSE)" % (NAME, NS, NAME))
            for step in STEPS + ["OPTIMIZE SINK {t}"]:
                srv.exec(step.replace("{t}", "`%s`" % NAME))
                _, st = srv.query("SHOW SINK STATUS `%s`" % NAME)
                _, rows = engines.lakesql(srv, NAME, COLS)
                commits.append((st[0][3], step, rows))
        if len(commits) != len(STEPS) + 1:
            return
        db = os.path.join(srv.data, "iceberg", "catalog.db")
        with ledger.guard(NAME, "pyiceberg"):
            _pyiceberg(ledger, srv, db, commits)
        with ledger.guard(NAME, "spark"):
            _spark(ledger, srv, commits)


def _catalog(srv, db):
    import sqlite3
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return c.execute("SELECT DISTINCT catalog_name FROM iceberg_tables").fetchone()[0]
    finally:
        c.close()


def _content(f):
    from pyiceberg.manifest import DataFileContent
    return DataFileContent(int(f.content)).name


def _v3_field(f, name):
    """A v3 field of a manifest entry's data file: pyiceberg 0.12 reads it into its Record but names no attribute for it."""
    from pyiceberg.manifest import DATA_FILE_TYPE
    names = [x.name for x in DATA_FILE_TYPE[3].fields]
    return f[names.index(name)] if name in names and len(f) > names.index(name) else None


def _pyiceberg(ledger, srv, db, commits):
    from pyiceberg.catalog.sql import SqlCatalog
    name = _catalog(srv, db)
    cat = SqlCatalog(name, uri="sqlite:///" + db,
                     warehouse="file://" + os.path.join(srv.data, "iceberg", "warehouse"))
    tbl = cat.load_table("%s.%s" % (NS, NAME))
    eng = "pyiceberg"
    ledger.check(NAME, eng, tbl.format_version == 3, "format version %s, want 3" % tbl.format_version)
    for i, (snap, step, want) in enumerate(commits):
        arrow = tbl.scan(snapshot_id=snap, selected_fields=tuple(COLS)).to_arrow()
        ledger.rows(NAME, eng, want, engines.arrow_rows(arrow, COLS), TYPES,
                    what="rows after step %d (%s)" % (i + 1, step.split(" (")[0]))
        dvs, others, refs = 0, 0, {}
        for m in tbl.snapshot_by_id(snap).manifests(tbl.io):
            for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
                f = e.data_file
                kind = _content(f)
                if kind == "DATA":
                    continue
                ref = _v3_field(f, "referenced_data_file")
                if kind == "POSITION_DELETES" and f.file_format.name == "PUFFIN" and ref:
                    dvs += 1
                    refs[ref] = refs.get(ref, 0) + 1
                else:
                    others += 1
        twice = [r for r, n in refs.items() if n > 1]
        ok = others == 0 and not twice and (dvs > 0) == (2 <= i < len(STEPS))
        ledger.check(NAME, eng, ok, "step %d: %d deletion vectors, %d other delete files, data files with two DVs: %s" % (
            i + 1, dvs, others, twice or "none"))


def _spark(ledger, srv, commits):
    db = os.path.join(srv.data, "iceberg", "catalog.db")
    name = _catalog(srv, db)
    sparkmod.iceberg_sqlite_catalog(name, srv.data, name)
    s = sparkmod.session()
    full = "%s.%s.%s" % (name, NS, NAME)
    eng = "spark"
    for i, (snap, step, want) in enumerate(commits):
        got = [tuple(r) for r in s.sql("SELECT id, v FROM %s VERSION AS OF %d" % (full, snap)).collect()]
        ledger.rows(NAME, eng, want, got, TYPES, what="rows after step %d (%s)" % (i + 1, step.split(" (")[0]))
    ids = [r[0] for r in s.sql("SELECT _row_id FROM %s" % full).collect()]
    ok = len(ids) == len(commits[-1][2]) and None not in ids and len(set(ids)) == len(ids)
    ledger.check(NAME, eng, ok, "_row_id of the %d live rows: %s" % (len(ids), sorted(ids)))
    fv = s.sql("SHOW TBLPROPERTIES %s ('format-version')" % full).collect()
    ledger.check(NAME, eng, bool(fv) and fv[0][1] == "3", "format-version %s" % (fv[0][1] if fv else None))
