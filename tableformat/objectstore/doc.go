// Package objectstore keeps Delta tables on object storage (S3 and
// S3-compatible stores, GCS, Azure Blob) through gocloud.dev/blob. It
// implements delta.Storage: log entries are written with the store's
// conditional put (If-None-Match), data files are uploaded after DuckDB
// wrote them locally, and read through a local cache of immutable files.
// Storage calls are retried with backoff and guarded by a circuit breaker
// whose state is the storage's health.
package objectstore
