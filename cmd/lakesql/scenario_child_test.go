package main

// A database/sql session in a child process, so that the scenario can kill
// a client mid-transaction with SIGKILL. The child is this test binary
// re-executed with scenarioChildEnv naming the driver ("mysql" or
// "lakesql") and scenarioDSNEnv its DSN (see TestMain). It opens one
// session and runs the statements it reads on stdin, one JSON request per
// line, answering each with one JSON line on stdout.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const (
	scenarioChildEnv = "LAKESQL_SCENARIO_CHILD"
	scenarioDSNEnv   = "LAKESQL_SCENARIO_DSN"
	// childReplyPrefix marks the child's answers among anything else a
	// library might print on stdout.
	childReplyPrefix = "scenario-child-reply "
)

type childRequest struct {
	Query bool
	SQL   string
}

type childReply struct {
	Affected int64      `json:",omitempty"`
	Rows     [][]string `json:",omitempty"`
	Err      *sqlError  `json:",omitempty"`
	Fail     string     `json:",omitempty"` // an error without a MySQL code
}

// runScenarioChild is the child's main: it returns the exit code.
func runScenarioChild(driverName, dsn string) int {
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	reply := func(r childReply) {
		b, _ := json.Marshal(r)
		fmt.Fprintf(out, "%s%s\n", childReplyPrefix, b)
		out.Flush()
	}
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scenario child: %v\n", err)
		return 1
	}
	defer db.Close()
	db.SetMaxIdleConns(0)
	s, err := openSQLSession(ctx, db)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scenario child: %v\n", err)
		return 1
	}
	defer s.Close()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for in.Scan() {
		var req childRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			reply(childReply{Fail: "bad request: " + err.Error()})
			continue
		}
		var r childReply
		if req.Query {
			r.Rows, err = s.Query(ctx, req.SQL)
		} else {
			r.Affected, err = s.Exec(ctx, req.SQL)
		}
		var se *sqlError
		switch {
		case errors.As(err, &se):
			r.Err = se
		case err != nil:
			r.Fail = err.Error()
		}
		reply(r)
	}
	return 0
}

// childSession is the parent's end of a child process session.
type childSession struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies *bufio.Scanner
	stderr  *bytes.Buffer
}

// startChildSession starts the child and checks that its session is up.
func startChildSession(t *testing.T, driverName, dsn string) (*childSession, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), scenarioChildEnv+"="+driverName, scenarioDSNEnv+"="+dsn)
	c := &childSession{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.replies = bufio.NewScanner(stdout)
	c.replies.Buffer(make([]byte, 0, 64<<10), 16<<20)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Kill() })
	if _, err := c.Query(context.Background(), "SELECT 1"); err != nil {
		c.Kill()
		return nil, fmt.Errorf("child session: %w", err)
	}
	return c, nil
}

func (c *childSession) call(req childRequest) (childReply, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return childReply{}, err
	}
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		return childReply{}, fmt.Errorf("child session: write: %w (stderr: %s)", err, c.stderr)
	}
	for c.replies.Scan() {
		line, ok := strings.CutPrefix(c.replies.Text(), childReplyPrefix)
		if !ok {
			continue
		}
		var r childReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return childReply{}, fmt.Errorf("child session: reply %q: %w", line, err)
		}
		if r.Fail != "" {
			return r, errors.New(r.Fail)
		}
		if r.Err != nil {
			return r, r.Err
		}
		return r, nil
	}
	return childReply{}, fmt.Errorf("child session ended (stderr: %s)", c.stderr)
}

func (c *childSession) Exec(_ context.Context, query string) (int64, error) {
	r, err := c.call(childRequest{SQL: query})
	return r.Affected, err
}

func (c *childSession) Query(_ context.Context, query string) ([][]string, error) {
	r, err := c.call(childRequest{Query: true, SQL: query})
	if err != nil {
		return nil, err
	}
	if r.Rows == nil {
		r.Rows = [][]string{}
	}
	return r.Rows, nil
}

// Close ends the child's input: it closes its session and exits.
func (c *childSession) Close() error {
	c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("child session: %w (stderr: %s)", err, c.stderr)
	}
	return nil
}

// Kill ends the child with SIGKILL and waits for it to be gone.
func (c *childSession) Kill() error {
	if c.cmd.ProcessState != nil {
		return nil
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return err
	}
	c.cmd.Wait() // reports the kill
	return nil
}
