package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
)

var readyLine = regexp.MustCompile(`^lakesql serving on (\S+) \(data (.*)\)$`)
var passwordLine = regexp.MustCompile(`^lakesql: generated password for root: (\S+) `)

// serveProcess is a running `lakesql serve`.
type serveProcess struct {
	cmd      *exec.Cmd
	addr     string
	password string // generated, if it printed one
	out      chan string
	stderr   *bytes.Buffer
}

func buildLakesql(t *testing.T) string {
	t.Helper()
	return sharedLakesql(t)
}

// startServe starts the binary and waits for its ready line.
func startServe(t *testing.T, bin string, env []string, args ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, out: make(chan string, 100), stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.out <- sc.Text()
		}
		close(p.out)
	}()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-p.out:
			if !ok {
				cmd.Wait()
				t.Fatalf("lakesql serve exited before it was ready: %v\nstderr:\n%s", cmd.ProcessState, p.stderr)
			}
			if m := passwordLine.FindStringSubmatch(line); m != nil {
				p.password = m[1]
			}
			if m := readyLine.FindStringSubmatch(line); m != nil {
				p.addr = m[1]
				return p
			}
		case <-timeout:
			t.Fatalf("no ready line from lakesql serve\nstderr:\n%s", p.stderr)
		}
	}
}

// stop sends SIGTERM and returns the exit code and the rest of stdout.
func (p *serveProcess) stop(t *testing.T) (int, string) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []string
	done := make(chan struct{})
	go func() {
		for line := range p.out {
			rest = append(rest, line)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("lakesql serve did not exit after SIGTERM")
	}
	p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode(), strings.Join(rest, "\n")
}

func TestServeBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildLakesql(t)
	data := t.TempDir()

	// First start: a password is generated and printed once.
	p := startServe(t, bin, []string{"LAKESQL_ROOT_PASSWORD="}, "--listen", "127.0.0.1:0", "--data", data)
	if p.password == "" {
		t.Fatal("the first start printed no generated password")
	}
	db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql", p.password, p.addr))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE SINK t INTO DELTA 'lake/t' (id BIGINT NOT NULL, PRIMARY KEY (id))",
		"INSERT INTO t VALUES (1), (2)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// An open transaction at SIGTERM is rolled back.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO t VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	code, rest := p.stop(t)
	if code != 0 {
		t.Fatalf("exit code %d after SIGTERM\nstderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(rest, "server stopped") {
		t.Errorf("no stop line in %q", rest)
	}
	tx.Rollback()
	db.Close()

	// Second start: nothing printed, the stored password and the data stay.
	p2 := startServe(t, bin, []string{"LAKESQL_ROOT_PASSWORD="}, "--listen", "127.0.0.1:0", "--data", data)
	if p2.password != "" {
		t.Error("the second start printed a password again")
	}
	db2, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql", p.password, p2.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	rows, err := db2.Query("SELECT id FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		got = append(got, id)
	}
	rows.Close()
	if diff := cmp.Diff([]int64{1, 2}, got); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
	db2.Close()
	if code, _ := p2.stop(t); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, p2.stderr)
	}

	// LAKESQL_ROOT_PASSWORD replaces the stored password.
	p3 := startServe(t, bin, []string{"LAKESQL_ROOT_PASSWORD=from-env"}, "--listen", "127.0.0.1:0", "--data", data)
	for pw, ok := range map[string]bool{"from-env": true, p.password: false} {
		db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql", pw, p3.addr))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Ping(); (err == nil) != ok {
			t.Errorf("password %q: ping error %v, want success %v", pw, err, ok)
		}
		db.Close()
	}
	if code, _ := p3.stop(t); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, p3.stderr)
	}
}

func TestServeRefusesOpenServer(t *testing.T) {
	var stdout, stderr bytes.Buffer
	t.Setenv("LAKESQL_ROOT_PASSWORD", "")
	code := serveCommand(context.Background(), []string{"--listen", "0.0.0.0:0", "--data", t.TempDir()}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "refusing to listen beyond loopback without a root password") {
		t.Errorf("code %d, stderr %q", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q", stdout.String())
	}
}

func TestServeBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--nosuch"},
		{"--data", t.TempDir(), "extra"},
		{"--data", t.TempDir(), "--tls-cert", "x.pem"},
		{"--data", t.TempDir(), "--max-connections", "0"},
		{"--data", t.TempDir(), "--max-connect-errors", "0"},
		{"--data", t.TempDir(), "--connect-timeout", "0"},
		{"--data", t.TempDir(), "--connect-timeout", "1s"},
		{"--data", t.TempDir(), "--max-connections", "100001"},
		{"--listen", "127.0.0.1:0", "--data", t.TempDir(), "--metrics-listen", "nonsense"},
	} {
		var stderr bytes.Buffer
		if code := serveCommand(context.Background(), args, io.Discard, &stderr); code == 0 {
			t.Errorf("%v: exit code 0", args)
		}
		if stderr.Len() == 0 {
			t.Errorf("%v: no message", args)
		}
	}
}
