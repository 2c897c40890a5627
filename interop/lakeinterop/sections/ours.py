"""Section 1: tables lakesql writes, read by Spark, delta-rs and pyiceberg."""
import os

from .. import engines, paths
from ..server import Server


def run(ledger):
    d = paths.workdir("ours")
    with Server(d) as srv:
        srv.exec("CREATE SINK basic INTO DELTA 'lake/basic' (id BIGINT NOT NULL, v VARCHAR(16), amount DECIMAL(10,2), PRIMARY KEY (id)) WITH (mode = 'upsert')")
        srv.exec("INSERT INTO basic VALUES (1, 'a', 1.50), (2, NULL, -2.25)")
        srv.exec("INSERT INTO basic VALUES (2, 'b', 3.00)")
        cols = ["id", "v", "amount"]
        _, want = engines.lakesql(srv, "basic", cols)
        path = os.path.join(srv.data, "lake", "basic")
        with ledger.guard("basic", "spark"):
            types, got = engines.spark_delta(path, columns=cols)
            ledger.rows("basic", "spark", want, got, [types[c] for c in cols])
        with ledger.guard("basic", "delta-rs"):
            types, got = engines.deltars(path, columns=cols)
            ledger.rows("basic", "delta-rs", want, got, [types[c] for c in cols])
