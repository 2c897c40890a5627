package wire

// A minimal MySQL client speaking the protocol by hand, for tests that
// must see the packets themselves: the greeting's status flags, the
// status of every OK and EOF, and the answer to packets no real client
// sends.

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

const (
	clientLongPassword    = 0x1
	clientLongFlag        = 0x4
	clientConnectWithDB   = 0x8
	clientProtocol41      = 0x200
	clientTransactions    = 0x2000
	clientSecureConn      = 0x8000
	clientPluginAuth      = 0x80000
	statusInTrans         = 0x0001
	statusAutocommit      = 0x0002
	rawClientCapabilities = clientLongPassword | clientLongFlag | clientConnectWithDB | clientProtocol41 |
		clientTransactions | clientSecureConn | clientPluginAuth
)

// rawConn is one logged-in connection of the hand-made client.
type rawConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
	// greeting is the status flags of the server's handshake packet,
	// login those of the OK packet that ends the login.
	greeting, login uint16
}

// rawLogin connects to addr and logs in as root with mysql_native_password.
func rawLogin(t *testing.T, addr, password string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	rc := &rawConn{t: t, c: c, r: bufio.NewReader(c)}
	_, hs, err := rc.read()
	if err != nil {
		t.Fatalf("greeting: %v", err)
	}
	salt, status, err := parseGreeting(hs)
	if err != nil {
		t.Fatalf("greeting: %v", err)
	}
	rc.greeting = status

	var resp []byte
	resp = binary.LittleEndian.AppendUint32(resp, rawClientCapabilities)
	resp = binary.LittleEndian.AppendUint32(resp, 1<<24)
	resp = append(resp, 45) // utf8mb4_general_ci
	resp = append(resp, make([]byte, 23)...)
	resp = append(resp, "root"...)
	resp = append(resp, 0)
	scr := scramble(salt, password)
	resp = append(resp, byte(len(scr)))
	resp = append(resp, scr...)
	resp = append(resp, "lakesql"...)
	resp = append(resp, 0)
	resp = append(resp, "mysql_native_password"...)
	resp = append(resp, 0)
	rc.write(1, resp)

	seq, p, err := rc.read()
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if len(p) > 0 && p[0] == 0xfe { // auth switch: plugin name, then the new salt
		i := bytes.IndexByte(p[1:], 0)
		if i < 0 {
			t.Fatalf("malformed auth switch %x", p)
		}
		salt = bytes.TrimRight(p[2+i:], "\x00")
		rc.write(seq+1, scramble(salt, password))
		if _, p, err = rc.read(); err != nil {
			t.Fatalf("login: %v", err)
		}
	}
	ok, err := parseOK(p)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	rc.login = ok.status
	return rc
}

func parseGreeting(p []byte) (salt []byte, status uint16, err error) {
	if len(p) < 1 || p[0] != 10 {
		return nil, 0, fmt.Errorf("not a HandshakeV10 packet: %x", p)
	}
	i := bytes.IndexByte(p[1:], 0)
	if i < 0 {
		return nil, 0, fmt.Errorf("no server version: %x", p)
	}
	pos := 1 + i + 1 + 4 // version, NUL, connection id
	if len(p) < pos+8+1+2+1+2+2+1+10+12 {
		return nil, 0, fmt.Errorf("short greeting: %x", p)
	}
	salt = append(salt, p[pos:pos+8]...)
	pos += 8 + 1 + 2 + 1 // salt part 1, filler, capabilities (low), character set
	status = binary.LittleEndian.Uint16(p[pos:])
	pos += 2 + 2 + 1 + 10 // status, capabilities (high), salt length, reserved
	rest := p[pos:]
	if j := bytes.IndexByte(rest, 0); j >= 0 {
		rest = rest[:j]
	}
	return append(salt, rest...), status, nil
}

// scramble is mysql_native_password's answer: SHA1(pw) XOR SHA1(salt, SHA1(SHA1(pw))).
func scramble(salt []byte, password string) []byte {
	if password == "" {
		return nil
	}
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	h := sha1.New()
	h.Write(salt)
	h.Write(h2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= h1[i]
	}
	return out
}

func (rc *rawConn) write(seq byte, payload []byte) {
	rc.t.Helper()
	hdr := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}
	if _, err := rc.c.Write(append(hdr, payload...)); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

