"""Section: CHECK constraints and generated columns between lakesql and Spark (Delta).

1. lakesql's table: a sink writes rows, ALTER SINK ... ADD CONSTRAINT adds
   one. Spark must read the rows and see the constraint as Spark spells it
   (SHOW TBLPROPERTIES: delta.constraints.<name>), and Spark's own INSERT of
   a violating row must be refused by Spark (so the constraint is one Spark
   enforces), while a good one lands and lakesql reads it.
2. Spark's table: Spark creates a table with a CHECK constraint. lakesql
   attaches it; its INSERT of a violating row is 3819 naming the
   constraint, a good one lands, and Spark reads every row lakesql wrote.
"""
import os

import pymysql

from .. import engines, paths
from .. import spark as sparkmod
from ..server import Server, error_code


def _sp(sql):
    return sparkmod.session().sql(sql)


def _refused(ledger, table, srv, sql, code, words):
    """lakesql's statement must fail with code, its message holding words."""
    try:
        srv.exec(sql)
    except pymysql.err.MySQLError as e:
        msg = str(e.args[1]) if len(e.args) > 1 else str(e)
        ok = error_code(e) == code and all(w in msg for w in words)
        ledger.check(table, "lakesql", ok, "refused with %d naming %s (%s)" % (code, ", ".join(words), msg[:160]))
        return
    ledger.wrong(table, "lakesql", "%s was accepted; expected %d" % (sql, code))


def run(ledger):
    d = paths.workdir("constraints_delta")
    tables = os.path.join(d, "tables")
    os.makedirs(tables)
    sparkmod.session()
    with Server(os.path.join(d, "srv"), extra=["--allowed-roots", tables]) as srv:
        ours(ledger, srv, os.path.join(tables, "ours"))
        theirs(ledger, srv, os.path.join(tables, "theirs"))


def ours(ledger, srv, path):
    t = "lakesql constrained"
    with ledger.guard(t, "lakesql"):
        srv.exec("CREATE SINK oc INTO DELTA %s (id BIGINT NOT NULL, amount INT, region VARCHAR(8)) "
                 "WITH (auto_compact = false)", (path,))
        srv.exec("INSERT INTO oc VALUES (1, 10, 'eu'), (2, 20, 'us')")
        srv.exec("ALTER SINK oc ADD CONSTRAINT positive CHECK (amount > 0 AND region IN ('eu', 'us'))")
        _refused(ledger, t, srv, "INSERT INTO oc VALUES (3, -1, 'eu')", 3819, ["positive"])
    with ledger.guard(t, "spark"):
        props = {r[0]: r[1] for r in _sp("SHOW TBLPROPERTIES delta.`%s`" % path).collect()}
        ledger.check(t, "spark", props.get("delta.constraints.positive") == "amount > 0 AND region IN ('eu', 'us')",
                     "sees delta.constraints.positive = %r" % props.get("delta.constraints.positive"))
        try:
            _sp("INSERT INTO delta.`%s` VALUES (4, -4, 'eu')" % path)
            ledger.wrong(t, "spark", "Spark took a row breaking lakesql's constraint")
        except Exception as e:  # Spark's DeltaInvariantViolationException
            ledger.check(t, "spark", "positive" in str(e).lower(), "refuses a violating row: %s" % str(e).splitlines()[0][:160])
        _sp("INSERT INTO delta.`%s` VALUES (5, 5, 'us')" % path)
        _, rows = engines.spark_delta(path)
        ledger.rows(t, "spark", [(1, 10, "eu"), (2, 20, "us"), (5, 5, "us")], rows)
    with ledger.guard(t, "lakesql"):
        _, rows = engines.lakesql(srv, "oc", ["id", "amount", "region"])
        ledger.rows(t, "lakesql", [(1, 10, "eu"), (2, 20, "us"), (5, 5, "us")], [tuple(r) for r in rows])


def theirs(ledger, srv, path):
    # Spark's session here has no DeltaCatalog, which generated columns
    # need (run 2: UNSUPPORTED_FEATURE); the Go tests cover them on a table
    # written as Spark spells it.
    t = "spark constrained"
    with ledger.guard(t, "spark"):
        _sp("CREATE TABLE delta.`%s` (id BIGINT NOT NULL, amount INT) USING delta" % path)
        _sp("INSERT INTO delta.`%s` VALUES (1, 1)" % path)
        _sp("ALTER TABLE delta.`%s` ADD CONSTRAINT small CHECK (amount < 100)" % path)
    with ledger.guard(t, "lakesql"):
        srv.exec("CREATE SINK tc INTO DELTA %s WITH (auto_compact = false)", (path,))
        _refused(ledger, t, srv, "INSERT INTO tc VALUES (2, 100)", 3819, ["small"])
        srv.exec("INSERT INTO tc VALUES (4, 4)")
        _, rows = engines.lakesql(srv, "tc", ["id", "amount"])
        ledger.rows(t, "lakesql", [(1, 1), (4, 4)], [tuple(r) for r in rows])
    with ledger.guard(t, "spark"):
        _, rows = engines.spark_delta(path)
        ledger.rows(t, "spark", [(1, 1), (4, 4)], rows)
