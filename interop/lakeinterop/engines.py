"""Reading one table with each engine: rows as tuples and types in Spark's spelling."""
from . import compare
from . import spark as sparkmod


def spark_delta(path, version=None, columns=None, arrow=False):
    """(types, rows) of the Delta table at path, read by Spark (at version, if given).

    arrow collects through Arrow (DataFrame.toArrow): PySpark's own Row
    conversion cannot make a datetime of a TIMESTAMP near 0001-01-01
    (datetime.fromtimestamp fails with "year 0 is out of range").
    """
    s = sparkmod.session()
    r = s.read.format("delta")
    if version is not None:
        r = r.option("versionAsOf", version)
    df = r.load(path)
    if columns:
        df = df.select(*columns)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    if arrow:
        return types, arrow_rows(df.toArrow())
    return types, [tuple(x) for x in df.collect()]


def arrow_rows(tbl, names=None):
    """The rows of an Arrow table as tuples, of the columns names (all by default)."""
    return list(zip(*[tbl.column(n).to_pylist() for n in (names or tbl.column_names)]))


def spark_sql(sql):
    """(types, rows) of a Spark SQL query."""
    df = sparkmod.session().sql(sql)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    return types, [tuple(x) for x in df.collect()]


def deltars(path, version=None, columns=None, storage_options=None):
    """(types, rows) of the Delta table at path, read by delta-rs (at version, if given)."""
    from deltalake import DeltaTable
    dt = DeltaTable(path, version=version, storage_options=storage_options)
    types = {f.name: _deltars_type(f.type) for f in dt.schema().fields}
    tbl = _to_arrow(dt, columns)
    names = columns or tbl.column_names
    cols = [[_arrow_py(v, tbl.schema.field(n).type) for v in tbl.column(n).to_pylist()] for n in names]
    rows = list(zip(*cols)) if cols else []
    if columns:
        types = {k: types[k] for k in columns}
    return types, rows


def _to_arrow(dt, columns):
    import pyarrow as pa
    from deltalake.exceptions import DeltaProtocolError
    conf = dt.metadata().configuration
    try:
        if conf.get("delta.columnMapping.mode", "none") == "none":
            # delta-rs 1.x returns an arro3 stream; pyarrow takes it through the C stream interface.
            if hasattr(dt, "to_pyarrow_table"):
                return dt.to_pyarrow_table(columns=columns)
            return pa.table(dt.to_pyarrow_dataset().to_table(columns=columns))
    except DeltaProtocolError:
        pass
    # delta-rs 1.6's pyarrow dataset refuses deletion vectors and reads a
    # column-mapped table as NULLs; its DataFusion reader gets both right.
    from deltalake import QueryBuilder
    cols = ", ".join('"%s"' % c for c in columns) if columns else "*"
    return pa.table(QueryBuilder().register("t", dt).execute("SELECT %s FROM t" % cols).read_all())


def _arrow_py(v, t):
    """An Arrow value as Python data, maps as dicts (to_pylist gives (key, value) lists)."""
    import pyarrow as pa
    if v is None:
        return None
    if pa.types.is_map(t):
        return {k: _arrow_py(x, t.item_type) for k, x in v}
    if pa.types.is_struct(t):
        return {f.name: _arrow_py(v[f.name], f.type) for f in t}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_arrow_py(x, t.value_type) for x in v]
    return v


def _deltars_type(t):
    typ = getattr(t, "type", None)
    if isinstance(typ, str) and typ not in ("struct", "array", "map"):  # a PrimitiveType
        return compare.delta_type(typ)
    # struct, array, map: their JSON form names them
    import json
    return _nested_name(json.loads(t.to_json()) if hasattr(t, "to_json") else str(t))


def _nested_name(j):
    if isinstance(j, str):
        return compare.delta_type(j)
    k = j.get("type")
    if k == "struct":
        return "struct<" + ",".join("%s:%s" % (f["name"], _nested_name(f["type"])) for f in j["fields"]) + ">"
    if k == "array":
        return "array<%s>" % _nested_name(j["elementType"])
    if k == "map":
        return "map<%s,%s>" % (_nested_name(j["keyType"]), _nested_name(j["valueType"]))
    return str(j)


def lakesql(server, table, columns=None):
    """(names, rows) of SELECT columns FROM table through lakesql's MySQL surface."""
    cols = ", ".join("`%s`" % c for c in columns) if columns else "*"
    return server.query("SELECT %s FROM `%s`" % (cols, table))
