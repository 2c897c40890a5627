package main

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeSurvivesConnectionFlood is the flood that made lakesql serve
// exit: 440 idle TCP sockets against the default settings, with the
// open-file limit at 400. The first 151 (max_connections) are greeted,
// the rest refused with 1040, the server stays up, and once the sockets
// close a client logs in.
func TestServeSurvivesConnectionFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// startServe runs BIN serve ARGS: a script that runs lakesql under the limit.
	wrapper := filepath.Join(t.TempDir(), "lakesql-400")
	script := fmt.Sprintf("#!/bin/sh\nulimit -n 400 && exec %s \"$@\"\n", buildLakesql(t))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	const password = "flood-root-pw"
	p := startServe(t, wrapper, []string{"LAKESQL_ROOT_PASSWORD=" + password}, "--listen", "127.0.0.1:0", "--data", t.TempDir())

	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for i := 0; i < 440; i++ {
		c, err := net.DialTimeout("tcp", p.addr, 10*time.Second)
		if err != nil {
			t.Fatalf("socket %d: %v", i, err)
		}
		flood = append(flood, c)
	}
	greeted, refused := 0, 0
	for i, c := range flood {
		_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			t.Fatalf("socket %d: %v", i, err)
		}
		body := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
		if _, err := io.ReadFull(c, body); err != nil {
			t.Fatalf("socket %d: %v", i, err)
		}
		switch {
		case body[0] == 0xff && binary.LittleEndian.Uint16(body[1:3]) == 1040:
			refused++
		case body[0] == 0xff:
			t.Fatalf("socket %d: error %q", i, body)
		default:
			greeted++
		}
	}
	if greeted != 151 || refused != 440-151 {
		t.Errorf("440 sockets: %d greeted, %d refused with 1040; want 151 and 289", greeted, refused)
	}
	for _, c := range flood {
		c.Close()
	}
	flood = nil
	db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql", password, p.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The greeted sockets' slots come free as the server sees them close.
	var one int
	for {
		err = db.QueryRow("SELECT 1").Scan(&one)
		if err == nil || !strings.Contains(err.Error(), "1040") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || one != 1 {
		t.Fatalf("SELECT 1 after the flood: %d, %v\nstderr:\n%s", one, err, p.stderr)
	}
	if code, _ := p.stop(t); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, p.stderr)
	}
	if strings.Contains(p.stderr.String(), password) {
		t.Errorf("stderr shows root's password:\n%s", p.stderr)
	}
}
