"""The eight steps of clients/SCENARIO.md, written once against the Client interface
(client.py) that each Python client implements."""

import threading
from decimal import Decimal

from . import values
from .checks import Mismatch, expect, expect_eq

SINKS = {
    "types": ("lake/types", values.TYPES_COLUMNS, "mode = 'upsert'"),
    "txn": ("lake/txn", "id BIGINT NOT NULL, v VARCHAR(32)", None),
    "bulk": ("lake/bulk", "id BIGINT NOT NULL, v VARCHAR(32), x DOUBLE", None),
    # conc counts one version per commit: no auto-compaction among them.
    "conc": ("lake/conc", "id BIGINT NOT NULL, conn INT", "auto_compact = false"),
}

BULK_ROWS = 100_000
CONC_CONNECTIONS = 16
CONC_INSERTS = 50


def create_sink_sql(name):
    location, columns, options = SINKS[name]
    sql = f"CREATE SINK {name} INTO DELTA '{location}' ({columns})"
    return sql + (f" WITH ({options})" if options else "")


def version(c, h, sink):
    """The sink's Table_version from SHOW SINK STATUS."""
    rows = c.query(h, f"SHOW SINK STATUS {sink}")
    expect(len(rows) == 1, f"SHOW SINK STATUS {sink} gave {len(rows)} rows")
    v = rows[0][3]
    return -1 if v is None else int(v)


def last_epoch(c, h, sink):
    """The sink's Last_epoch from SHOW SINK STATUS (0 before its first commit)."""
    rows = c.query(h, f"SHOW SINK STATUS {sink}")
    expect(len(rows) == 1, f"SHOW SINK STATUS {sink} gave {len(rows)} rows")
    e = rows[0][2]
    return 0 if e is None else int(e)


def expect_error(c, h, code, state, fn, *args):
    """Runs fn(*args), which must fail with MySQL error code and SQLSTATE state."""
    try:
        fn(*args)
    except Exception as e:
        got = c.error(e, h)
        if got is None:
            raise
        expect(tuple(got[:2]) == (code, state), f"expected error {code}/{state}, got {got[0]}/{got[1]}: {got[2]}")
        return
    raise Mismatch(f"expected error {code}/{state}, got success")


def still_works(c, h):
    rows = c.query(h, "SELECT 1")
    expect(len(rows) == 1 and rows[0][0] == 1, f"the connection no longer answers SELECT 1: got {rows!r}")


def run(c, ck):
    ok = {"admin": None}

    def connect():
        ok["admin"] = c.connect(autocommit=True)
        still_works(c, ok["admin"])

    ck.run("connect: the right password connects", connect)
    ck.run("connect: a wrong password is refused 1045/28000", step_wrong_password, c)
    h = ok["admin"]
    if h is None:
        return
    todo = [("sinks", step_sinks)]
    todo += [(f"values {p}", lambda c, ck, h, p=p: step_values_insert(c, ck, h, p)) for p in c.protocols]
    for ins in c.protocols:
        todo += [(f"values {ins}->{r}", lambda c, ck, h, i=ins, r=r: step_values_read(c, ck, h, i, r))
                 for r in c.protocols]
        if c.has_raw_text:
            todo.append((f"values {ins}->text wire text", lambda c, ck, h, i=ins: step_values_raw_text(c, ck, h, i)))
    todo += [(f"values {p} out of range", lambda c, ck, h, p=p: step_out_of_range(c, ck, h, p))
             for p in c.protocols]
    todo += [("transactions", step_transactions), ("errors", step_errors), ("metadata", step_metadata),
             ("bulk", step_bulk), ("concurrency", step_concurrency)]
    for name, step in todo:
        try:
            step(c, ck, h)
        except Exception as e:
            # A step that breaks outside its checks is one FAIL, and the next step still runs.
            ck.fail(f"{name}: the step runs to its end", f"unexpected {type(e).__name__}: {e}")


def step_wrong_password(c):
    code, state, msg = c.wrong_password()
    expect((code, state) == (1045, "28000"), f"expected error 1045/28000, got {code}/{state}: {msg}")


