"""Section schema_iceberg: Iceberg schema evolution, seen by pyiceberg and Spark, both ways.

1. lakesql evolves: a sink INTO ICEBERG takes rows, then ALTER SINK ADD
   COLUMN (with a COMMENT), MODIFY COLUMN (INT to BIGINT, FLOAT to
   DOUBLE), RENAME COLUMN and DROP COLUMN, each followed by an INSERT under
   the new schema. After every step pyiceberg and Spark read the table
   from lakesql's SQLite catalog: the columns and types of a plain model of
   the steps (which lakesql's own SELECT must match too), and its rows: a
   column added after a row reads NULL, a renamed one keeps its values, a
   widened one its numbers, a dropped one is gone. The field ids stay: a
   renamed column keeps its id, a column added after a DROP gets a new one.
2. pyiceberg evolves: it adds a column, widens one and renames one of a
   lakesql sink's table; lakesql keeps writing into it (INSERT naming the
   new columns), and lakesql's SELECT, pyiceberg and Spark read the rows
   the model says.
"""
import os
import time

from .. import compare, paths
from .. import spark as sparkmod
from ..server import Server

NS = "interop_schema"
CAT = "lakesql"  # the catalog_name lakesql writes, which Spark's JdbcCatalog must be named


class _LazyCatalog:
    """pyiceberg's SqlCatalog on lakesql's catalog file, opened on first use (the file exists once a sink does)."""

    def __init__(self, db, warehouse):
        self.db, self.warehouse, self.cat = db, warehouse, None

    def load_table(self, name):
        if self.cat is None:
            from pyiceberg.catalog.sql import SqlCatalog
            self.cat = SqlCatalog(CAT, uri="sqlite:///" + self.db, warehouse="file://" + self.warehouse)
        return self.cat.load_table(name)


class Model:
    """The columns (name, Spark type) and rows (dicts by column identity) of a table."""

    def __init__(self, cols):
        self.cols = [dict(ident=i, name=n, type=t) for i, (n, t) in enumerate(cols)]
        self.rows = []
        self.next = len(cols)

    def find(self, name):
        return next(c for c in self.cols if c["name"] == name)

    def add(self, name, typ):
        self.cols.append(dict(ident=self.next, name=name, type=typ))
        self.next += 1

    def insert(self, **vals):
        self.rows.append({self.find(k)["ident"]: v for k, v in vals.items()})

    def drop(self, name):
        self.cols.remove(self.find(name))

    def names(self):
        return [c["name"] for c in self.cols]

    def types(self):
        return {c["name"]: c["type"] for c in self.cols}

    def table(self):
        return [tuple(r.get(c["ident"]) for c in self.cols) for r in self.rows]


def run(ledger):
    d = paths.workdir("schema_iceberg")
    took = {}
    with Server(d) as srv:
        db = os.path.join(srv.data, "iceberg", "catalog.db")
        start = time.time()
        sparkmod.iceberg_sqlite_catalog(CAT, srv.data, CAT)
        took["spark start"] = time.time() - start
        cat = _LazyCatalog(db, os.path.join(srv.data, "iceberg", "warehouse"))
        start = time.time()
        for keyed in (False, True):
            with ledger.guard("evo_keyed" if keyed else "evo", "lakesql"):
                _lakesql_evolves(ledger, srv, cat, keyed)
        took["lakesql evolves"] = time.time() - start
        start = time.time()
        with ledger.guard("evo_theirs", "lakesql"):
            _pyiceberg_evolves(ledger, srv, cat)
        took["pyiceberg evolves"] = time.time() - start
    ledger.out("schema_iceberg: " + ", ".join("%s %.0fs" % kv for kv in took.items()))


