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

	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/sqllogictest"
)

const testUsage = `Usage: lakesql test [--dsn DSN] [--data DIR] [--table-root LOCATION] [--storage KEY=VALUE]... [--label NAME]... [-v] FILE|FOLDER...

Runs sqllogictest files (a folder: every *.slt file under it, sorted).
By default each file runs on the embedded engine in a fresh data directory;
with --dsn, against a MySQL server such as lakesql serve. With --table-root,
each file's relative Delta locations go to a folder of its own under it
(and, when it is object storage such as s3://bucket/prefix, so does its
__TEST_DIR__). --label names further engines skipif/onlyif match (the
project's suites use lakesql-s3 for Delta sinks on object storage).
Failures are printed
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
	var (
		opts    sqllogictest.Options
		storage storageFlags
		labels  rootList
	)
	fs.StringVar(&opts.DSN, "dsn", "", "run against a MySQL server: user:password@tcp(host:port)/lakesql (restart then only reconnects)")
	fs.StringVar(&opts.DataDir, "data", "", "embedded data directory, shared by the files and kept (default: a fresh temporary one per file)")
	fs.BoolVar(&opts.Verbose, "v", false, "print a summary line per file")
	addStorageFlags(fs, &opts.TableRoot, &storage)
	fs.Var(&labels, "label", "a further engine name for skipif/onlyif, such as "+sqllogictest.LabelObjectStorage+" (comma-separated, repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := storage.check(); err != nil {
		fmt.Fprintf(stderr, "lakesql test: %v\n", err)
		return 2
	}
	if opts.DSN != "" && opts.DataDir != "" {
		fmt.Fprintln(stderr, "lakesql test: --data is for the embedded engine; a server has its own (drop --data or --dsn)")
		return 2
	}
	if opts.DSN != "" && (opts.TableRoot != "" || len(storage.opts) > 0) {
		fmt.Fprintln(stderr, "lakesql test: --table-root and --storage are for the embedded engine; a server has its own (lakesql serve --table-root)")
		return 2
	}
	opts.Storage = storage.opts
	opts.Labels = labels
	if storageloc.IsLocation(opts.TableRoot) {
		opts.TestDirRoot = opts.TableRoot
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
