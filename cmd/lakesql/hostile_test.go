package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
)

// The hostile-input suite: probes that attack a real `lakesql serve`, each
// registered by a file hostile_<area>_test.go. Every probe is judged on four
// things: the error code it got, that the server still answers SELECT 1
// afterwards, that the canary sinks still hold their rows, and that no secret
// reached the server's stderr. A file appearing in the directory outside
// every root is an escape.

var hostileOnly = flag.String("hostile.only", "", "run only the hostile probes whose name starts with this")

// hostileOutsideCanary is the content of secret.txt in the directory outside
// every root: any result that contains it read a file it must not.
const hostileOutsideCanary = "HOSTILE-OUTSIDE-CANARY-5c1e0b"

// hostilePassword is root's password on the suite's server.
const hostilePassword = "hostile-root-pw"

// hostileProbe is one hostile input.
type hostileProbe struct {
	name    string // area/what, unique
	want    int    // the MySQL error code run's error must carry; 0: no error
	timeout time.Duration
	run     func(h *hostileEnv) error
}

var hostileProbes []hostileProbe

// registerHostile adds probes to the suite; called from init functions.
func registerHostile(ps ...hostileProbe) { hostileProbes = append(hostileProbes, ps...) }

// hostileEnv is what a probe gets.
type hostileEnv struct {
	t        *testing.T
	ctx      context.Context
	db       *sql.DB // root, database lakesql, a pool of its own
	addr     string
	password string
	data     string
	outside  string
	suite    *hostileSuite
	closers  []func()
}

// The verdicts a probe returns when it sees what must not happen.
type (
	hostileEscape struct{ msg string }
	hostileLeak   struct{ msg string }
	hostileWrong  struct{ msg string }
)

func (e hostileEscape) Error() string { return "escape: " + e.msg }
func (e hostileLeak) Error() string   { return "leak: " + e.msg }
func (e hostileWrong) Error() string  { return "wrong: " + e.msg }

func (h *hostileEnv) escaped(format string, args ...any) error {
	return hostileEscape{fmt.Sprintf(format, args...)}
}
func (h *hostileEnv) leaked(format string, args ...any) error {
	return hostileLeak{fmt.Sprintf(format, args...)}
}
func (h *hostileEnv) wrong(format string, args ...any) error {
	return hostileWrong{fmt.Sprintf(format, args...)}
}

func (h *hostileEnv) dsn(user, password string) string {
	return fmt.Sprintf("%s:%s@tcp(%s)/lakesql?timeout=20s", user, password, h.addr)
}

// open returns a pool as user; it is closed after the probe.
func (h *hostileEnv) open(user, password string) *sql.DB {
	db, err := sql.Open("mysql", h.dsn(user, password))
	if err != nil {
		h.t.Fatal(err)
	}
	h.closers = append(h.closers, func() { db.Close() })
	return db
}

func (h *hostileEnv) exec(q string, args ...any) error {
	_, err := h.db.ExecContext(h.ctx, q, args...)
	return err
}

func (h *hostileEnv) query(q string, args ...any) ([][]string, error) {
	return hostileRows(h.ctx, h.db, q, args...)
}

// secret registers a string that must never appear on the server's stderr.
func (h *hostileEnv) secret(s string) { h.suite.secrets = append(h.suite.secrets, s) }

func (h *hostileEnv) stderr() string { return h.suite.proc.stderr.String() }