def _lakesql_evolves(ledger, srv, cat, keyed):
    """keyed: an upsert sink on id, whose upserts are equality deletes (Spark reads them, pyiceberg not)."""
    name = "evo_keyed" if keyed else "evo"
    m = Model([("id", "bigint"), ("qty", "int"), ("price", "float"), ("region", "string")])
    key = ", PRIMARY KEY (`id`)) WITH (mode = 'upsert'" if keyed else ""
    srv.exec("CREATE SINK `%s` INTO ICEBERG '%s.%s' (`id` BIGINT NOT NULL, `qty` INT, `price` FLOAT, `region` VARCHAR(16)%s)" % (name, NS, name, key))
    steps = [
        ("insert", "INSERT INTO {t} (id, qty, price, region) VALUES (1, 10, 1.5, 'eu'), (2, 20, 2.5, 'us')",
         lambda: (m.insert(id=1, qty=10, price=1.5, region="eu"), m.insert(id=2, qty=20, price=2.5, region="us"))),
        ("ADD COLUMN", "ALTER SINK {t} ADD COLUMN note VARCHAR(32) COMMENT 'free text'", lambda: m.add("note", "string")),
        ("insert after ADD", "INSERT INTO {t} (id, qty, price, region, note) VALUES (3, 30, 3.5, 'ap', 'n3')",
         lambda: m.insert(id=3, qty=30, price=3.5, region="ap", note="n3")),
        ("MODIFY COLUMN qty", "ALTER SINK {t} MODIFY COLUMN qty BIGINT", lambda: m.find("qty").update(type="bigint")),
        ("MODIFY COLUMN price", "ALTER SINK {t} MODIFY COLUMN price DOUBLE", lambda: m.find("price").update(type="double")),
        ("insert after widening", "INSERT INTO {t} (id, qty, price, region, note) VALUES (4, 5000000000, 4.25, 'eu', 'n4')",
         lambda: m.insert(id=4, qty=5000000000, price=4.25, region="eu", note="n4")),
        ("RENAME COLUMN", "ALTER SINK {t} RENAME COLUMN region TO area", lambda: m.find("region").update(name="area")),
        ("insert after RENAME", "INSERT INTO {t} (id, qty, price, area, note) VALUES (5, 50, 5.5, 'us', 'n5')",
         lambda: m.insert(id=5, qty=50, price=5.5, area="us", note="n5")),
    ]
    if keyed:
        steps.append(("insert: upsert after RENAME", "INSERT INTO {t} (id, qty, price, area, note) VALUES (1, 11, 1.25, 'eu2', 'u1')",
                      lambda: (m.rows.pop(0), m.insert(id=1, qty=11, price=1.25, area="eu2", note="u1"))))
    steps += [
        ("DROP COLUMN", "ALTER SINK {t} DROP COLUMN note", lambda: m.drop("note")),
        ("ADD COLUMN again", "ALTER SINK {t} ADD COLUMN note BIGINT", lambda: m.add("note", "bigint")),
        ("insert after DROP", "INSERT INTO {t} (id, qty, price, area, note) VALUES (6, 60, 6.5, 'ap', 66)",
         lambda: m.insert(id=6, qty=60, price=6.5, area="ap", note=66)),
    ]
    ids = {}
    for what, sql, apply in steps:
        srv.exec(sql.replace("{t}", "`%s`" % name))
        apply()
        if what.startswith("insert"):
            _read_all(ledger, srv, cat, name, m, what)
        else:
            tbl = cat.load_table("%s.%s" % (NS, name))
            for f in tbl.schema().fields:
                ids.setdefault(f.name, set()).add(f.field_id)
    tbl = cat.load_table("%s.%s" % (NS, name))
    got = {f.name: f.field_id for f in tbl.schema().fields}
    want_ok = (got["area"] in ids.get("region", set()) and len(ids["note"]) == 2 and got["note"] == max(ids["note"]))
    ledger.check(name, "pyiceberg", want_ok, "field ids %s: area keeps region's id, the new note another than the dropped one's (%s)" % (got, sorted(ids["note"])))


