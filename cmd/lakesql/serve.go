package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/lakesql/lakesql/planner"
	"github.com/lakesql/lakesql/planner/wire"
	"github.com/lakesql/lakesql/planner/wire/metrics"
)

// shutdownGrace bounds how long serve waits for statements in flight when
// asked to stop; after it, the remaining connections are closed.
const shutdownGrace = 30 * time.Second

// rootList is the value of --allowed-roots: comma-separated directories
// or object storage locations (s3://bucket/prefix), kept as written (the
// planner makes directories absolute and canonicalises locations); the
// flag may be repeated.
type rootList []string

func (l *rootList) String() string { return strings.Join(*l, ",") }

func (l *rootList) Set(v string) error {
	for _, r := range strings.Split(v, ",") {
		if r = strings.TrimSpace(r); r != "" {
			*l = append(*l, r)
		}
	}
	return nil
}

// allowedRootsUsage is the --allowed-roots flag's help text.
const allowedRootsUsage = "comma-separated directories or object storage locations (s3://bucket/prefix) sink locations must stay under " +
	"(default: the data directory, and --table-root)"

// serveCommand runs lakesql serve: the MySQL wire server.
func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lakesql serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		metricsListen string
		cfg           wire.Config
		roots         rootList
		storage       storageFlags
	)
	fs.StringVar(&cfg.Listen, "listen", wire.DefaultListen, "address to listen on (host:port)")
	fs.StringVar(&cfg.DataDir, "data", "lakesql-data", "data directory")
	fs.StringVar(&cfg.RootPassword, "root-password", "", "root's password (default: $"+wire.RootPasswordEnv+", else the stored one, else generated and printed once)")
	fs.StringVar(&cfg.TLSCertFile, "tls-cert", "", "TLS certificate file (PEM)")
	fs.StringVar(&cfg.TLSKeyFile, "tls-key", "", "TLS private key file (PEM)")
	fs.Uint64Var(&cfg.MaxConnections, "max-connections", wire.DefaultMaxConnections,
		"maximum simultaneous connections, logged in or not (1 to 100000); the next are refused with 1040")
	fs.DurationVar(&cfg.ConnectTimeout, "connect-timeout", wire.DefaultConnectTimeout,
		"how long a client may take to log in before its connection is closed (whole seconds, 2s or more)")
	fs.Uint64Var(&cfg.MaxConnectErrors, "max-connect-errors", wire.DefaultMaxConnectErrors,
		"failed logins in a row after which a client address is refused with 1129 until FLUSH HOSTS")
	fs.Uint64Var(&cfg.OpenFilesLimit, "open-files-limit", 0,
		"set the process's open-file limit (RLIMIT_NOFILE) at start (0: keep it); max-connections is lowered to fit it")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", 0, "network read timeout (0: none; a login is bounded by --connect-timeout)")
	fs.DurationVar(&cfg.WriteTimeout, "write-timeout", 0, "network write timeout (0: none)")
	fs.Var(&roots, "allowed-roots", allowedRootsUsage)
	fs.IntVar(&cfg.MaxOpenSinks, "max-open-sinks", planner.DefaultMaxOpenSinks,
		"sinks that keep their write buffer (about 2.6 MB each) open; the least recently used idle ones release theirs (0: no limit)")
	fs.DurationVar(&cfg.SinkIdleTimeout, "sink-idle-timeout", planner.DefaultSinkIdleTimeout,
		"release the write buffer of a sink unused this long (0: never)")
	fs.DurationVar(&cfg.CatalogTimeout, "catalog-timeout", planner.DefaultCatalogTimeout,
		"bound on each call to an Iceberg catalog: open, load, create, commit (0: none)")
	fs.StringVar(&metricsListen, "metrics-listen", "", "serve Prometheus metrics at http://host:port/metrics (default: off)")
	addStorageFlags(fs, &cfg.TableRoot, &storage)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lakesql serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if cfg.MaxConnections == 0 || cfg.MaxConnectErrors == 0 || cfg.ConnectTimeout == 0 {
		fmt.Fprintln(stderr, "lakesql serve: --max-connections, --connect-timeout and --max-connect-errors take no 0 (there is no unlimited setting)")
		return 2
	}
	if err := storage.check(); err != nil {
		fmt.Fprintf(stderr, "lakesql serve: %v\n", err)
		return 2
	}
	cfg.AllowedRoots = roots
	cfg.Log = stderr
	// The flags' 0 is "no bound"; the planner's is "the default".
	for _, v := range []*time.Duration{&cfg.SinkIdleTimeout, &cfg.CatalogTimeout} {
		if *v <= 0 {
			*v = -1
		}
	}
	if cfg.MaxOpenSinks <= 0 {
		cfg.MaxOpenSinks = -1
	}
	cfg.Storage = storage.opts
	if cfg.RootPassword == "" {
		cfg.RootPassword = os.Getenv(wire.RootPasswordEnv)
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv, err := wire.New(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "lakesql serve: %v\n", err)
		return 1
	}
	if pw := srv.GeneratedPassword(); pw != "" {
		fmt.Fprintf(stdout, "lakesql: generated password for root: %s (shown once; its hash is in %s)\n",
			pw, wire.PrivilegesFile)
	}
	if cfg.TableRoot != "" {
		fmt.Fprintf(stdout, "lakesql: relative Delta locations go under %s\n", cfg.TableRoot)
	}
	var endpoint *metrics.Endpoint
	if metricsListen != "" {
		if endpoint, err = metrics.Listen(metricsListen, srv); err != nil {
			fmt.Fprintf(stderr, "lakesql serve: %v\n", err)
			_ = srv.Shutdown(context.Background())
			return 2
		}
	}
	served := make(chan error, 2)
	go func() { served <- srv.Serve() }()
	fmt.Fprintf(stdout, "lakesql serving on %s (data %s)\n", srv.Addr(), cfg.DataDir)
	if endpoint != nil {
		go func() { served <- endpoint.Serve() }()
		fmt.Fprintf(stdout, "lakesql: metrics on http://%s/metrics\n", endpoint.Addr())
	}

	code := 0
	select {
	case <-ctx.Done():
	case err := <-served:
		// Serve returns only after Shutdown: ending on its own is a failure.
		fmt.Fprintf(stderr, "lakesql serve: %v\n", err)
		code = 1
	}
	stop() // a second signal kills the process the default way
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if endpoint != nil {
		_ = endpoint.Shutdown(sctx)
	}
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "lakesql serve: shutdown: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "lakesql: server stopped")
	return code
}
