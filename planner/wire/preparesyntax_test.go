package wire

import (
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// A text that does not parse, sent through COM_STMT_PREPARE, gets the
// error the same text gets through COM_QUERY (1064, 42000), and the
// connection goes on.
func TestPrepareSyntaxError(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	ctx := context.Background()
	conn, err := ts.db(testPassword).Conn(ctx) // interpolateParams is off
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var asQuery *mysql.MySQLError
	if _, err := conn.ExecContext(ctx, "SELEC 1"); !errors.As(err, &asQuery) {
		t.Fatalf("COM_QUERY SELEC 1: %v", err)
	}
	check := func(what string, err error, msg string) {
		t.Helper()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1064 || string(me.SQLState[:]) != "42000" {
			t.Errorf("%s: %v, want 1064 (42000)", what, err)
		} else if msg != "" && me.Message != msg {
			t.Errorf("%s: message %q, COM_QUERY's is %q", what, me.Message, msg)
		}
		var one int
		if err := conn.QueryRowContext(ctx, "SELECT ?", 1).Scan(&one); err != nil || one != 1 {
			t.Errorf("after %s: prepared SELECT ? gives %d, %v", what, one, err)
		}
	}
	_, err = conn.PrepareContext(ctx, "SELEC 1")
	check("Prepare(SELEC 1)", err, asQuery.Message)
	_, err = conn.QueryContext(ctx, "SELEC ?", 1)
	check("Query(SELEC ?, 1)", err, "")
	_, err = conn.ExecContext(ctx, "INSERT INTO t VALUES (?, 'a'", 1)
	check("Exec(INSERT ... unclosed, 1)", err, "")
}

// The text is parsed with the sql_mode the commands sent before it (in
// the same write) set, as vitess parses it; an empty one is 1065.
func TestPrepareSyntaxPipelined(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	mustExec(t, ts.db(testPassword), createT)
	rc := rawLogin(t, ts.addr, testPassword)
	const quoted = `SELECT "id" FROM "t" WHERE "id" = ?`
	for _, tc := range []struct {
		mode string
		want uint16 // 0: prepared
	}{
		{"ANSI_QUOTES", 0},
		{"", 1064},
		{"ANSI_QUOTES", 0},
	} {
		var batch []byte
		for _, p := range [][]byte{append([]byte{0x03}, "SET sql_mode = '"+tc.mode+"'"...), append([]byte{0x16}, quoted...)} {
			batch = append(batch, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), 0)
			batch = append(batch, p...)
		}
		if _, err := rc.c.Write(batch); err != nil {
			t.Fatal(err)
		}
		if _, p, err := rc.read(); err != nil {
			t.Fatal(err)
		} else if _, err := parseOK(p); err != nil {
			t.Fatalf("SET sql_mode = '%s': %v", tc.mode, err)
		}
		seq, p, err := rc.read()
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := parseErr(p); ok {
			if e.code != tc.want || e.state != "42000" || seq != 1 {
				t.Errorf("sql_mode '%s': error %d (%s), sequence %d; want %d", tc.mode, e.code, e.state, seq, tc.want)
			}
		} else if tc.want != 0 || len(p) < 12 || p[0] != 0 {
			t.Errorf("sql_mode '%s': %s, want error %d", tc.mode, describe(p), tc.want)
		} else {
			for _, n := range []uint16{binary.LittleEndian.Uint16(p[7:]), binary.LittleEndian.Uint16(p[5:])} {
				for i := 0; n > 0 && i <= int(n); i++ {
					if _, _, err := rc.read(); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	p, err := rc.command([]byte{0x16})
	if e, ok := parseErr(p); err != nil || !ok || e.code != 1065 || e.state != "42000" {
		t.Errorf("empty COM_STMT_PREPARE: %s, %v; want error 1065 (42000)", describe(p), err)
	}
	if err := rc.selectOne(); err != nil {
		t.Errorf("after it: %v", err)
	}
}

// Over TLS the guard does not see the commands: vitess answers the text's
// parse failure itself (1105, a README limitation), and the connection
// goes on.
func TestPrepareSyntaxErrorOverTLS(t *testing.T) {
	srv := startTLSServer(t)
	if err := mysql.RegisterTLSConfig("lakesql-prepare", &tls.Config{InsecureSkipVerify: true}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql?tls=lakesql-prepare", testPassword, srv.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.PrepareContext(ctx, "SELEC 1"); mysqlCode(err) != 1105 {
		t.Errorf("Prepare(SELEC 1) over TLS: %v, want vitess's 1105", err)
	}
	var one int
	if err := conn.QueryRowContext(ctx, "SELECT ?", 1).Scan(&one); err != nil || one != 1 {
		t.Errorf("after it: prepared SELECT ? gives %d, %v", one, err)
	}
}