def _pyiceberg_evolves(ledger, srv, cat):
    from pyiceberg.types import DoubleType, LongType, StringType
    name = "evo_theirs"
    m = Model([("id", "bigint"), ("qty", "int"), ("price", "float")])
    srv.exec("CREATE SINK `%s` INTO ICEBERG '%s.%s' (`id` BIGINT NOT NULL, `qty` INT, `price` FLOAT)" % (name, NS, name))
    srv.exec("INSERT INTO `%s` (id, qty, price) VALUES (1, 1, 0.5)" % name)
    m.insert(id=1, qty=1, price=0.5)
    tbl = cat.load_table("%s.%s" % (NS, name))
    with tbl.update_schema() as u:
        u.add_column("tag", StringType())
        u.update_column("qty", field_type=LongType())
        u.update_column("price", field_type=DoubleType())
        u.rename_column("price", "cost")
    m.add("tag", "string")
    m.find("qty").update(type="bigint")
    m.find("price").update(type="double", name="cost")
    _reattach(srv, name)
    srv.exec("INSERT INTO `%s` (id, qty, cost, tag) VALUES (2, 6000000000, 2.5, 't2')" % name)
    m.insert(id=2, qty=6000000000, cost=2.5, tag="t2")
    _read_all(ledger, srv, cat, name, m, "lakesql's insert after pyiceberg's ADD, widening and RENAME")
    with cat.load_table("%s.%s" % (NS, name)).update_schema() as u:
        u.delete_column("tag")
    m.drop("tag")
    _reattach(srv, name)
    srv.exec("INSERT INTO `%s` (id, qty, cost) VALUES (3, 3, 3.5)" % name)
    m.insert(id=3, qty=3, cost=3.5)
    _read_all(ledger, srv, cat, name, m, "lakesql's insert after pyiceberg's DROP")


def _reattach(srv, name):
    """A sink takes another engine's schema change when it opens (README,
    Limitations): DROP SINK keeps the table, and CREATE SINK without
    columns attaches it again under its current schema."""
    srv.exec("DROP SINK `%s`" % name)
    srv.exec("CREATE SINK `%s` INTO ICEBERG '%s.%s'" % (name, NS, name))


def _read_all(ledger, srv, cat, name, m, what):
    """lakesql's SELECT, pyiceberg and Spark read the model's columns and rows."""
    want = m.table()
    cols = ", ".join("`%s`" % c for c in m.names())
    # lakesql: its SELECT of the sink.
    with ledger.guard(name, "lakesql"):
        c = srv.conn().cursor()
        c.execute("SELECT * FROM `%s`" % name)
        names = [d[0] for d in c.description]
        rows = [tuple(r) for r in c.fetchall()]
        ledger.check(name, "lakesql", names == m.names(), "%s: columns %s, want %s" % (what, names, m.names()))
        ledger.rows(name, "lakesql", want, rows, what=what)
    with ledger.guard(name, "pyiceberg"):
        tbl = cat.load_table("%s.%s" % (NS, name))
        got = {f.name: compare.iceberg_type(f.field_type) for f in tbl.schema().fields}
        d = compare.diff_types(m.types(), got)
        ledger.check(name, "pyiceberg", d is None, "%s: types %s" % (what, d or "as the model"))
        if _has_eq_deletes(tbl):
            ledger.out("note  schema_iceberg: %s by pyiceberg: equality deletes, which pyiceberg does not read" % name)
        else:
            arrow = tbl.scan().to_arrow()
            rows = list(zip(*[arrow.column(n).to_pylist() for n in m.names()]))
            ledger.rows(name, "pyiceberg", want, rows, what=what)
    with ledger.guard(name, "spark"):
        sparkmod.drop_catalogs()  # lakesql committed since Spark's last read
        # Iceberg 1.10's vectorized Parquet reader fails on an int column
        # promoted to long when a file annotates it INT(32, true), as
        # DuckDB's do (apache/iceberg#16341, fixed after 1.10.1): read
        # row by row, which promotes as the spec says.
        sess = sparkmod.session()
        sess.conf.set("spark.sql.iceberg.vectorization.enabled", "false")
        df = sess.sql("SELECT %s FROM %s.%s.%s" % (cols, CAT, NS, name))
        got = {f.name: f.dataType.simpleString() for f in df.schema.fields}
        d = compare.diff_types(m.types(), got)
        ledger.check(name, "spark", d is None, "%s: types %s" % (what, d or "as the model"))
        ledger.rows(name, "spark", want, [tuple(r) for r in df.collect()], what=what)


def _has_eq_deletes(tbl):
    snap = tbl.current_snapshot()
    if snap is None:
        return False
    for mf in snap.manifests(tbl.io):
        for e in mf.fetch_manifest_entry(tbl.io, discard_deleted=True):
            if int(e.data_file.content) == 2:
                return True
    return False
