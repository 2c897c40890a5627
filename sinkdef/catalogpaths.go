package sinkdef

// The local files an Iceberg sink's catalog.* options name. A SQL
// catalog's uri names a SQLite file in any of the spellings SQLite takes
// (a bare path, relative or absolute, with or without settings after '?',
// or a file: URI with an authority, percent escapes and a query); it is
// read the way modernc.org/sqlite and SQLite read it, confined to the
// allowed roots and written back as one absolute file: URI, so that the
// file checked is the file opened. Only the SQL drivers whose data source
// names lakesql reads are taken; their options that name local files are
// confined too, as is gcs.keypath.

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// Property keys of iceberg-go's SQL catalog.
const (
	sqlDriverKey = "sql.driver"
	gcsKeyPath   = "gcs.keypath"
)

// sqlDrivers are the sql.driver values a SQL catalog may name: the
// drivers lakesql links in for catalogs. Others (duckdb, lakesql itself)
// would open a local database that no check here knows how to read.
var sqlDrivers = []string{"sqlite", "mysql", "postgres"}

// sqlCatalogDriver returns the driver a SQL catalog's uri opens with, as
// tableformat/iceberg picks it: sql.driver, else guessed from the uri; ""
// when the catalog is not a SQL one with a uri (the default catalog or
// another type) or the driver cannot be guessed (opening then fails).
func sqlCatalogDriver(props map[string]string) (driver, dsn string) {
	if t := strings.ToLower(props["type"]); t != "" && t != "sql" {
		return "", ""
	}
	dsn = strings.TrimPrefix(props["uri"], "sql://")
	if dsn == "" {
		return "", ""
	}
	if d := props[sqlDriverKey]; d != "" {
		return d, dsn
	}
	switch {
	case strings.HasPrefix(dsn, "file:"), strings.HasSuffix(dsn, ".db"), strings.HasSuffix(dsn, ".sqlite"):
		return "sqlite", dsn
	case strings.Contains(dsn, "@tcp("), strings.HasPrefix(dsn, "mysql://"):
		return "mysql", dsn
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "postgres", dsn
	}
	return "", dsn
}

// sqliteDSN splits a SQLite data source name into the file it opens and
// its settings, the way modernc.org/sqlite does: text after the first '?'
// is the settings; a name starting with "file:" is a URI, whose authority
// must be empty or localhost and whose path is percent-decoded; ":memory:"
// and the empty name are databases in memory (file "").
func sqliteDSN(dsn string) (file, query string, err error) {
	if pos := strings.IndexByte(dsn, '?'); pos >= 1 {
		query = dsn[pos+1:]
		if !strings.HasPrefix(dsn, "file:") {
			dsn = dsn[:pos]
		}
	}
	if !strings.HasPrefix(dsn, "file:") {
		if dsn == ":memory:" {
			return "", query, nil
		}
		return dsn, query, nil
	}
	rest := dsn[len("file:"):]
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	query, _, _ = strings.Cut(query, "#")
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		auth, p, _ := strings.Cut(after, "/")
		if auth != "" && auth != "localhost" {
			return "", "", fmt.Errorf("the SQLite URI %q names the host %q; only local files are opened", dsn, auth)
		}
		rest = "/" + p
	}
	file, err = url.PathUnescape(rest)
	if err != nil {
		return "", "", fmt.Errorf("the SQLite URI %q: %w", dsn, err)
	}
	if file == ":memory:" {
		file = ""
	}
	return file, query, nil
}

// sqliteURI is the file: URI of an absolute path with settings; '%', '?'
// and '#' are escaped so that SQLite reads the path back as written.
func sqliteURI(path, query string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	if query == "" {
		return icetable.SQLiteDSN(esc)
	}
	return "file:" + esc + "?" + query
}

// sqliteCatalogFile returns the SQLite file that resolved catalog
// properties (catalogProperties) open, "" when they open none.
func sqliteCatalogFile(props map[string]string) (string, error) {
	driver, dsn := sqlCatalogDriver(props)
	if driver != "sqlite" {
		return "", nil
	}
	file, _, err := sqliteDSN(dsn)
	return file, err
}