def step_sinks(c, ck, h):
    for name in SINKS:
        if c.prepares and name in ("bulk", "conc"):
            location, columns, options = SINKS[name]
            ck.run(f"sinks: CALL lakesql_create_sink {name} (prepared)", c.execute, h,
                   "CALL lakesql_create_sink(%s, %s, %s, %s, %s, %s)",
                   (name, "delta", location, columns, None, options), True)
        else:
            ck.run(f"sinks: CREATE SINK {name}", c.execute, h, create_sink_sql(name))

    def listed():
        names = sorted(r[0] for r in c.query(h, "SHOW SINKS"))
        expect_eq(sorted(SINKS), names, "SHOW SINKS")

    ck.run("sinks: SHOW SINKS lists the four", listed)


def _base(proto):
    return 0 if proto == "text" else 100


# ids of step 3 rows whose INSERT failed, so that their reads say why they find nothing.
failed_inserts = set()


def step_values_insert(c, ck, h, proto):
    for rid, label, vals in values.rows(_base(proto)):
        cols = ["id"] + list(vals)

        def insert(rid=rid, cols=cols, vals=vals):
            try:
                c.insert(h, "types", cols, [[rid] + list(vals.values())], proto == "binary")
            except Exception:
                failed_inserts.add(rid)
                raise

        ck.run(f"values {proto}: insert {label} (id {rid})", insert)


def _no_row(rid, got):
    why = " (its INSERT failed)" if rid in failed_inserts else ""
    return Mismatch(f"expected 1 row, got {len(got)}{why}")


def step_values_read(c, ck, h, ins, read):
    for rid, label, vals in values.rows(_base(ins)):
        cols = list(vals)
        try:
            got = c.query(h, f"SELECT {_cols(cols)} FROM types WHERE id = %s", (rid,), read == "binary")
        except Exception as e:
            ck.run(f"values {ins}->{read}: read {label} (id {rid})", _raise, e)
            continue
        if len(got) != 1:
            ck.run(f"values {ins}->{read}: read {label} (id {rid})", _raise, _no_row(rid, got))
            continue
        row = dict(zip(cols, got[0]))
        if label == "nulls":
            bad = {k: v for k, v in row.items() if v is not None}
            ck.run(f"values {ins}->{read}: NULL in every nullable column", expect,
                   not bad, f"expected NULL, got {bad!r}")
            continue
        for col, want in vals.items():
            ck.run(f"values {ins}->{read}: {col} {label}", _same, col, want, row[col])


def step_values_raw_text(c, ck, h, ins):
    """DATE, DATETIME(6) and TIMESTAMP(6) as the text protocol carries them: 6 fraction digits."""
    for rid, label, vals in values.rows(_base(ins)):
        if vals.get("dt") is not None:
            v, cols = vals["dt"], ["d", "dt"]
            want = (values.date_text(v), values.datetime_text(v))
        elif vals.get("ts") is not None:
            v, cols = vals["ts"], ["ts"]
            want = (values.datetime_text(v),)
        else:
            continue
        name = f"values {ins}->text: wire text of {', '.join(cols)} {label}"
        try:
            got = c.query_raw_text(h, f"SELECT {_cols(cols)} FROM types WHERE id = %s", (rid,))
        except Exception as e:
            ck.run(name, _raise, e)
            continue
        if len(got) != 1:
            ck.run(name, _raise, _no_row(rid, got))
            continue
        ck.run(name, expect_eq, want, got[0])


def _same(col, want, got):
    expect(values.same(col, want, got), f"expected {want!r}, got {got!r}")


def _raise(e):
    raise e


def _cols(cols):
    return ", ".join(f"`{x}`" for x in cols)


