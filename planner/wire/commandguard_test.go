package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	vtlog "github.com/dolthub/vitess/go/vt/log"
)

// panicWatch records the panics vitess catches on its connections (it
// logs them with log.Errorf and drops the connection).
type panicWatch struct {
	mu     sync.Mutex
	caught []string
}

func watchPanics(t testing.TB) *panicWatch {
	w := &panicWatch{}
	old := vtlog.Errorf
	vtlog.Errorf = func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); strings.Contains(msg, "caught panic") {
			w.mu.Lock()
			w.caught = append(w.caught, msg)
			w.mu.Unlock()
		}
		old(format, args...)
	}
	t.Cleanup(func() { vtlog.Errorf = old })
	return w
}

func (w *panicWatch) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.caught
	w.caught = nil
	return out
}

// selectOne checks that the connection still answers SELECT 1.
func (rc *rawConn) selectOne() error {
	r, err := rc.query("SELECT 1")
	if err != nil {
		return err
	}
	if len(r.rows) != 1 || len(r.rows[0]) != 1 || r.rows[0][0] == nil || *r.rows[0][0] != "1" {
		return fmt.Errorf("SELECT 1 answered %v", r.rows)
	}
	return nil
}

func binlogDumpGTID() []byte {
	p := []byte{0x1e, 0, 0}                    // flags
	p = binary.LittleEndian.AppendUint32(p, 7) // server id
	p = binary.LittleEndian.AppendUint32(p, 0) // file name length
	p = binary.LittleEndian.AppendUint64(p, 4) // position
	return p
}

func registerSlave() []byte {
	p := binary.LittleEndian.AppendUint32([]byte{0x15}, 7) // server id
	p = append(p, 0, 0, 0)                                 // host, user, password: empty
	p = binary.LittleEndian.AppendUint16(p, 3307)
	p = binary.LittleEndian.AppendUint32(p, 0) // rank
	return binary.LittleEndian.AppendUint32(p, 1)
}

// Packets no well-behaved client sends get MySQL's error packet, and the
// connection goes on where MySQL's does; none reaches the code in vitess
// that panics on it.
func TestHostileCommandPackets(t *testing.T) {
	watch := watchPanics(t)
	ts := startServer(t, t.TempDir(), testPassword)
	for _, tc := range []struct {
		name   string
		packet []byte
		code   uint16 // 0: no answer
		closes bool   // MySQL ends the connection after it
	}{
		{"empty packet", []byte{}, 1047, false},
		{"COM_STMT_RESET of an unknown statement", binary.LittleEndian.AppendUint32([]byte{0x1a}, 999), 1243, false},
		{"short COM_STMT_RESET", []byte{0x1a, 1}, 1047, false},
		{"COM_BINLOG_DUMP_GTID", binlogDumpGTID(), 1235, true},
		{"short COM_BINLOG_DUMP_GTID", []byte{0x1e}, 1235, true},
		{"COM_BINLOG_DUMP", []byte{0x12, 4, 0, 0, 0}, 1235, true},
		{"COM_REGISTER_SLAVE", registerSlave(), 1235, false},
		{"short COM_REGISTER_SLAVE", []byte{0x15}, 1235, false},
		{"COM_STMT_SEND_LONG_DATA of an unknown statement", append(binary.LittleEndian.AppendUint32([]byte{0x18}, 999), 0, 0, 'x'), 0, false},
		{"short COM_STMT_SEND_LONG_DATA", []byte{0x18, 1}, 0, false},
		{"COM_STMT_SEND_LONG_DATA of a parameter the statement lacks", append(binary.LittleEndian.AppendUint32([]byte{0x18}, 1), 5, 0, 'x'), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := rawLogin(t, ts.addr, testPassword)
			if _, err := rc.stmtPrepare("SELECT ?"); err != nil { // statement 1, one parameter
				t.Fatal(err)
			}
			rc.write(0, tc.packet)
			if tc.code != 0 {
				_, p, err := rc.read()
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				if e, ok := parseErr(p); !ok || e.code != tc.code || len(e.state) != 5 {
					t.Fatalf("answer %s, want error %d", describe(p), tc.code)
				}
			}
			if tc.closes {
				if _, _, err := rc.read(); !errors.Is(err, io.EOF) {
					t.Errorf("the connection goes on (%v); MySQL ends it", err)
				}
				rc = rawLogin(t, ts.addr, testPassword)
			}
			if err := rc.selectOne(); err != nil {
				t.Errorf("after it: %v", err)
			}
			if p := watch.take(); len(p) > 0 {
				t.Errorf("vitess caught a panic: %v", p)
			}
		})
	}
}

// A statement with more placeholders than vitess can take is refused when
// it is prepared (1390), and executing its id afterwards is an error, not
// a panic.
func TestTooManyPlaceholders(t *testing.T) {
	watch := watchPanics(t)
	ts := startServer(t, t.TempDir(), testPassword)
	rc := rawLogin(t, ts.addr, testPassword)
	const n = 65535
	_, err := rc.stmtPrepare("SELECT " + strings.TrimSuffix(strings.Repeat("?,", n), ","))
	if err == nil || !strings.Contains(err.Error(), "error 1390 ") {
		t.Fatalf("prepare with %d placeholders: %v, want error 1390", n, err)
	}
	exec := binary.LittleEndian.AppendUint32([]byte{0x17}, 1) // the id the refused statement had
	exec = append(exec, 0, 1, 0, 0, 0)
	exec = append(exec, make([]byte, (n+7)/8)...)
	exec = append(exec, 1)
	for i := 0; i < n; i++ {
		exec = append(exec, 0x08, 0)
	}
	for i := 0; i < n; i++ {
		exec = binary.LittleEndian.AppendUint64(exec, uint64(i))
	}
	p, err := rc.command(exec)
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	if _, ok := parseErr(p); !ok {
		t.Errorf("execute of the refused statement: %s, want an error", describe(p))
	}
	if err := rc.selectOne(); err != nil {
		t.Errorf("after it: %v", err)
	}
	if p := watch.take(); len(p) > 0 {
		t.Errorf("vitess caught a panic: %v", p)
	}
}

// Commands sent together (pipelined) are answered in the order sent, the
// guard's answers among them.
func TestHostilePacketsPipelinedInOrder(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	rc := rawLogin(t, ts.addr, testPassword)
	var batch []byte
	for _, p := range [][]byte{append([]byte{0x03}, "SELECT 1"...), {}, append([]byte{0x03}, "SELECT 2"...), {0x1e}} {
		batch = append(batch, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), 0)
		batch = append(batch, p...)
	}
	if _, err := rc.c.Write(batch); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		_, p, err := rc.read()
		if err != nil {
			break
		}
		switch {
		case p[0] == 0xff:
			e, _ := parseErr(p)
			got = append(got, fmt.Sprint(e.code))
		case len(p) == 2 && p[0] == 1: // the value of a one-column row
			got = append(got, string(p[1:]))
		}
	}
	if want := "1 1047 2 1235"; strings.Join(got, " ") != want {
		t.Errorf("answers %q, want %q", strings.Join(got, " "), want)
	}
}