// confineCatalogPaths resolves, in props (catalog.* options, prefix
// removed), the local files the catalog would open: the SQLite file of a
// SQL catalog's uri is made absolute (relative to the data directory) and
// canonical and written back as a file: URI; with confine, each must lie
// within the allowed roots, and a sql.driver lakesql cannot read, a MySQL
// uri that lets the server read local files, or a file that is not a
// SQLite database are refused.
func (b *Backends) confineCatalogPaths(props map[string]string, confine bool) error {
	driver, dsn := sqlCatalogDriver(props)
	known := driver == ""
	for _, d := range sqlDrivers {
		known = known || driver == d
	}
	if confine && !known {
		return fmt.Errorf("%w: option catalog.sql.driver: %q is not a driver lakesql opens SQL catalogs with (%s)",
			ErrOption, driver, strings.Join(sqlDrivers, ", "))
	}
	switch driver {
	case "sqlite":
		file, query, err := sqliteDSN(dsn)
		if err != nil {
			return fmt.Errorf("%w: option catalog.uri: %w", ErrLocation, err)
		}
		if file == "" {
			break
		}
		p, err := b.catalogFile(file, confine)
		if err != nil {
			return fmt.Errorf("option catalog.uri: %w", err)
		}
		if confine {
			if err := b.checkDataDirArea(sinkArea{kind: areaCatalogFile, path: p}); err != nil {
				return err
			}
			if err := checkSQLiteFile(p); err != nil {
				return fmt.Errorf("option catalog.uri: %w", err)
			}
		}
		props["uri"] = sqliteURI(p, query)
	case "mysql":
		if confine && mysqlReadsLocalFiles(dsn) {
			return fmt.Errorf("%w: option catalog.uri: allowAllFiles would let the catalog's server read any local file", ErrOption)
		}
	case "postgres":
		for _, k := range postgresFileKeys {
			v, ok := postgresParam(dsn, k)
			if !ok || !confine {
				continue
			}
			if _, err := b.catalogFile(v, true); err != nil {
				return fmt.Errorf("option catalog.uri: %s: %w", k, err)
			}
		}
	}
	if v, ok := props[gcsKeyPath]; ok && v != "" {
		p, err := b.catalogFile(v, confine)
		if err != nil {
			return fmt.Errorf("option catalog.%s: %w", gcsKeyPath, err)
		}
		props[gcsKeyPath] = p
	}
	return nil
}

// catalogFile resolves a local file a catalog option names: relative to
// the data directory, canonical, and with confine within the allowed
// roots.
func (b *Backends) catalogFile(p string, confine bool) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(b.opts.DataDir, p)
	}
	if !confine {
		return canonicalLocation(filepath.Clean(p)), nil
	}
	if strings.ContainsFunc(p, unicode.IsControl) {
		return "", fmt.Errorf("%w: the path %q holds a control character", ErrLocation, p)
	}
	return confineLocal(b.opts.AllowedRoots, p, p)
}

// sqliteHeader starts every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// checkSQLiteFile refuses an existing file that is neither empty nor a
// SQLite database: SQLite would take an empty one over, and must never
// be pointed at another file of the data directory or a table.
func checkSQLiteFile(p string) error {
	f, err := os.Open(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: the SQLite file %s: %w", ErrLocation, p, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		return fmt.Errorf("%w: the SQLite file %s is a folder", ErrLocation, p)
	}
	head := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, head)
	if n == 0 || (err == nil && bytes.Equal(head, sqliteHeader)) {
		return nil
	}
	return fmt.Errorf("%w: %s exists and is not a SQLite database", ErrLocation, p)
}

// mysqlReadsLocalFiles reports whether a go-sql-driver/mysql data source
// name sets allowAllFiles, which serves LOAD DATA LOCAL INFILE requests of
// the server for any local file.
func mysqlReadsLocalFiles(dsn string) bool {
	_, q, _ := strings.Cut(dsn, "?")
	return strings.Contains(strings.ToLower(q), "allowallfiles")
}

// postgresFileKeys are the lib/pq connection settings that name local
// files it reads.
var postgresFileKeys = []string{"sslcert", "sslkey", "sslrootcert", "passfile", "servicefile"}

// postgresParam returns a setting of a lib/pq data source name, a URL
// (postgres://...?k=v) or key=value words (values may be quoted).
func postgresParam(dsn, key string) (string, bool) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", false
		}
		v, ok := u.Query()[key]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[len(v)-1], true
	}
	var val string
	found := false
	for s := strings.TrimSpace(dsn); s != ""; s = strings.TrimSpace(s) {
		k, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		k, rest = strings.TrimSpace(k), strings.TrimLeft(rest, " ")
		var v string
		if strings.HasPrefix(rest, "'") {
			var b strings.Builder
			i := 1
			for ; i < len(rest) && rest[i] != '\''; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
				}
				b.WriteByte(rest[i])
			}
			v, s = b.String(), rest[min(i+1, len(rest)):]
		} else {
			v, s, _ = strings.Cut(rest, " ")
		}
		if k == key {
			val, found = v, true
		}
	}
	return val, found
}
