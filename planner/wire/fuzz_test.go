package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// FuzzCommandPackets sends one command packet after a real login, then a
// query that marks the end: the server must answer the marker, or end
// the connection, without a panic (which vitess catches, dropping the
// connection) and without hanging.
func FuzzCommandPackets(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{0x0e},
		append([]byte{0x03}, "SELECT 1"...),
		append([]byte{0x16}, "SELECT ?"...),
		binary.LittleEndian.AppendUint32([]byte{0x1a}, 1),
		binary.LittleEndian.AppendUint32([]byte{0x19}, 1),
		append(binary.LittleEndian.AppendUint32([]byte{0x17}, 1), 0, 1, 0, 0, 0, 0, 1, 0xfd, 0, 1, 'x'),
		append(binary.LittleEndian.AppendUint32([]byte{0x18}, 1), 0, 0, 'x'),
		append(binary.LittleEndian.AppendUint32([]byte{0x1c}, 1), 1, 0, 0, 0),
		binlogDumpGTID(),
		registerSlave(),
		{0x12},
		append([]byte{0x04}, "t\x00"...),
		append([]byte{0x02}, "lakesql"...),
		{0x1b, 0, 0},
		{0x1f},
		{0x11, 'r', 'o', 'o', 't', 0},
		{0x0a}, {0x0d}, {0x01},
	} {
		f.Add(seed)
	}
	dir, err := os.MkdirTemp("", "lakesql-fuzz-")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	// One server for every input of this process.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Listener: l, DataDir: dir, RootPassword: testPassword})
	if err != nil {
		f.Fatal(err)
	}
	go srv.Serve()
	f.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	addr := srv.Addr().String()
	watch := watchPanics(f)
	f.Fuzz(func(t *testing.T, cmd []byte) {
		if len(cmd) > 1<<16 {
			return
		}
		rc := rawLogin(t, addr, testPassword)
		_ = rc.c.SetDeadline(time.Now().Add(20 * time.Second))
		rc.write(0, cmd)
		const marker = "lakesql-fuzz-marker"
		rc.write(0, append([]byte{0x03}, "SELECT '"+marker+"'"...))
		for {
			_, p, err := rc.read()
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
				// The server ended the connection; a reset when it closed
				// with the marker still unread (after COM_BINLOG_DUMP).
				break
			}
			if err != nil {
				t.Fatalf("no answer and no end: %v", err)
			}
			if bytes.Contains(p, []byte(marker)) && p[0] != 0x03 {
				break
			}
		}
		rc.c.Close()
		if p := watch.take(); len(p) > 0 {
			t.Fatalf("vitess caught a panic on %x: %v", cmd, p)
		}
	})
}
