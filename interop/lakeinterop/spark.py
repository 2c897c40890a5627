"""The run's one Spark session: Delta and Iceberg, started on first use.

A JVM takes seconds to start and hundreds of MiB, so every section shares
this session; a section registers the Iceberg catalogs it needs at run time
(Spark looks a catalog's settings up when the catalog is first used).
"""
import os

# Maven coordinates Spark resolves from Maven Central into BUILD/ivy. delta-spark
# 4.0.0 is built for Spark 4.0 / Scala 2.13, as is Iceberg's runtime.
PACKAGES = [
    "io.delta:delta-spark_2.13:4.0.0",
    "org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.0",
    "org.xerial:sqlite-jdbc:3.50.3.0",
    "org.postgresql:postgresql:42.7.8",
]

_session = None


def session():
    """The shared SparkSession."""
    global _session
    if _session is not None:
        return _session
    from pyspark.sql import SparkSession
    from . import paths
    b = (SparkSession.builder.master("local[2]").appName("lakesql-interop")
         .config("spark.jars.packages", ",".join(PACKAGES + _extra_packages()))
         .config("spark.jars.ivy", os.path.join(paths.BUILD, "ivy"))
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension,"
                 "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.sql.warehouse.dir", os.path.join(paths.BUILD, "spark-warehouse"))
         .config("spark.driver.extraJavaOptions", "-Dderby.system.home=" + os.path.join(paths.BUILD, "derby"))
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.default.parallelism", "2")
         .config("spark.databricks.delta.snapshotPartitions", "2")
         # VACUUM and file listing run this many tasks (10000 by default):
         # minutes on two cores for a folder of ten files.
         .config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "2")
         .config("spark.driver.memory", "3g"))
    _session = b.getOrCreate()
    _session.sparkContext.setLogLevel("ERROR")
    return _session


def _extra_packages():
    v = os.environ.get("LAKESQL_INTEROP_SPARK_PACKAGES", "")
    return [p for p in v.split(",") if p]


def iceberg_catalog(name, **props):
    """Registers an Iceberg catalog NAME with the given properties (type, uri, warehouse)."""
    s = session()
    s.conf.set("spark.sql.catalog." + name, "org.apache.iceberg.spark.SparkCatalog")
    for k, v in props.items():
        s.conf.set("spark.sql.catalog.%s.%s" % (name, k.replace("_", "-")), v)


def iceberg_sqlite_catalog(name, data_dir, catalog_name=None):
    """Registers lakesql's own SQLite catalog of DATA as Spark's Iceberg catalog NAME.

    iceberg-go's SQL catalog and Iceberg's JdbcCatalog share one schema
    (iceberg_tables with its iceberg_type column: the JDBC catalog's V1).
    The JdbcCatalog reads the rows whose catalog_name is its Spark name (it
    has no setting for another), so NAME must be the catalog_name lakesql
    writes ("lakesql"); catalog_name, when given, is checked against it.
    Registering NAME again for another data directory drops the catalogs
    Spark has built so far, so that the new settings take effect.
    """
    if catalog_name is not None and catalog_name != name:
        raise ValueError("Iceberg's JdbcCatalog reads rows of catalog_name = its Spark name: "
                         "register %r, not %r" % (catalog_name, name))
    uri = "jdbc:sqlite:" + os.path.join(data_dir, "iceberg", "catalog.db")
    s = session()
    again = _sqlite_catalogs.get(name) not in (None, uri)
    iceberg_catalog(name, type="jdbc", uri=uri,
                    warehouse="file://" + os.path.join(data_dir, "iceberg", "warehouse"))
    s.conf.set("spark.sql.catalog.%s.jdbc.schema-version" % name, "V1")
    # lakesql commits between reads: no cached table may hide a snapshot.
    s.conf.set("spark.sql.catalog.%s.cache-enabled" % name, "false")
    if again:
        s._jsparkSession.sessionState().catalogManager().reset()
    _sqlite_catalogs[name] = uri


_sqlite_catalogs = {}  # Spark catalog name -> the JDBC uri it was registered with


def drop_catalogs():
    """Drops the catalogs Spark has built, so that the next query loads every table afresh.

    Once a JdbcCatalog has served a table, a later read of it in this session
    can plan an older snapshot than the catalog row names, REFRESH TABLE or
    cache-enabled false notwithstanding (seen after CALL expire_snapshots and
    another writer's commit): a section whose tables lakesql writes between
    Spark's reads calls this before each read.
    """
    session()._jsparkSession.sessionState().catalogManager().reset()


def stop():
    global _session
    if _session is not None:
        _session.stop()
        _session = None
