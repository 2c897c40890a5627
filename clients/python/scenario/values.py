"""The values of step 3: what goes into the `types` sink and what must come back."""

import datetime as dt
import json
from decimal import Decimal

TYPES_COLUMNS = (
    "id BIGINT NOT NULL, b BOOLEAN, i8 TINYINT, u8 TINYINT UNSIGNED, i16 SMALLINT, i32 INT, "
    "u32 INT UNSIGNED, i64 BIGINT, f32 FLOAT, f64 DOUBLE, dec DECIMAL(20,6), vc VARCHAR(64), "
    "tx TEXT, js JSON, vb VARBINARY(64), d DATE, dt DATETIME(6), ts TIMESTAMP(6), PRIMARY KEY (id)"
)

# Every column of `types` but id, in order, with the COLUMN_TYPE MySQL 8 shows for it.
COLUMN_TYPES = [
    ("id", "bigint"), ("b", "tinyint(1)"), ("i8", "tinyint"), ("u8", "tinyint unsigned"),
    ("i16", "smallint"), ("i32", "int"), ("u32", "int unsigned"), ("i64", "bigint"),
    ("f32", "float"), ("f64", "double"), ("dec", "decimal(20,6)"), ("vc", "varchar(64)"),
    ("tx", "text"), ("js", "json"), ("vb", "varbinary(64)"), ("d", "date"),
    ("dt", "datetime(6)"), ("ts", "timestamp(6)"),
]
NULLABLE = [name for name, _ in COLUMN_TYPES if name != "id"]

TEMPORALS = [
    dt.datetime(2024, 6, 15, 10, 20, 30, 1),
    dt.datetime(2024, 6, 15, 10, 20, 30, 50000),
    dt.datetime(2024, 6, 15, 10, 20, 30, 500000),
    dt.datetime(2024, 6, 15, 10, 20, 30, 123456),
    dt.datetime(1, 1, 1, 0, 0, 0),
    dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    dt.datetime(1969, 1, 1, 0, 0, 0),
    dt.datetime(2040, 1, 1, 0, 0, 0),
]
STRINGS = ["it's", 'a"b', "back\\slash", "emoji \U0001F600", "nul\0inside"]
JSON_TEXT = '{"a": [1, 2, {"b": null}]}'
BYTES = bytes([0x00, 0xFF, 0x27, 0x5C])


def datetime_text(v):
    """v as MySQL shows a DATETIME(6)/TIMESTAMP(6) in the text protocol (6 digits)."""
    return (f"{v.year:04d}-{v.month:02d}-{v.day:02d} "
            f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}.{v.microsecond:06d}")


def date_text(v):
    """v as MySQL shows a DATE."""
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}"


def rows(base):
    """The rows of one protocol's pass: (id, label, {column: value}), ids from base+1.

    TIMESTAMP rows are base+51...

    BOOLEAN reads back as the TINYINT 1/0, as MySQL sends it."""
    out = []
    n = base
    for v in TEMPORALS:
        n += 1
        # TIMESTAMP in a row of its own, so that a refused TIMESTAMP hides no DATETIME.
        out.append((n, f"datetime {datetime_text(v)}", {"d": v.date(), "dt": v}))
        out.append((n + 50, f"timestamp {datetime_text(v)}", {"ts": v}))
    n = base + 10
    out.append((n, "maxima", {
        "b": 1, "i8": 127, "u8": 255, "i16": 32767, "i32": 2147483647, "u32": 4294967295,
        "i64": 9223372036854775807, "f32": 1.5, "f64": 1e308,
        "dec": Decimal("12345678901234.123456")}))
    out.append((n + 1, "minima", {
        "b": 0, "i8": -128, "u8": 0, "i16": -32768, "i32": -2147483648, "u32": 0,
        "i64": -9223372036854775808, "f32": -1.5, "f64": -1e308,
        "dec": Decimal("-12345678901234.123456")}))
    n = base + 20
    for i, s in enumerate(STRINGS):
        out.append((n + i, f"string {s!r}", {"vc": s, "tx": s}))
    out.append((base + 30, "json and bytes", {"js": JSON_TEXT, "vb": BYTES}))
    out.append((base + 40, "nulls", {c: None for c in NULLABLE}))
    return out


def same(col, want, got):
    """Whether got is want for column col: JSON compares parsed; everything else exactly."""
    if want is None or got is None:
        return want is None and got is None
    if col == "js":
        if isinstance(got, (bytes, bytearray)):
            got = bytes(got).decode("utf-8")
        try:
            return isinstance(got, str) and json.loads(got) == json.loads(want)
        except ValueError:
            return False
    if isinstance(want, bool) or isinstance(got, bool):
        return type(want) is type(got) and want == got
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return want == got
    return type(want) is type(got) and want == got


# Step 3's refusals: (label, column, value). Each must fail with 1264/22003 and store nothing.
OUT_OF_RANGE = [
    ("BIGINT 9223372036854775808", "i64", 9223372036854775808),
    ("BIGINT '99999999999999999999'", "i64", "99999999999999999999"),
    ("BIGINT -9223372036854775809", "i64", -9223372036854775809),
    ("BIGINT DOUBLE 9.3e18", "i64", 9.3e18),
    ("TINYINT UNSIGNED 256", "u8", 256),
    ("INT UNSIGNED -1", "u32", -1),
]
OUT_OF_RANGE_BINARY = [("BIGINT bound uint64 18446744073709551615", "i64", 18446744073709551615)]
