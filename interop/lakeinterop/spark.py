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


def iceberg_sqlite_catalog(name, data_dir, catalog_name):
    """Registers lakesql's own SQLite catalog of DATA as Spark's Iceberg catalog NAME.

    iceberg-go's SQL catalog and Iceberg's JdbcCatalog share one schema
    (iceberg_tables, iceberg_namespace_properties); catalog_name is the
    catalog_name column lakesql writes.
    """
    iceberg_catalog(name, type="jdbc",
                    uri="jdbc:sqlite:" + os.path.join(data_dir, "iceberg", "catalog.db"),
                    warehouse="file://" + os.path.join(data_dir, "iceberg", "warehouse"))
    s = session()
    s.conf.set("spark.sql.catalog.%s.jdbc.schema-version" % name, "V1")
    # The JDBC catalog's catalog-name is its Spark name unless told otherwise.
    s.conf.set("spark.sql.catalog.%s.catalog-name" % name, catalog_name)


def stop():
    global _session
    if _session is not None:
        _session.stop()
        _session = None