// serve starts a separate server with its own flags, stopped after the probe.
func (h *hostileEnv) serve(env []string, args ...string) *serveProcess {
	p := startServe(h.t, h.suite.bin, append([]string{"LAKESQL_ROOT_PASSWORD=" + hostilePassword}, env...), args...)
	h.closers = append(h.closers, func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

func hostileRows(ctx context.Context, db *sql.DB, q string, args ...any) ([][]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			if v.Valid {
				row[i] = v.String
			} else {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// hostileSuite is the server under attack and the tallies.
type hostileSuite struct {
	t       *testing.T
	bin     string
	data    string
	outside string
	proc    *serveProcess
	exited  chan struct{}
	check   *sql.DB
	secrets []string

	probes, clearErrors, crashes, hangs, escapes, leaks, wrongs int
	canariesDamaged                                             bool
}

// The canary sinks and the rows they hold throughout.
var hostileCanaries = []struct{ name, create string }{
	{"canary_d", "CREATE SINK canary_d INTO DELTA 'lake/canary_d' (id BIGINT NOT NULL, v VARCHAR(32), PRIMARY KEY (id))"},
	{"canary_i", "CREATE SINK canary_i INTO ICEBERG 'hostile.canary_i' (id BIGINT NOT NULL, v VARCHAR(32))"},
}

var hostileCanaryRows = [][]string{{"1", "one"}, {"2", "two"}, {"3", "three"}}

func (s *hostileSuite) start() {
	s.proc = startServe(s.t, s.bin, []string{"LAKESQL_ROOT_PASSWORD=" + hostilePassword},
		"--listen", "127.0.0.1:0", "--data", s.data)
	s.exited = make(chan struct{})
	go func(p *serveProcess, exited chan struct{}) {
		p.cmd.Wait()
		close(exited)
	}(s.proc, s.exited)
	if s.check != nil {
		s.check.Close()
	}
	var err error
	if s.check, err = sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql?timeout=10s", hostilePassword, s.proc.addr)); err != nil {
		s.t.Fatal(err)
	}
	s.check.SetMaxOpenConns(2)
}

func (s *hostileSuite) stop() {
	if s.check != nil {
		s.check.Close()
	}
	if s.proc != nil {
		s.proc.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *hostileSuite) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// healthy is the check after every probe: SELECT 1, the canaries' rows,
// the stderr secrets and the outside directory. It returns what is wrong.
func (s *hostileSuite) healthy(outsideBefore []string) (crash, hang bool, problems []string) {
	if !s.alive() {
		return true, false, []string{"the server exited"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var one int
	if err := s.check.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		if !s.alive() {
			return true, false, []string{"the server exited"}
		}
		return false, true, []string{fmt.Sprintf("SELECT 1 after the probe: %v", err)}
	}
	for _, c := range hostileCanaries {
		got, err := hostileRows(ctx, s.check, "SELECT id, v FROM "+c.name+" ORDER BY id")
		if err != nil {
			problems = append(problems, fmt.Sprintf("canary %s: %v", c.name, err))
			s.canariesDamaged = true
		} else if diff := cmp.Diff(hostileCanaryRows, got); diff != "" {
			problems = append(problems, fmt.Sprintf("canary %s changed (-want +got):\n%s", c.name, diff))
			s.canariesDamaged = true
		}
	}
	stderr := s.proc.stderr.String()
	for _, sec := range s.secrets {
		if strings.Contains(stderr, sec) {
			problems = append(problems, fmt.Sprintf("leak: secret %q on the server's stderr", sec))
		}
	}
	if after := listTree(s.outside); !cmp.Equal(outsideBefore, after) {
		problems = append(problems, fmt.Sprintf("escape: the outside directory changed: %v -> %v", outsideBefore, after))
	}
	return false, false, problems
}

// listTree lists every path under dir, relative, sorted.
func listTree(dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// hostileCode is the MySQL error code of err, 0 for nil, -1 for an error
// that is not a MySQL error (a dropped connection, a driver error).
func hostileCode(err error) int {
	if err == nil {
		return 0
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return int(me.Number)
	}
	return -1
}

func TestHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the hostile-input suite")
	}
	s := &hostileSuite{t: t, bin: buildLakesql(t)}
	base := t.TempDir()
	s.data = filepath.Join(base, "data")
	s.outside = filepath.Join(base, "outside")
	if err := os.MkdirAll(s.outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.outside, "secret.txt"), []byte(hostileOutsideCanary), 0o644); err != nil {
		t.Fatal(err)
	}
	s.start()
	defer s.stop()
	for _, c := range hostileCanaries {
		if _, err := s.check.Exec(c.create); err != nil {
			t.Fatalf("%s: %v", c.create, err)
		}
		if _, err := s.check.Exec("INSERT INTO " + c.name + " VALUES (1, 'one'), (2, 'two'), (3, 'three')"); err != nil {
			t.Fatalf("fill %s: %v", c.name, err)
		}
	}

	names := map[string]bool{}
	for _, p := range hostileProbes {
		if names[p.name] {
			t.Fatalf("two hostile probes are named %q", p.name)
		}
		names[p.name] = true
	}
	for _, p := range hostileProbes {
		if !strings.HasPrefix(p.name, *hostileOnly) {
			continue
		}
		s.runProbe(p)
	}
	canaries := "canaries intact"
	if s.canariesDamaged {
		canaries = "canaries DAMAGED"
	}
	fmt.Printf("hostile: %d probes, %d clear errors, %d crashes, %d hangs, %d escapes, %d leaks, %d wrong, %s\n",
		s.probes, s.clearErrors, s.crashes, s.hangs, s.escapes, s.leaks, s.wrongs, canaries)
}

// runProbe runs one probe with its deadline and judges it.
func (s *hostileSuite) runProbe(p hostileProbe) {
	t := s.t
	s.probes++
	timeout := p.timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql?timeout=20s", hostilePassword, s.proc.addr))
	if err != nil {
		t.Fatal(err)
	}
	h := &hostileEnv{t: t, ctx: ctx, db: db, addr: s.proc.addr, password: hostilePassword,
		data: s.data, outside: s.outside, suite: s}
	before := listTree(s.outside)
	done := make(chan error, 1)
	go func() { done <- p.run(h) }()
	var got error
	hung := false
	select {
	case got = <-done:
	case <-time.After(timeout + 10*time.Second):
		hung = true
	}
	for i := len(h.closers) - 1; i >= 0; i-- {
		h.closers[i]()
	}
	db.Close()

	var problems []string
	var esc hostileEscape
	var leak hostileLeak
	var wrong hostileWrong
	switch {
	case hung:
		problems = append(problems, fmt.Sprintf("hang: no answer in %v", timeout))
	case errors.As(got, &esc):
		s.escapes++
		problems = append(problems, got.Error())
	case errors.As(got, &leak):
		s.leaks++
		problems = append(problems, got.Error())
	case errors.As(got, &wrong):
		s.wrongs++
		problems = append(problems, got.Error())
	default:
		code := hostileCode(got)
		if code != p.want {
			s.wrongs++
			problems = append(problems, fmt.Sprintf("got code %d (%v), want %d", code, got, p.want))
		} else if p.want != 0 {
			s.clearErrors++
		}
	}
	crash, hang, more := s.healthy(before)
	for _, m := range more {
		switch {
		case strings.HasPrefix(m, "leak:"):
			s.leaks++
		case strings.HasPrefix(m, "escape:"):
			s.escapes++
		}
	}
	problems = append(problems, more...)
	if hung || hang {
		s.hangs++
	}
	if crash {
		s.crashes++
	}
	if len(problems) > 0 {
		t.Errorf("hostile probe %s:\n  %s", p.name, strings.Join(problems, "\n  "))
	}
	if crash || hang || hung {
		// Keep going with a fresh server on the same data directory.
		s.stop()
		s.check = nil
		s.start()
	}
}
