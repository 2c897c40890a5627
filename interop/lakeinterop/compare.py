"""Rows and types from different engines, brought to one form and compared.

Each engine hands back its own Python values: PyMySQL gives a BOOLEAN as 0
or 1, a FLOAT as the double of its shortest text, a nested column as JSON
text; Spark gives Rows and float32s widened; Arrow gives tz-aware
datetimes. canon() maps each to one comparable form, so that a difference
left after it is a difference in the data.
"""
import base64
import collections
import datetime
import decimal
import json
import math
import re
import struct

UTC = datetime.timezone.utc


def f32(x):
    """x rounded to the nearest float32, as a Python float."""
    return struct.unpack("f", struct.pack("f", x))[0]


def canon(v, typ=None):
    """One engine-independent form of value v of (normalized) type typ."""
    if v is None:
        return None
    if typ == "float" and isinstance(v, (int, float)):
        return ("f", f32(float(v)))
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return ("f", "NaN")
        return ("f", v)
    if isinstance(v, decimal.Decimal):
        return ("d", _dec(v))
    if isinstance(v, (bytes, bytearray, memoryview)):
        return ("b", bytes(v).hex())
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(UTC).replace(tzinfo=None)
        return ("ts", v.isoformat(sep=" ", timespec="microseconds"))
    if isinstance(v, datetime.date):
        return ("date", v.isoformat())
    if typ is not None and _nested(typ):
        return ("json", json.dumps(nested(v), sort_keys=True))
    if hasattr(v, "asDict"):  # a Spark Row
        return ("json", json.dumps(nested(v), sort_keys=True))
    if isinstance(v, (dict, list, tuple)):
        return ("json", json.dumps(nested(v), sort_keys=True))
    return v


def _nested(typ):
    return typ.startswith(("struct", "array", "map"))


def _dec(d):
    if d.is_nan() or d.is_infinite():
        return str(d)
    t = d.normalize(decimal.Context(prec=100))  # the default 28 digits would round DECIMAL(38,s)
    if t == 0:
        return "0"
    s = format(t, "f")
    return s


def nested(v):
    """A nested value as plain JSON-able data, in lakesql's JSON text conventions.

    JSON text (lakesql's form of a struct, array or map) is parsed; Spark Rows
    become dicts; decimals and integers become exact numbers, dates and
    timestamps strings, binary base64.
    """
    if isinstance(v, str):
        try:
            return nested(json.loads(v, parse_float=decimal.Decimal))
        except ValueError:
            return v
    return _plain(v)


def _plain(v):
    if isinstance(v, str):
        return _ts_text(v)
    if v is None or isinstance(v, bool):
        return v
    if hasattr(v, "asDict"):
        return {k: _plain(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        # Arrow gives a map as a list of (key, value) pairs.
        # (A Spark Row is a tuple too: a struct of two fields is not a pair.)
        if v and all(isinstance(x, tuple) and len(x) == 2 and not hasattr(x, "asDict") for x in v) and isinstance(v, list):
            return {str(k): _plain(x) for k, x in v}
        return [_plain(x) for x in v]
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return _dec(decimal.Decimal(repr(v)))
    if isinstance(v, decimal.Decimal):
        return _dec(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(UTC).replace(tzinfo=None)
        return v.isoformat(sep=" ", timespec="microseconds")
    if isinstance(v, datetime.date):
        return v.isoformat()
    return v


_TS_TEXT = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d{1,6}))?$")


def _ts_text(s):
    """A timestamp's text inside nested JSON with six fraction digits (lakesql drops a zero fraction)."""
    m = _TS_TEXT.match(s)
    if not m:
        return s
    return "%s.%s" % (m.group(1), (m.group(2) or "").ljust(6, "0"))


def canon_rows(rows, types=None):
    """Rows as a sorted list of canonical tuples; types gives each column's type."""
    out = []
    for r in rows:
        if hasattr(r, "asDict"):
            r = tuple(r)
        elif isinstance(r, dict):
            r = tuple(r.values())
        out.append(tuple(canon(v, types[i] if types else None) for i, v in enumerate(r)))
    out.sort(key=repr)
    return out


def diff_rows(expected, got, types=None, limit=5):
    """None when the two row multisets are equal, else a short description."""
    e = collections.Counter(canon_rows(expected, types))
    g = collections.Counter(canon_rows(got, types))
    if e == g:
        return None
    missing = list((e - g).elements())
    extra = list((g - e).elements())
    parts = ["%d rows expected, %d read" % (sum(e.values()), sum(g.values()))]
    if missing:
        parts.append("missing %s" % missing[:limit])
    if extra:
        parts.append("unexpected %s" % extra[:limit])
    return "; ".join(parts)


# Type names, normalized to Spark's simpleString spelling.
_DELTA = {"byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint"}
_ICEBERG = {"int": "int", "long": "bigint", "timestamptz": "timestamp", "timestamp": "timestamp_ntz",
            "uuid": "string", "time": "time"}


def delta_type(t):
    """A Delta schema type name (byte, integer, decimal(p,s), timestamp_ntz) in Spark's spelling."""
    t = str(t).replace(" ", "")
    return _DELTA.get(t, t)


def iceberg_type(t):
    """A pyiceberg type's text (int, long, decimal(10, 2), timestamptz, fixed[16]) in Spark's spelling."""
    t = str(t).replace(" ", "")
    if t.startswith("fixed["):
        return "binary"
    return _ICEBERG.get(t, t)


def diff_types(expected, got):
    """None when the two {column: type} maps agree, else what differs."""
    if expected == got:
        return None
    bad = []
    for k in sorted(set(expected) | set(got)):
        if expected.get(k) != got.get(k):
            bad.append("%s: expected %s, read %s" % (k, expected.get(k), got.get(k)))
    return "; ".join(bad)
