//go:build !duckdb_arrow

package duckarrow

// lakesql needs DuckDB's Arrow interface, which duckdb-go compiles only with
// the duckdb_arrow build tag. Without the tag the build stops on the
// identifier below, whose name says what to do: build (and test, and vet)
// with -tags duckdb_arrow, or set GOFLAGS=-tags=duckdb_arrow once.
const _ = lakesql_needs_the_build_tag_duckdb_arrow__use_go_build_tags_duckdb_arrow_or_GOFLAGS_tags_duckdb_arrow
