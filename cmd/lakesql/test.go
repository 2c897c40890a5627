package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/lakesql/lakesql/sqllogictest"
)

const testUsage = `Usage: lakesql test [--dsn DSN] [--data DIR] [-v] FILE|FOLDER...

Runs sqllogictest files (a folder: every *.slt file under it, sorted).
By default each file runs on the embedded engine in a fresh data directory;
with --dsn, against a MySQL server such as lakesql serve. Failures are printed
with file:line, the SQL, what was expected and what happened; the last line
is "N passed, M failed" (", K skipped" when records were skipped).
Exit code: 0 all passed, 1 a failure, 2 a usage error.

Flags:
`

// testCommand runs lakesql test: the sqllogictest runner.
func testCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lakesql test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), testUsage)
		fs.PrintDefaults()
	}
	var opts sqllogictest.Options
	fs.StringVar(&opts.DSN, "dsn", "", "run against a MySQL server: user:password@tcp(host:port)/lakesql (restart then only reconnects)")
	fs.StringVar(&opts.DataDir, "data", "", "embedded data directory, shared by the files and kept (default: a fresh temporary one per file)")
	fs.BoolVar(&opts.Verbose, "v", false, "print a summary line per file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if opts.DSN != "" && opts.DataDir != "" {
		fmt.Fprintln(stderr, "lakesql test: --data is for the embedded engine; a server has its own (drop --data or --dsn)")
		return 2
	}
	files, err := sqllogictest.Expand(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "lakesql test: %v\n\n", err)
		fs.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts.Out = stdout
	sum := sqllogictest.New(opts).Run(ctx, files)
	fmt.Fprintln(stdout, sum)
	if sum.Failed > 0 {
		return 1
	}
	return 0
}
