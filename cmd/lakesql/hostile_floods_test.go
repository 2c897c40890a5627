package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Probes of item 5: floods of connections, logins that never end, and
// failed logins. Each ends with the server answering a fresh client.

func init() {
	registerHostile(
		hostileProbe{name: "floods/idle-sockets-440", want: 1040, timeout: 2 * time.Minute, run: floodsIdleSockets},
		hostileProbe{name: "floods/fd-limit-400", want: 1040, timeout: 2 * time.Minute, run: floodsFDLimit},
		hostileProbe{name: "floods/silent-handshakes", want: 1040, timeout: 2 * time.Minute, run: floodsSilentHandshakes},
		hostileProbe{name: "floods/failed-logins-200", want: 1129, timeout: 2 * time.Minute, run: floodsFailedLogins},
	)
}

// floodsFirstPacket opens a socket from local (nil: any) and reads the
// server's first packet: its greeting, or the error it sends instead.
func floodsFirstPacket(ctx context.Context, addr string, local net.IP) (net.Conn, []byte, error) {
	d := net.Dialer{Timeout: 20 * time.Second}
	if local != nil {
		d.LocalAddr = &net.TCPAddr{IP: local}
	}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	dl, _ := ctx.Deadline()
	_ = c.SetReadDeadline(dl)
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("first packet: %w", err)
	}
	p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(c, p); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("first packet: %w", err)
	}
	return c, p, nil
}

// floodsErrCode is an ERR packet's code, 0 for any other packet.
func floodsErrCode(p []byte) int {
	if len(p) < 3 || p[0] != 0xff {
		return 0
	}
	return int(binary.LittleEndian.Uint16(p[1:3]))
}

// floodsLogin logs in once (no pool, no retry) from local (nil: any) and
// pings; it returns the server's error.
func floodsLogin(ctx context.Context, addr string, local net.IP, password string) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "root", password, "tcp", addr, "lakesql"
	cfg.Timeout = 20 * time.Second
	if local != nil {
		cfg.DialFunc = func(ctx context.Context, network, a string) (net.Conn, error) {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: local}}
			return d.DialContext(ctx, network, a)
		}
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	c, err := conn.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.(driver.Pinger).Ping(ctx)
}

// floodsAnswers waits until a fresh client logs in and SELECT 1 answers
// (the slots of closed sockets come free as the server sees them close:
// 1040 meanwhile).
func floodsAnswers(h *hostileEnv, addr string) error {
	db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql?timeout=20s", h.password, addr))
	if err != nil {
		return err
	}
	defer db.Close()
	for {
		var one int
		err := db.QueryRowContext(h.ctx, "SELECT 1").Scan(&one)
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1040 && h.ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil || one != 1 {
			return h.wrong("SELECT 1 from a fresh client after the flood: %d, %v", one, err)
		}
		return nil
	}
}

// floodsIdle opens n idle sockets, counts greetings and 1040s, tries a
// real client while they are open (its error is returned), closes them
// and checks a fresh client gets in.
func floodsIdle(h *hostileEnv, addr string, n, wantGreeted int) error {
	var socks []net.Conn
	defer func() {
		for _, c := range socks {
			c.Close()
		}
	}()
	greeted, refused := 0, 0
	for i := 0; i < n; i++ {
		c, p, err := floodsFirstPacket(h.ctx, addr, nil)
		if err != nil {
			return h.wrong("socket %d of %d: %v (the server must greet or refuse it)", i+1, n, err)
		}
		socks = append(socks, c)
		switch floodsErrCode(p) {
		case 0:
			greeted++
		case 1040:
			refused++
		default:
			return h.wrong("socket %d: error %q", i+1, p)
		}
	}
	if wantGreeted >= 0 && greeted != wantGreeted {
		return h.wrong("%d sockets: %d greeted, %d refused with 1040; want %d greeted", n, greeted, refused, wantGreeted)
	}
	if refused == 0 {
		return h.wrong("%d sockets: all greeted, none refused (no connection limit)", n)
	}
	refusal := floodsLogin(h.ctx, addr, nil, h.password)
	for _, c := range socks {
		c.Close()
	}
	socks = nil
	if err := floodsAnswers(h, addr); err != nil {
		return err
	}
	return refusal
}

// floodsIdleSockets: 440 idle sockets against the suite's server (default
// settings). Its pools hold a few connections, so fewer than 151 of the
// sockets are greeted.
func floodsIdleSockets(h *hostileEnv) error {
	return floodsIdle(h, h.addr, 440, -1)
}