def step_out_of_range(c, ck, h, proto):
    cases = values.OUT_OF_RANGE + (values.OUT_OF_RANGE_BINARY if proto == "binary" else [])
    rid = 90 + _base(proto)
    for label, col, value in cases:
        rid += 1
        if proto == "binary" and isinstance(value, int) and not -2**63 <= value < 2**64:
            # No integer parameter type holds it; a client binds it as the DECIMAL it is.
            value = Decimal(value)
            label += " bound as DECIMAL"

        def refused(rid=rid, col=col, value=value):
            problems = []
            try:
                expect_error(c, h, 1264, "22003", c.insert, h, "types", ["id", col], [[rid, value]],
                             proto == "binary")
            except Mismatch as e:
                problems.append(str(e))
            stored = c.query(h, f"SELECT `{col}` FROM types WHERE id = %s", (rid,))
            if stored:
                problems.append(f"expected nothing stored, got {col} = {stored[0][0]!r}")
            expect(not problems, "; ".join(problems))

        ck.run(f"values {proto}: {label} refused 1264/22003, nothing stored (id {rid})", refused)
    if proto == "text":
        for label, ids, fn in c.extra_refusals(h):
            ck.run(f"values {proto}: {label} refused 1264/22003, nothing stored (ids {ids})",
                   _extra_refused, c, h, ids, fn)


def _extra_refused(c, h, ids, fn):
    problems = []
    try:
        expect_error(c, h, 1264, "22003", fn)
    except Mismatch as e:
        problems.append(str(e))
    stored = c.query(h, f"SELECT id, i64 FROM types WHERE id IN ({', '.join(map(str, ids))})")
    if stored:
        problems.append(f"expected nothing stored, got {stored!r}")
    expect(not problems, "; ".join(problems))


def step_transactions(c, ck, h):
    def case(kind, ids, commit):
        before = version(c, h, "txn")
        c.transaction("txn", ["id", "v"], [[i, f"{kind} {i}"] for i in ids], commit)
        after = version(c, h, "txn")
        got = sorted(r[0] for r in c.query(h, f"SELECT id FROM txn WHERE id IN ({', '.join(map(str, ids))})"))
        want_delta = 1 if commit else 0
        want_rows = sorted(ids) if commit else []
        expect((after - before, got) == (want_delta, want_rows),
               f"expected Table_version +{want_delta} and rows {want_rows}, "
               f"got +{after - before} and rows {got}")

    ck.run(f"transactions: {c.txn_api} two INSERTs then commit: +1, both rows", case, "commit", [1, 2], True)
    ck.run(f"transactions: {c.txn_api} two INSERTs then rollback: +0, no rows", case, "rollback", [3, 4], False)

    def autocommit():
        before = version(c, h, "txn")
        c.autocommit_insert("txn", ["id", "v"], [5, "autocommit"])
        after = version(c, h, "txn")
        got = [r[0] for r in c.query(h, "SELECT id FROM txn WHERE id = 5")]
        expect((after - before, got) == (1, [5]),
               f"expected Table_version +1 and rows [5], got +{after - before} and rows {got}")

    ck.run(f"transactions: {c.autocommit_api} INSERT: +1, the row", autocommit)


def step_errors(c, ck, h):
    cases = [
        ("CREATE SINK of an existing name", 1050, "42S01", lambda: c.execute(h, create_sink_sql("txn"))),
        ("SELECT * FROM nosuch", 1146, "42S02", lambda: c.query(h, "SELECT * FROM nosuch")),
        ("SELEC 1", 1064, "42000", lambda: c.query(h, "SELEC 1")),
        ("NULL into txn.id", 1048, "23000", lambda: c.insert(h, "txn", ["id", "v"], [[None, "x"]])),
        ("'x1.5' into types.dec", 1366, "HY000", lambda: c.insert(h, "types", ["id", "dec"], [[61, "x1.5"]])),
        ("65 characters into types.vc", 1406, "22001",
         lambda: c.insert(h, "types", ["id", "vc"], [[62, "v" * 65]])),
        ("'{bad' into types.js", 3140, "22032", lambda: c.insert(h, "types", ["id", "js"], [[63, "{bad"]])),
    ]
    if c.prepares:
        location, columns, options = SINKS["txn"]
        cases += [
            ("CALL lakesql_create_sink of an existing name (prepared)", 1050, "42S01",
             lambda: c.execute(h, "CALL lakesql_create_sink(%s, %s, %s, %s)",
                               ("txn", "delta", location, columns), True)),
            ("SELEC 1 (prepared)", 1064, "42000", lambda: c.query(h, "SELEC 1", (), True)),
            ("'x1.5' into types.dec (prepared)", 1366, "HY000",
             lambda: c.insert(h, "types", ["id", "dec"], [[64, "x1.5"]], True)),
        ]
    for label, code, state, fn in cases:
        def check(code=code, state=state, fn=fn):
            try:
                expect_error(c, h, code, state, fn)
            finally:
                still_works(c, h)

        ck.run(f"errors: {label} is {code}/{state}, the connection keeps working", check)


