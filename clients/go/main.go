// Command go runs the client matrix's scenario (clients/SCENARIO.md) with
// go-sql-driver/mysql against the lakesql serve named by the LAKESQL_*
// environment: the text protocol through interpolateParams=true, the binary
// protocol (server-side prepared statements) through interpolateParams=false
// with arguments. It prints one line per check and a summary line, and
// exits 1 when a check failed.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// checkTimeout bounds one check, so that a hung statement fails its check
// instead of the whole run.
const checkTimeout = 2 * time.Minute

// scenario holds the connections and the tally.
type scenario struct {
	text    *sql.DB // interpolateParams=true: every statement is COM_QUERY
	textRaw *sql.DB // the same without parseTime: DATETIME cells as the server's text
	binary  *sql.DB // interpolateParams=false: statements with arguments are prepared
	passed  int
	failed  int
}

// check runs one check: nil is a pass, an error (or a panic) a failure
// whose message says what was expected and what came.
func (s *scenario) check(name string, f func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return f(ctx)
	}()
	if err != nil {
		s.failed++
		// One line per check, whatever the error's text holds.
		msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " / ")
		fmt.Printf("FAIL %s: %s\n", name, msg)
		return
	}
	s.passed++
	fmt.Printf("ok %s\n", name)
}

// config is the DSN of the server under test.
func config(password string, interpolate, parseTime bool) *mysql.Config {
	c := mysql.NewConfig()
	c.User = os.Getenv("LAKESQL_USER")
	c.Passwd = password
	c.Net = "tcp"
	c.Addr = os.Getenv("LAKESQL_HOST") + ":" + os.Getenv("LAKESQL_PORT")
	c.DBName = os.Getenv("LAKESQL_DATABASE")
	c.InterpolateParams = interpolate
	c.ParseTime = parseTime
	c.Loc = time.UTC
	return c
}

func open(c *mysql.Config) *sql.DB {
	conn, err := mysql.NewConnector(c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-sql-driver: %v\n", err)
		os.Exit(2)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(32)
	return db
}

// wantErr checks that err is a MySQL error with code and SQLSTATE.
func wantErr(err error, code uint16, state string) error {
	if err == nil {
		return fmt.Errorf("expected error %d (%s), got success", code, state)
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return fmt.Errorf("expected error %d (%s), got %v", code, state, err)
	}
	if me.Number != code || string(me.SQLState[:]) != state {
		return fmt.Errorf("expected error %d (%s), got %d (%s): %s", code, state, me.Number, me.SQLState[:], me.Message)
	}
	return nil
}

// version is the sink's Table_version from SHOW SINK STATUS.
func (s *scenario) version(ctx context.Context, sink string) (int64, error) {
	_, v, err := s.status(ctx, sink)
	return v, err
}

// status is the sink's Last_epoch (0 before its first commit) and
// Table_version from SHOW SINK STATUS.
func (s *scenario) status(ctx context.Context, sink string) (epoch, version int64, err error) {
	rs, err := s.text.QueryContext(ctx, "SHOW SINK STATUS "+sink)
	if err != nil {
		return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: %w", sink, err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil || len(cols) < 4 || !rs.Next() {
		return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: no row (%v, %v)", sink, err, rs.Err())
	}
	// Last_epoch and Table_version are the third and fourth columns; the
	// others are read and dropped.
	cells := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range cells {
		dest[i] = &cells[i]
	}
	if err := rs.Scan(dest...); err != nil {
		return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: %w", sink, err)
	}
	if cells[2].Valid {
		if epoch, err = strconv.ParseInt(cells[2].String, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: Last_epoch: %w", sink, err)
		}
	}
	if !cells[3].Valid {
		return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: Table_version is NULL", sink)
	}
	version, err = strconv.ParseInt(cells[3].String, 10, 64)
	return epoch, version, err
}

// grew checks that the sink's Table_version is before+delta.
func (s *scenario) grew(ctx context.Context, sink string, before, delta int64) error {
	now, err := s.version(ctx, sink)
	if err != nil {
		return err
	}
	if now != before+delta {
		return fmt.Errorf("expected Table_version %d+%d, got %d", before, delta, now)
	}
	return nil
}

// counts checks count(*) and count(DISTINCT id) of a query's FROM/WHERE.
func (s *scenario) counts(ctx context.Context, from string, want int64) error {
	var n, d int64
	if err := s.text.QueryRowContext(ctx, "SELECT count(*), count(DISTINCT id) FROM "+from).Scan(&n, &d); err != nil {
		return err
	}
	if n != want || d != want {
		return fmt.Errorf("expected count(*) %d and count(DISTINCT id) %d, got %d and %d", want, want, n, d)
	}
	return nil
}

func main() {
	client := "go-sql-driver"
	if len(os.Args) > 1 {
		client = os.Args[1]
	}
	pw := os.Getenv("LAKESQL_PASSWORD")
	s := &scenario{
		text:    open(config(pw, true, true)),
		textRaw: open(config(pw, true, false)),
		binary:  open(config(pw, false, true)),
	}
	s.connect()
	s.sinks()
	s.values()
	s.transactions()
	s.errors()
	s.metadata()
	s.bulk()
	s.concurrency()
	fmt.Printf("clients: %s %d passed, %d failed\n", client, s.passed, s.failed)
	if s.failed > 0 {
		os.Exit(1)
	}
}
