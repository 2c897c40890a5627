package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Probes of sink locations (issue 15, item 3) and Iceberg catalog files
// (item 4): every one is refused with 1210 before anything is created, so
// the outside directory stays as it was and the canaries keep their rows.

// locationsSymlink makes DATA/name a symlink to target (once: probes may
// share one).
func locationsSymlink(h *hostileEnv, name, target string) error {
	err := os.Symlink(target, filepath.Join(h.data, name))
	if err != nil && !errors.Is(err, os.ErrExist) {
		return h.wrong("symlink: %v", err)
	}
	return nil
}

// locationsOutsideRel is the outside directory relative to DATA.
func locationsOutsideRel(h *hostileEnv) string {
	rel, err := filepath.Rel(h.data, h.outside)
	if err != nil {
		return h.outside
	}
	return rel
}

// locationsProbe registers a probe that runs one statement, made from the
// env, and wants 1210. Its sink (loc_d or loc_i in the statement) is named
// after the probe, so that one that wrongly succeeds does not turn the
// next ones into 1050.
func locationsProbe(name string, q func(h *hostileEnv) string) hostileProbe {
	return hostileProbe{name: name, want: 1210, run: func(h *hostileEnv) error { return h.exec(locationsSinkName(name, q(h))) }}
}

func locationsSinkName(probe, q string) string {
	sink := "loc_" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, probe)
	return strings.NewReplacer("SINK loc_d ", "SINK "+sink+" ", "SINK loc_i ", "SINK "+sink+" ").Replace(q)
}

// locationsSymlinkProbe is locationsProbe with DATA/link pointing at target
// first.
func locationsSymlinkProbe(name, link string, target func(h *hostileEnv) string, q func(h *hostileEnv) string) hostileProbe {
	return hostileProbe{name: name, want: 1210, run: func(h *hostileEnv) error {
		if err := locationsSymlink(h, link, target(h)); err != nil {
			return err
		}
		return h.exec(locationsSinkName(name, q(h)))
	}}
}

func locationsOutside(h *hostileEnv) string { return h.outside }

func locationsIceberg(opts string) func(h *hostileEnv) string {
	return func(h *hostileEnv) string {
		return "CREATE SINK loc_i INTO ICEBERG 'hostile.loc_i' (id INT) WITH (" + strings.ReplaceAll(opts, "OUT", h.outside) + ")"
	}
}

func locationsDelta(loc string) func(h *hostileEnv) string {
	return func(h *hostileEnv) string {
		return "CREATE SINK loc_d INTO DELTA '" + strings.NewReplacer("OUT", h.outside, "DATA", h.data).Replace(loc) + "' (id INT)"
	}
}

