package main

// Sessions through the mariadb command-line client (Debian's
// mariadb-client): one long-running `mariadb` process per session, fed
// statements on stdin in batch mode. The client is run with -vv so that
// it prints what the server's OK packet says ("Query OK, N rows
// affected"); --force keeps it going after an error, as an interactive
// user would.
//
// The end of a statement's output is found with two markers written after
// it: a SELECT of a unique string, whose row ends the statement's output on
// stdout, and a `source` of a file that does not exist, a client-side
// command whose error line ("Failed to open file '.../mark'") ends its
// error output on stderr. The client runs the three in order, so each
// stream holds the statement's output before its marker.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	mariadbError    = regexp.MustCompile(`^ERROR (\d+) \(([0-9A-Z]{5})\)(?: at line \d+)?: (.*)$`)
	mariadbAffected = regexp.MustCompile(`^Query OK, (\d+) rows? affected`)
	mariadbRowCount = regexp.MustCompile(`^(\d+ rows? in set|Empty set)`)
)

// echoRule is the line the client prints around each statement it echoes.
const echoRule = "--------------"

// mariadbSession is one mariadb process.
type mariadbSession struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  chan string // closed at EOF
	stderr  chan string // closed at EOF
	missing string      // a folder that does not exist, for the stderr marker
	mu      sync.Mutex
	n       int
}

// startMariadb starts a client connected to addr as user and checks that
// it is connected; a refused login comes back as its *sqlError.
func startMariadb(t *testing.T, addr, user, password string) (*mariadbSession, error) {
	t.Helper()
	host, port, ok := strings.Cut(addr, ":")
	if !ok {
		return nil, fmt.Errorf("address %q", addr)
	}
	cmd := exec.Command("mariadb", "--no-defaults",
		"--batch", "--raw", "--skip-column-names", "--unbuffered", "-vv", "--force",
		"--skip-reconnect", "--skip-ssl", "--protocol=TCP",
		"--host="+host, "--port="+port, "--user="+user, "lakesql")
	cmd.Env = append(os.Environ(), "MYSQL_PWD="+password)
	m := &mariadbSession{cmd: cmd, stdout: make(chan string, 1024), stderr: make(chan string, 1024),
		missing: filepath.Join(t.TempDir(), "no-such-dir")}
	var err error
	if m.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go readLines(stdout, m.stdout)
	go readLines(stderr, m.stderr)
	t.Cleanup(func() { m.Kill() })
	if _, err := m.Query(context.Background(), "SELECT 1"); err != nil {
		m.Kill()
		return nil, err
	}
	return m, nil
}

func readLines(r io.Reader, to chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		to <- sc.Text()
	}
	close(to)
}

// result is what the client printed for one statement.
type mariadbResult struct {
	rows     [][]string
	affected int64
	err      error
}

// run sends a statement and its markers and reads what the client printed.
func (m *mariadbSession) run(query string) mariadbResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	mark := fmt.Sprintf("lakesql-scenario-mark-%d", m.n)
	query = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(query), ";"))
	input := fmt.Sprintf("%s;\nSELECT '%s';\nsource %s/%s\n", query, mark, m.missing, mark)
	if _, err := io.WriteString(m.stdin, input); err != nil {
		// The client is gone (a refused login, a kill): what it said
		// last is on stderr.
		return mariadbResult{err: m.exitError(err)}
	}

	// stdout: the statement's echo and output, then the marker SELECT's.
	var out []string
	for {
		line, ok := <-m.stdout
		if !ok {
			return mariadbResult{err: m.exitError(io.ErrUnexpectedEOF)}
		}
		if line == mark {
			break
		}
		out = append(out, line)
	}
	// The marker's "1 row in set" and blank line.
	for range 2 {
		<-m.stdout
	}
	// stderr: the statement's error, if any, then the marker's.
	var errLines []string
	for {
		line, ok := <-m.stderr
		if !ok {
			return mariadbResult{err: m.exitError(io.ErrUnexpectedEOF)}
		}
		if strings.Contains(line, "/"+mark+"'") {
			break
		}
		errLines = append(errLines, line)
	}
	// Drop the marker SELECT's echo: rule, statement, rule, blank line.
	if len(out) < 4 || out[len(out)-4] != echoRule {
		return mariadbResult{err: fmt.Errorf("mariadb output without the marker's echo: %q", out)}
	}
	out = out[:len(out)-4]
	res := parseMariadbOutput(out)
	if len(errLines) > 0 {
		res.err = parseMariadbError(errLines)
	}
	return res
}

// parseMariadbOutput reads one statement's stdout: its echo between two
// rules and a blank line, then rows and a summary line.
func parseMariadbOutput(out []string) mariadbResult {
	var res mariadbResult
	rules := 0
	start := len(out)
	for i, line := range out {
		if line == echoRule {
			rules++
			if rules == 2 {
				start = i + 2 // skip the blank line after the echo
				break
			}
		}
	}
	for _, line := range out[min(start, len(out)):] {
		if m := mariadbAffected.FindStringSubmatch(line); m != nil {
			res.affected, _ = strconv.ParseInt(m[1], 10, 64)
			continue
		}
		if mariadbRowCount.MatchString(line) || line == "" {
			continue
		}
		res.rows = append(res.rows, strings.Split(line, "\t"))
	}
	return res
}

// parseMariadbError reads the client's error lines: "ERROR 1146 (42S02)
// at line 3: message".
func parseMariadbError(lines []string) error {
	for i, line := range lines {
		if m := mariadbError.FindStringSubmatch(line); m != nil {
			code, _ := strconv.Atoi(m[1])
			msg := strings.Join(append([]string{m[3]}, lines[i+1:]...), "\n")
			return &sqlError{Code: code, State: m[2], Message: msg}
		}
	}
	return fmt.Errorf("mariadb: %s", strings.Join(lines, "\n"))
}

// exitError waits for a client that stopped and returns the error it
// printed (a refused login: ERROR 1045), else cause.
func (m *mariadbSession) exitError(cause error) error {
	go func() {
		for range m.stdout {
		}
	}()
	var lines []string
	for line := range m.stderr {
		lines = append(lines, line)
	}
	m.cmd.Wait()
	if len(lines) > 0 {
		err := parseMariadbError(lines)
		var se *sqlError
		if errors.As(err, &se) {
			return se
		}
		return fmt.Errorf("mariadb stopped (%v): %w", m.cmd.ProcessState, err)
	}
	return fmt.Errorf("mariadb stopped (%v): %w", m.cmd.ProcessState, cause)
}

func (m *mariadbSession) Exec(_ context.Context, query string) (int64, error) {
	res := m.run(query)
	return res.affected, res.err
}

func (m *mariadbSession) Query(_ context.Context, query string) ([][]string, error) {
	res := m.run(query)
	if res.err != nil {
		return nil, res.err
	}
	if res.rows == nil {
		res.rows = [][]string{}
	}
	return res.rows, nil
}

// Close ends the client's input: it says goodbye (COM_QUIT) and exits.
func (m *mariadbSession) Close() error {
	m.stdin.Close()
	for range m.stdout {
	}
	for range m.stderr {
	}
	if err := m.cmd.Wait(); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	return nil
}

// Kill ends the client with SIGKILL.
func (m *mariadbSession) Kill() error {
	if m.cmd.ProcessState != nil {
		return nil
	}
	if err := m.cmd.Process.Kill(); err != nil {
		return err
	}
	go func() {
		for range m.stdout {
		}
	}()
	go func() {
		for range m.stderr {
		}
	}()
	m.cmd.Wait()
	return nil
}
