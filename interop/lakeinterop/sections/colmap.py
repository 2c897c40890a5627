"""Section: Delta tables lakesql writes with column mapping, read by Spark and delta-rs.

One `lakesql serve` creates two Delta upsert sinks, `WITH (column_mapping =
'name')` and `WITH (column_mapping = 'id')`, partitioned by p, and writes
three epochs into each: inserts, then updates and deletes (copy-on-write
rewrites of files named by physical name), then inserts again. lakesql,
Spark and delta-rs then read exactly the rows a model says, under the
logical names, and the log holds the mode, maxColumnId and the protocol
(reader 2 / writer 5). (Spark's own column-mapped table, renamed columns
included, which lakesql appends to and upserts into: the theirs section.)
"""
import glob
import json
import os

from .. import engines, paths
from ..server import Server

COLS = ["id", "p", "v"]


def run(ledger):
    d = paths.workdir("colmap")
    tables = os.path.join(d, "tables")
    os.makedirs(tables)
    with Server(os.path.join(d, "srv"), extra=["--allowed-roots", tables]) as srv:
        for mode in ("name", "id"):
            name = "cm_" + mode
            path = os.path.join(tables, name)
            with ledger.guard(name, "harness"):
                srv.exec("CREATE SINK `%s` INTO DELTA %%s (id BIGINT NOT NULL, p INT, v VARCHAR(20), PRIMARY KEY (id)) "
                         "PARTITION BY (p) WITH (mode = 'upsert', column_mapping = '%s', auto_compact = false)"
                         % (name, mode), (path,))
                model = {}
                srv.exec("INSERT INTO `%s` VALUES (1, 0, 'a'), (2, 1, 'b'), (3, 0, NULL), (4, 1, 'd')" % name)
                model.update({1: (0, "a"), 2: (1, "b"), 3: (0, None), 4: (1, "d")})
                srv.exec("UPDATE `%s` SET v = 'bb' WHERE id = 2" % name)
                model[2] = (1, "bb")
                srv.exec("DELETE FROM `%s` WHERE id = 3" % name)
                del model[3]
                srv.exec("INSERT INTO `%s` VALUES (5, 2, 'e')" % name)
                model[5] = (2, "e")
            want = [(k,) + v for k, v in model.items()]
            with ledger.guard(name, "lakesql"):
                _, rows = engines.lakesql(srv, name, COLS)
                ledger.rows(name, "lakesql", want, [tuple(r) for r in rows])
            with ledger.guard(name, "spark"):
                _, rows = engines.spark_delta(path, columns=COLS)
                ledger.rows(name, "spark", want, rows)
            with ledger.guard(name, "delta-rs"):
                _, rows = engines.deltars(path, columns=COLS)
                ledger.rows(name, "delta-rs", want, rows)
            with ledger.guard(name, "log"):
                ledger.check(name, "log", *_log_ok(path, mode))


def _log_ok(path, mode):
    """(ok, detail): version 0's protocol and metaData are column mapping's."""
    first = sorted(glob.glob(os.path.join(path, "_delta_log", "*.json")))[0]
    proto, md = None, None
    for line in open(first):
        a = json.loads(line)
        proto = a.get("protocol", proto)
        md = a.get("metaData", md)
    conf = md["configuration"]
    fields = json.loads(md["schemaString"])["fields"]
    ids = [f["metadata"]["delta.columnMapping.id"] for f in fields]
    ok = (proto["minReaderVersion"] >= 2 and proto["minWriterVersion"] >= 5 and conf.get("delta.columnMapping.mode") == mode
          and len(set(ids)) == len(ids) and int(conf["delta.columnMapping.maxColumnId"]) >= max(ids)
          and all(f["metadata"]["delta.columnMapping.physicalName"].startswith("col-") for f in fields))
    return ok, "protocol %s, mode %s, ids %s, maxColumnId %s" % (proto, conf.get("delta.columnMapping.mode"), ids,
                                                                 conf.get("delta.columnMapping.maxColumnId"))
