"""lakeinterop: the `make interop` suite.

lakesql writes tables through its MySQL surface and the reference engines
(Spark with Delta and Iceberg, delta-rs, pyiceberg) read them; the engines
write tables and lakesql attaches, reads and writes them. Every comparison
lands in one Ledger, whose summary is the suite's verdict.
"""
