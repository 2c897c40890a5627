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

Then the other way round: Spark creates a v3 table and deletes a row of it
(Spark writes a deletion vector); lakesql attaches an upsert sink, must
read the rows Spark reads, upserts and deletes into it (its DV replacing
Spark's), and Spark and pyiceberg must read lakesql's rows.
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
        _theirs(ledger, srv, db)


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
        # pyiceberg 0.12 exposes no referenced_data_file on a manifest entry
        # (it takes it from the Puffin blob): one DV per data file is
        # checked by Spark's delete_files on sp3 and by the Go tests.
        dvs, others = 0, 0
        for m in tbl.snapshot_by_id(snap).manifests(tbl.io):
            for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
                f = e.data_file
                kind = _content(f)
                if kind == "DATA":
                    continue
                if kind == "POSITION_DELETES" and f.file_format.name == "PUFFIN":
                    dvs += 1
                else:
                    others += 1
        ok = others == 0 and (dvs > 0) == (2 <= i < len(STEPS))
        ledger.check(NAME, eng, ok, "step %d: %d deletion vectors, %d other delete files" % (i + 1, dvs, others))


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


SP = "sp3"


def _theirs(ledger, srv, db):
    name = _catalog(srv, db)
    full = "%s.%s.%s" % (name, NS, SP)
    with ledger.guard(SP, "spark"):
        s = sparkmod.session()
        s.sql("CREATE TABLE %s (id BIGINT NOT NULL, v STRING) USING iceberg TBLPROPERTIES ('format-version' = '3', "
              "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')" % full)
        s.sql("INSERT INTO %s VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')" % full)
        s.sql("DELETE FROM %s WHERE id = 2" % full)
        n = s.sql("SELECT count(*) FROM %s.delete_files WHERE content = 1 AND file_format = 'PUFFIN'" % full).collect()[0][0]
        ledger.check(SP, "spark", n >= 1, "Spark's DELETE left %d deletion vector(s)" % n)
    with ledger.guard(SP, "lakesql"):
        srv.exec("CREATE SINK `%s` INTO ICEBERG '%s.%s' (id BIGINT NOT NULL PRIMARY KEY, v TEXT) "
                 "WITH (mode = 'upsert', auto_compact = FALSE)" % (SP, NS, SP))
        _, rows = engines.lakesql(srv, SP, COLS)
        ledger.rows(SP, "lakesql", [(1, "a"), (3, "c"), (4, "d")], rows, TYPES, what="rows of Spark's table with its DV")
        srv.exec("INSERT INTO `%s` VALUES (1, 'a2'), (5, 'e')" % SP)
        srv.exec("DELETE FROM `%s` WHERE id = 3" % SP)
        _, rows = engines.lakesql(srv, SP, COLS)
        want = [(1, "a2"), (4, "d"), (5, "e")]
        ledger.rows(SP, "lakesql", want, rows, TYPES, what="rows after lakesql's upsert and delete")
    with ledger.guard(SP, "spark"):
        sparkmod.drop_catalogs()
        got = [tuple(r) for r in sparkmod.session().sql("SELECT id, v FROM %s" % full).collect()]
        ledger.rows(SP, "spark", want, got, TYPES, what="rows after lakesql's upsert and delete")
        dvs = sparkmod.session().sql("SELECT referenced_data_file FROM %s.delete_files" % full).collect()
        refs = [r[0] for r in dvs]
        twice = sorted({r for r in refs if refs.count(r) > 1})
        ok = bool(refs) and None not in refs and not twice
        ledger.check(SP, "spark", ok, "%d live delete files, all deletion vectors, data files with two: %s" % (len(refs), twice or "none"))
    with ledger.guard(SP, "pyiceberg"):
        from pyiceberg.catalog.sql import SqlCatalog
        cat = SqlCatalog(name, uri="sqlite:///" + db, warehouse="file://" + os.path.join(srv.data, "iceberg", "warehouse"))
        arrow = cat.load_table("%s.%s" % (NS, SP)).scan(selected_fields=tuple(COLS)).to_arrow()
        ledger.rows(SP, "pyiceberg", want, engines.arrow_rows(arrow, COLS), TYPES, what="rows after lakesql's upsert and delete")
