package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"runtime/pprof"
	"time"

	_ "github.com/go-sql-driver/mysql" // the client side of the wire workloads

	"github.com/lakesql/lakesql/planner/wire"
)

// benchPassword is root's password on the benchmark's own servers, which
// listen on loopback only and live as long as one workload.
const benchPassword = "lakesql-bench"

// wireClient is one client connection to a server on loopback, through
// go-sql-driver/mysql, as any Go program would talk to lakesql.
type wireClient struct {
	db   *sql.DB
	conn *sql.Conn
}

func dialWire(ctx context.Context, dsn string) (*wireClient, error) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &wireClient{db: db, conn: conn}, nil
}

func (c *wireClient) Close() error { return errors.Join(c.conn.Close(), c.db.Close()) }

// exec runs statements in order, failing on the first error.
func (c *wireClient) exec(ctx context.Context, stmts ...string) error {
	for _, q := range stmts {
		if _, err := c.conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// lakesqlServer is `lakesql serve` running in this process on a free
// loopback port, with one client connected.
type lakesqlServer struct {
	srv    *wire.Server
	served chan error
	*wireClient
}

func startLakesql(ctx context.Context, dataDir string) (*lakesqlServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv, err := wire.New(ctx, wire.Config{Listener: l, DataDir: dataDir, RootPassword: benchPassword})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("start lakesql server: %w", err)
	}
	s := &lakesqlServer{srv: srv, served: make(chan error, 1)}
	serveLabeled(ctx, "lakesql", func() error { return srv.Serve() }, s.served)
	dsn := fmt.Sprintf("root:%s@tcp(%s)/lakesql?timeout=30s", benchPassword, srv.Addr())
	if s.wireClient, err = dialWire(ctx, dsn); err != nil {
		s.shutdown()
		return nil, fmt.Errorf("lakesql server: %w", err)
	}
	return s, nil
}

// Close disconnects the client and stops the server.
func (s *lakesqlServer) Close() error {
	var errs []error
	if s.wireClient != nil {
		errs = append(errs, s.wireClient.Close())
	}
	return errors.Join(append(errs, s.shutdown())...)
}

// serveLabeled runs serve in a goroutine labelled with the side (on top of
// ctx's labels, the workload's), so that the goroutines the server starts
// for its connections carry the labels too and a CPU profile can be split
// by side even though the work happens in the server.
func serveLabeled(ctx context.Context, side string, serve func() error, done chan<- error) {
	pprof.Do(ctx, pprof.Labels("side", side), func(context.Context) {
		go func() { done <- serve() }()
	})
}

func (s *lakesqlServer) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.served
	if err != nil {
		return fmt.Errorf("stop lakesql server: %w", err)
	}
	return nil
}
