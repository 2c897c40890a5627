// Command lakesql is the SQL front door to Delta Lake and Apache Iceberg
// tables. This first cut knows its version and can inspect a Delta table;
// the REPL, serve, test and bench commands come with later work.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `lakesql: SQL transactions into Delta Lake and Apache Iceberg tables

Usage:
  lakesql version                 print the version
  lakesql delta-info DIR [VERSION] print a Delta table's version, schema, files and app transactions
  lakesql help                    this text

Not there yet: the REPL, serve (MySQL wire), test (sqllogictest) and bench.
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return 0
	}
	switch args[0] {
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "lakesql %s\n", version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	case "delta-info":
		if err := deltaInfo(ctx, args[1:], stdout); err != nil {
			fmt.Fprintf(stderr, "lakesql: %v\n", err)
			return 1
		}
		return 0
	default:
		fmt.Fprintf(stderr, "lakesql: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