// floodsFDLimit is the report's flood: 440 idle sockets against default
// settings with the open-file limit at 400, which made lakesql serve exit.
func floodsFDLimit(h *hostileEnv) error {
	p := h.serve(nil, "--listen", "127.0.0.1:0", "--data", h.t.TempDir(), "--open-files-limit", "400")
	return floodsIdle(h, p.addr, 440, 151)
}

// floodsSilentHandshakes: 60 sockets that never answer the handshake
// fill --max-connections 60; after --connect-timeout they are dropped and
// a client gets in.
func floodsSilentHandshakes(h *hostileEnv) error {
	p := h.serve(nil, "--listen", "127.0.0.1:0", "--data", h.t.TempDir(),
		"--max-connections", "60", "--connect-timeout", "2s", "--read-timeout", "1h")
	var socks []net.Conn
	defer func() {
		for _, c := range socks {
			c.Close()
		}
	}()
	for i := 0; i < 60; i++ {
		c, pkt, err := floodsFirstPacket(h.ctx, p.addr, nil)
		if err != nil {
			return h.wrong("socket %d: %v", i+1, err)
		}
		socks = append(socks, c)
		if code := floodsErrCode(pkt); code != 0 {
			return h.wrong("socket %d of 60: refused with %d", i+1, code)
		}
	}
	refusal := floodsLogin(h.ctx, p.addr, nil, h.password)
	if hostileCode(refusal) != 1040 {
		return h.wrong("a client with 60 silent sockets open: %v, want 1040", refusal)
	}
	for i, c := range socks {
		// The server closes each one (the read ends) long before the
		// hour of --read-timeout; the probe's deadline guards the read.
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return h.wrong("silent socket %d: read %d bytes, %v; want the server to close it", i+1, n, err)
		}
	}
	if err := floodsLogin(h.ctx, p.addr, nil, h.password); err != nil {
		return h.wrong("after the silent sockets were dropped: %v", err)
	}
	rows, err := hostileRows(h.ctx, floodsDB(h, p.addr), "SELECT @@connect_timeout, @@max_connections")
	if err != nil || len(rows) != 1 || strings.Join(rows[0], " ") != "2 60" {
		return h.wrong("@@connect_timeout, @@max_connections: %v, %v; want 2 60", rows, err)
	}
	return refusal
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func floodsDB(h *hostileEnv, addr string) *sql.DB {
	db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql?timeout=20s", h.password, addr))
	if err != nil {
		h.t.Fatal(err)
	}
	h.closers = append(h.closers, func() { db.Close() })
	return db
}

// floodsFailedLogins: 200 wrong passwords from 127.0.0.2 against the
// suite's server. The first 100 (max_connect_errors) are denied (1045),
// then the address is blocked (1129), the right password too; 127.0.0.1
// is not blocked, and FLUSH HOSTS unblocks 127.0.0.2.
func floodsFailedLogins(h *hostileEnv) error {
	attacker := net.IPv4(127, 0, 0, 2)
	h.secret("wrong-pw-floods")
	denied, blocked := 0, 0
	var last error
	for i := 0; i < 200; i++ {
		err := floodsLogin(h.ctx, h.addr, attacker, "wrong-pw-floods")
		switch hostileCode(err) {
		case 1045:
			denied++
		case 1129:
			blocked++
			last = err
		default:
			return h.wrong("failed login %d from 127.0.0.2: %v, want 1045 or 1129", i+1, err)
		}
	}
	if denied != 100 || blocked != 100 {
		return h.wrong("200 failed logins: %d denied (1045), %d blocked (1129); want 100 and 100", denied, blocked)
	}
	if err := floodsLogin(h.ctx, h.addr, attacker, h.password); hostileCode(err) != 1129 {
		return h.wrong("the right password from the blocked 127.0.0.2: %v, want 1129", err)
	}
	if err := floodsLogin(h.ctx, h.addr, net.IPv4(127, 0, 0, 1), h.password); err != nil {
		return h.wrong("127.0.0.1 while 127.0.0.2 is blocked: %v", err)
	}
	if err := h.exec("FLUSH HOSTS"); err != nil {
		return h.wrong("FLUSH HOSTS: %v", err)
	}
	if err := floodsLogin(h.ctx, h.addr, attacker, h.password); err != nil {
		return h.wrong("127.0.0.2 after FLUSH HOSTS: %v", err)
	}
	return last
}
