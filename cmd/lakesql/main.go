// Command lakesql is the SQL front door to Delta Lake and Apache Iceberg
// tables: a REPL, a MySQL wire server, a sqllogictest runner, a benchmark
// against reference runs and a Delta table inspector.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `lakesql: SQL transactions into Delta Lake tables

Usage:
  lakesql [--data DIR] [-e SQL] [--force]   the REPL; a script on stdin runs as a batch
                                            (--table-root, --storage: see --help)
  lakesql serve --listen ADDR --data DIR    serve the MySQL wire protocol (see serve --help)
  lakesql test [--dsn DSN] FILE|FOLDER...   run sqllogictest (.slt) files (see test --help)
  lakesql bench [--quick] [--json] [--only NAME]   measure lakesql against reference runs (see bench --help)
  lakesql version                           print the version
  lakesql delta-info DIR [VERSION]          print a Delta table's version, schema, files and app transactions
  lakesql help                              this text
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "--version" && args[0] != "-v" && args[0] != "--help" && args[0] != "-h" {
		return replCommand(ctx, args, stdin, stdout, stderr)
	}
	switch args[0] {
	case "serve":
		return serveCommand(ctx, args[1:], stdout, stderr)
	case "test":
		return testCommand(ctx, args[1:], stdout, stderr)
	case "bench":
		return benchCommand(ctx, args[1:], stdout, stderr)
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
