"""python -m lakeinterop [SECTION ...]: runs the sections (all by default) in one process.

One process, so that Spark's JVM starts once for the whole run.
"""
import importlib
import os
import sys
import time

from .ledger import Ledger

# The sections, in the order; each module has run(ledger).
SECTIONS = ["ours", "ours_iceberg", "theirs", "theirs_iceberg", "concurrent", "maintenance", "ours_maintenance",
            "shared_catalog", "rest_catalog", "iceberg_v3",
            "features_delta", "constraints_delta", "schema_iceberg", "colmap"]


def main(argv):
    os.environ["TZ"] = "UTC"  # PySpark turns timestamps into local datetimes
    time.tzset()
    want = argv or SECTIONS
    ledger = Ledger(lambda s: print(s, flush=True))
    start = time.time()
    for name in want:
        if name not in SECTIONS:
            print("lakeinterop: unknown section %s (known: %s)" % (name, ", ".join(SECTIONS)), file=sys.stderr)
            return 2
        ledger.section = name
        t = time.time()
        print("interop: section %s" % name, flush=True)
        with ledger.guard("(section)", "harness"):
            mod = importlib.import_module("lakeinterop.sections." + name)
            mod.run(ledger)
        print("interop: section %s took %.0fs" % (name, time.time() - t), flush=True)
    from . import spark
    spark.stop()
    print()
    for line in ledger.summary():
        print(line)
    print("interop: ran in %.0fs" % (time.time() - start))
    return 1 if ledger.failed() or not ledger.entries else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