func (rc *rawConn) read() (seq byte, payload []byte, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(rc.r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	payload = make([]byte, n)
	if _, err := io.ReadFull(rc.r, payload); err != nil {
		return 0, nil, err
	}
	return hdr[3], payload, nil
}

// command sends one command packet (sequence 0) and returns the first
// packet of the answer.
func (rc *rawConn) command(payload []byte) ([]byte, error) {
	rc.t.Helper()
	rc.write(0, payload)
	_, p, err := rc.read()
	return p, err
}

type okPacket struct {
	affected, insertID uint64
	status, warnings   uint16
}

func parseOK(p []byte) (okPacket, error) {
	if len(p) == 0 || p[0] != 0x00 {
		return okPacket{}, fmt.Errorf("not an OK packet: %s", describe(p))
	}
	var ok okPacket
	pos := 1
	var n int
	if ok.affected, n = lenenc(p[pos:]); n == 0 {
		return ok, fmt.Errorf("malformed OK %x", p)
	}
	pos += n
	if ok.insertID, n = lenenc(p[pos:]); n == 0 {
		return ok, fmt.Errorf("malformed OK %x", p)
	}
	pos += n
	if len(p) < pos+4 {
		return ok, fmt.Errorf("malformed OK %x", p)
	}
	ok.status = binary.LittleEndian.Uint16(p[pos:])
	ok.warnings = binary.LittleEndian.Uint16(p[pos+2:])
	return ok, nil
}

// rawError is a parsed ERR packet.
type rawError struct {
	code  uint16
	state string
	msg   string
}

func parseErr(p []byte) (rawError, bool) {
	if len(p) < 3 || p[0] != 0xff {
		return rawError{}, false
	}
	e := rawError{code: binary.LittleEndian.Uint16(p[1:])}
	rest := p[3:]
	if len(rest) >= 6 && rest[0] == '#' {
		e.state, rest = string(rest[1:6]), rest[6:]
	}
	e.msg = string(rest)
	return e, true
}

func describe(p []byte) string {
	if e, ok := parseErr(p); ok {
		return fmt.Sprintf("error %d (%s): %s", e.code, e.state, e.msg)
	}
	if len(p) > 64 {
		return fmt.Sprintf("%x...", p[:64])
	}
	return fmt.Sprintf("%x", p)
}

func lenenc(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch {
	case b[0] < 0xfb:
		return uint64(b[0]), 1
	case b[0] == 0xfc && len(b) >= 3:
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3
	case b[0] == 0xfd && len(b) >= 4:
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4
	case b[0] == 0xfe && len(b) >= 9:
		return binary.LittleEndian.Uint64(b[1:]), 9
	}
	return 0, 0
}

// rawResult is what a COM_QUERY answered: an OK's status, or a result
// set's rows (text protocol, NULL as nil) and the status of its two EOFs.
type rawResult struct {
	ok        *okPacket
	rows      [][]*string
	eofStatus []uint16
}

// query runs sql with COM_QUERY and reads the whole answer; an ERR
// packet is returned as the error.
func (rc *rawConn) query(sql string) (rawResult, error) {
	rc.t.Helper()
	p, err := rc.command(append([]byte{0x03}, sql...))
	if err != nil {
		return rawResult{}, err
	}
	if e, ok := parseErr(p); ok {
		return rawResult{}, fmt.Errorf("error %d (%s): %s", e.code, e.state, e.msg)
	}
	if p[0] == 0x00 {
		ok, err := parseOK(p)
		return rawResult{ok: &ok}, err
	}
	cols, _ := lenenc(p)
	for i := uint64(0); i < cols; i++ {
		if _, _, err := rc.read(); err != nil {
			return rawResult{}, err
		}
	}
	var res rawResult
	for inRows := false; ; {
		_, p, err := rc.read()
		if err != nil {
			return res, err
		}
		if e, ok := parseErr(p); ok {
			return res, fmt.Errorf("error %d (%s): %s", e.code, e.state, e.msg)
		}
		if p[0] == 0xfe && len(p) < 9 {
			res.eofStatus = append(res.eofStatus, binary.LittleEndian.Uint16(p[3:]))
			if inRows {
				return res, nil
			}
			inRows = true
			continue
		}
		var row []*string
		for pos := 0; pos < len(p); {
			if p[pos] == 0xfb {
				row, pos = append(row, nil), pos+1
				continue
			}
			n, k := lenenc(p[pos:])
			s := string(p[pos+k : pos+k+int(n)])
			row, pos = append(row, &s), pos+k+int(n)
		}
		res.rows = append(res.rows, row)
	}
}

// status is the status flags that ended a result: the OK's, or the last EOF's.
func (r rawResult) status() uint16 {
	if r.ok != nil {
		return r.ok.status
	}
	if len(r.eofStatus) == 0 {
		return 0
	}
	return r.eofStatus[len(r.eofStatus)-1]
}