def step_metadata(c, ck, h):
    got = {}

    def read():
        got.update(c.metadata(h))

    ck.run(f"metadata: read the columns of types ({c.metadata_api})", read)
    if not got:
        return
    cols = {name: (typ, nullable, key) for name, typ, nullable, key in got["columns"]}
    for name, typ in values.COLUMN_TYPES:
        want = c.column_type_spelling(typ)
        ck.run(f"metadata: types.{name} is {want}", lambda n=name, w=want:
               expect(n in cols and cols[n][0] == w,
                      f"expected {w}, got {cols[n][0] if n in cols else 'no such column'}"))
    ck.run("metadata: types.id is NOT NULL", lambda: expect(
        "id" in cols and cols["id"][1] is False, f"expected NOT NULL, got nullable={cols.get('id', (0, '?'))[1]}"))
    ck.run("metadata: other columns are nullable", lambda: expect(
        all(cols.get(n, (0, True))[1] is True for n in values.NULLABLE),
        f"expected nullable, got NOT NULL for {[n for n in values.NULLABLE if cols.get(n, (0, True))[1] is not True]}"))
    ck.run(f"metadata: the primary key is (id) ({c.pk_api})", expect_eq, ["id"], got["pk"])
    if "column_key" in got:
        ck.run("metadata: COLUMN_KEY of types.id is PRI", expect_eq, "PRI", got["column_key"].get("id"))
    if "result_flags" in got:
        for label, ok, msg in got["result_flags"]:
            ck.run(f"metadata: result column {label}", expect, ok, msg)


def step_bulk(c, ck, h):
    rows = [[i, f"row {i}", i * 0.5] for i in range(1, BULK_ROWS + 1)]

    def bulk():
        before = version(c, h, "bulk")
        c.bulk("bulk", ["id", "v", "x"], rows)
        after = version(c, h, "bulk")
        counts = c.query(h, "SELECT count(*), count(DISTINCT id) FROM bulk")[0]
        got = (after - before, int(counts[0]), int(counts[1]))
        expect(got == (1, BULK_ROWS, BULK_ROWS),
               f"expected Table_version +1, count(*) {BULK_ROWS}, count(DISTINCT id) {BULK_ROWS}, "
               f"got +{got[0]}, {got[1]}, {got[2]}")

    ck.run(f"bulk: {BULK_ROWS} rows by {c.bulk_api} in one transaction: +1, all rows once", bulk)


def step_concurrency(c, ck, h):
    errors = []

    def worker(k):
        try:
            rows = [[k * 1000 + j, k] for j in range(CONC_INSERTS)]
            c.concurrent_inserts("conc", ["id", "conn"], rows)
        except Exception as e:
            errors.append(f"connection {k}: {type(e).__name__}: {e}")

    def conc():
        before, epoch0 = version(c, h, "conc"), last_epoch(c, h, "conc")
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(CONC_CONNECTIONS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        after, epoch = version(c, h, "conc"), last_epoch(c, h, "conc")
        counts = c.query(h, "SELECT count(*), count(DISTINCT id) FROM conc")[0]
        n = CONC_CONNECTIONS * CONC_INSERTS
        # Group commit: COMMITs that meet land as one version of
        # consecutive epochs, so each INSERT is an epoch, not a version.
        got = (epoch - epoch0, int(counts[0]), int(counts[1]))
        expect(not errors and got == (n, n, n) and 1 <= after - before <= n,
               f"expected Last_epoch +{n}, Table_version +1..{n}, count(*) {n}, count(DISTINCT id) {n} and no errors, "
               f"got +{got[0]}, +{after - before}, {got[1]}, {got[2]}, errors {errors[:3]}")

    ck.run(f"concurrency: {CONC_CONNECTIONS} connections x {CONC_INSERTS} autocommit INSERTs", conc)