func init() {
	registerHostile(
		// Symlinks out of the data directory.
		locationsSymlinkProbe("locations/symlink-out", "loc-out", locationsOutside, locationsDelta("loc-out/t")),
		locationsSymlinkProbe("locations/symlink-out-absolute", "loc-out", locationsOutside, locationsDelta("DATA/loc-out")),
		locationsSymlinkProbe("locations/symlink-dangling", "loc-dangling",
			func(h *hostileEnv) string { return filepath.Join(h.outside, "later") }, locationsDelta("loc-dangling")),
		locationsSymlinkProbe("locations/symlink-dangling-below", "loc-dangling",
			func(h *hostileEnv) string { return filepath.Join(h.outside, "later") }, locationsDelta("loc-dangling/t")),
		locationsProbe("locations/relative-out", func(h *hostileEnv) string {
			return locationsDelta(locationsOutsideRel(h) + "/t")(h)
		}),

		// The data directory's own folders and files.
		locationsProbe("locations/data-state", locationsDelta("state/t")),
		locationsProbe("locations/data-tmp", locationsDelta("tmp/t")),
		locationsProbe("locations/data-files", locationsDelta("files/ff")),
		locationsProbe("locations/data-files-dotdot", locationsDelta("lake/../files/ff")),
		locationsProbe("locations/data-cache", locationsDelta("cache/t")),
		locationsProbe("locations/data-iceberg-table", locationsDelta("iceberg/warehouse/hostile.db/canary_i")),
		locationsProbe("locations/data-dir", locationsDelta(".")),
		locationsProbe("locations/data-registry", locationsDelta("sinks.json")),

		// Another sink's table.
		locationsProbe("locations/inside-table", locationsDelta("lake/canary_d/sub")),
		locationsProbe("locations/inside-delta-log", locationsDelta("lake/canary_d/_delta_log")),
		locationsProbe("locations/around-table", locationsDelta("lake")),
		locationsProbe("locations/same-table-slashes", func(h *hostileEnv) string {
			return "CREATE SINK loc_d INTO DELTA 'lake//canary_d/'"
		}),
		locationsSymlinkProbe("locations/same-table-symlink", "loc-lake",
			func(h *hostileEnv) string { return filepath.Join(h.data, "lake") },
			func(h *hostileEnv) string { return "CREATE SINK loc_d INTO DELTA 'loc-lake/canary_d'" }),

		// URL spellings.
		locationsProbe("locations/file-colon", locationsDelta("file:/x")),
		locationsProbe("locations/file-colon-outside", locationsDelta("file:OUT/t")),
		locationsProbe("locations/file-url-outside", locationsDelta("file://OUT/t")),
		locationsProbe("locations/file-relative", locationsDelta("file:lake/t")),
		locationsProbe("locations/control-character", locationsDelta("lake/a\x00b")),

		// Iceberg warehouses.
		locationsProbe("locations/warehouse-in-delta-table", locationsIceberg("catalog.warehouse = 'lake/canary_d/wh'")),
		locationsProbe("locations/warehouse-in-state", locationsIceberg("catalog.warehouse = 'state/wh'")),
		locationsProbe("locations/warehouse-outside", locationsIceberg("catalog.warehouse = 'file://OUT/wh'")),
		locationsSymlinkProbe("locations/warehouse-symlink-out", "loc-out", locationsOutside,
			locationsIceberg("catalog.warehouse = 'loc-out/wh'")),
		locationsProbe("locations/hadoop-warehouse-outside", locationsIceberg("catalog.type = 'hadoop', catalog.warehouse = 'OUT/wh'")),

		// Iceberg SQLite catalog files, in every spelling SQLite takes.
		locationsProbe("catalog/uri-bare", locationsIceberg("catalog.uri = 'OUT/cat.sqlite3', catalog.sql.driver = 'sqlite'")),
		locationsProbe("catalog/uri-bare-query", locationsIceberg("catalog.uri = 'OUT/cat.sqlite3?_pragma=journal_mode(WAL)', catalog.sql.driver = 'sqlite'")),
		locationsProbe("catalog/uri-db", locationsIceberg("catalog.uri = 'OUT/cat.db'")),
		locationsProbe("catalog/uri-sql-prefix", locationsIceberg("catalog.uri = 'sql://OUT/cat.db'")),
		locationsProbe("catalog/uri-file", locationsIceberg("catalog.uri = 'file:OUT/cat.sqlite3'")),
		locationsProbe("catalog/uri-file-url-query", locationsIceberg("catalog.uri = 'file://OUT/cat.sqlite3?mode=rwc'")),
		locationsProbe("catalog/uri-file-localhost", locationsIceberg("catalog.uri = 'file://localhostOUT/cat.sqlite3'")),
		locationsProbe("catalog/uri-file-percent", func(h *hostileEnv) string {
			return locationsIceberg("catalog.uri = 'file:" + strings.ReplaceAll(h.outside, "/", "%2F") + "%2Fcat.sqlite3'")(h)
		}),
		locationsProbe("catalog/uri-relative", func(h *hostileEnv) string {
			return locationsIceberg("catalog.uri = '" + locationsOutsideRel(h) + "/cat.sqlite3', catalog.sql.driver = 'sqlite'")(h)
		}),
		locationsProbe("catalog/uri-file-relative", func(h *hostileEnv) string {
			return locationsIceberg("catalog.uri = 'file:" + locationsOutsideRel(h) + "/cat.db?_txlock=immediate'")(h)
		}),
		locationsSymlinkProbe("catalog/uri-symlink-out", "loc-out", locationsOutside,
			locationsIceberg("catalog.uri = 'loc-out/cat.db'")),
		locationsProbe("catalog/uri-other-host", locationsIceberg("catalog.uri = 'file://elsewhere/cat.db'")),
		locationsProbe("catalog/uri-duckdb", locationsIceberg("catalog.uri = 'OUT/cat.duckdb', catalog.sql.driver = 'duckdb'")),
		locationsProbe("catalog/uri-lakesql-driver", locationsIceberg("catalog.uri = 'OUT/lake', catalog.sql.driver = 'lakesql'")),
		locationsProbe("catalog/uri-registry", locationsIceberg("catalog.uri = 'sinks.json', catalog.sql.driver = 'sqlite'")),
		locationsProbe("catalog/uri-in-delta-table", locationsIceberg("catalog.uri = 'lake/canary_d/cat.db'")),
		locationsProbe("catalog/uri-mysql-allowallfiles", locationsIceberg("catalog.uri = 'u:p@tcp(127.0.0.1:1)/cat?allowAllFiles=true'")),
		locationsProbe("catalog/uri-postgres-passfile", locationsIceberg("catalog.uri = 'postgres://u@127.0.0.1:1/cat?passfile=OUT/secret.txt'")),
		locationsProbe("catalog/gcs-keypath", locationsIceberg("catalog.`gcs.keypath` = 'OUT/secret.txt'")),
		// The default catalog spelled as a file is the default catalog,
		// whose table hostile.canary_i is a sink already.
		locationsProbe("catalog/default-catalog-respelled", func(h *hostileEnv) string {
			return "CREATE SINK loc_i INTO ICEBERG 'hostile.canary_i' WITH (catalog.uri = 'file:iceberg/catalog.db?mode=rwc')"
		}),
	)
}
