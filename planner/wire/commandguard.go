package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/netutil"
)

// commandGuard answers the command packets that vitess cannot: vitess
// panics on an empty command packet, on COM_STMT_RESET of a statement id
// it does not hold, and on a short COM_BINLOG_DUMP_GTID or
// COM_REGISTER_SLAVE (it catches the panic and drops the connection),
// and COM_STMT_SEND_LONG_DATA for an unknown statement drops it too.
// The guard sits under vitess's reader and reads the client's packets
// before vitess does; the command packets among them (sequence 0, while
// no statement runs: a statement's own packets, such as LOAD DATA LOCAL's
// file, are passed on whatever they hold) that would crash the
// connection are answered here with MySQL's error and never reach vitess.
// So is a COM_STMT_PREPARE whose text does not parse: vitess parses it
// itself and sends any error as 1105 (see prepareSyntax).
//
// vitess reads the login's first packet directly from Conn and, over TLS,
// everything after it from the TLS connection; guardConnection points
// vitess's Conn past the guard, so a TLS connection does not pass through
// it (and go-mysql-server still sees the TCP connection it watches for a
// client that goes away). Over TLS the handler's BinlogReplicaHandler
// methods still refuse replication; the other packets drop the
// connection as before.
type commandGuard struct {
	net.Conn
	// idle reports that no statement runs; params the number of
	// parameters of a prepared statement vitess holds; syntax the error
	// of a text to prepare that does not parse. All are set by
	// guardConnection before the first command, and called from the
	// connection's goroutine, the one vitess reads with.
	idle   func() bool
	params func(id uint32) (n uint16, known bool)
	syntax func(query string) *mysql.SQLError

	in      []byte // read from Conn, not yet looked at
	out     []byte // looked at, for vitess
	body    int    // bytes of the packet being passed on still to come
	cont    bool   // that packet is 0xffffff bytes long: the next one continues it
	readErr error  // Conn's read error, returned once out is drained
	buf     []byte
}

// MySQL's codes vitess has no name for.
const (
	erUnknownStmtHandler = 1243 // ER_UNKNOWN_STMT_HANDLER
	erPSManyParam        = 1390 // ER_PS_MANY_PARAM
)

// guardListener puts a commandGuard on every connection.
type guardListener struct{ net.Listener }

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &commandGuard{Conn: c}, nil
}

// guardConnection readies the guard under c (vitess's connection, before
// its handshake): it points c.Conn at the connection under the guard and
// gives the guard its hooks. Reading from c.Conn then skips the guard
// (the login's first packet, and TLS), the buffered reader vitess reads
// commands with does not.
func guardConnection(c *mysql.Conn, idle func() bool, syntax func(query string) *mysql.SQLError) {
	var timeouts *netutil.ConnWithTimeouts
	nc := c.Conn
	if x, ok := nc.(netutil.ConnWithTimeouts); ok {
		timeouts, nc = &x, x.Conn
	}
	g, ok := nc.(*commandGuard)
	if !ok {
		return
	}
	g.idle, g.syntax = idle, syntax
	g.params = func(id uint32) (uint16, bool) {
		p, ok := c.PrepareData[id]
		if !ok {
			return 0, false
		}
		return p.ParamsCount, true
	}
	if timeouts != nil {
		timeouts.Conn = g.Conn
		c.Conn = *timeouts
	} else {
		c.Conn = g.Conn
	}
}

func (g *commandGuard) Read(p []byte) (int, error) {
	for {
		if len(g.out) > 0 {
			n := copy(p, g.out)
			g.out = g.out[n:]
			return n, nil
		}
		if len(g.in) > 0 {
			if err := g.scan(); err != nil {
				g.in, g.readErr = nil, err
			}
			if len(g.out) > 0 {
				continue
			}
		}
		if g.readErr != nil {
			// A packet cut short by the end is dropped: vitess could
			// not read it either.
			g.in = nil
			return 0, g.readErr
		}
		if len(g.in) == 0 && g.body >= len(p) {
			// The middle of a long packet: nothing to look at.
			n, err := g.Conn.Read(p)
			g.body -= n
			return n, err
		}
		if len(g.buf) < 4096 {
			g.buf = make([]byte, 4096)
		}
		n, err := g.Conn.Read(g.buf)
		g.in = append(g.in, g.buf[:n]...)
		if err != nil {
			g.readErr = err // once what was read is passed on
		}
	}
}

// scan moves whole packet headers and bodies from in to out, answering
// the command packets vitess cannot take. It returns an error when the
// connection must end (after a binlog dump request, as MySQL's does).
func (g *commandGuard) scan() error {
	for len(g.in) > 0 {
		if g.body > 0 {
			k := min(g.body, len(g.in))
			g.out = append(g.out, g.in[:k]...)
			g.in, g.body = g.in[k:], g.body-k
			continue
		}
		if len(g.in) < 4 {
			return nil
		}
		n := int(g.in[0]) | int(g.in[1])<<8 | int(g.in[2])<<16
		seq, cont := g.in[3], g.cont
		if seq == 0 && !cont && n < 0xffffff && g.idle != nil && g.idle() {
			if len(g.in) < 4+n {
				return nil // the whole command first
			}
			if n > 0 && g.in[4] == mysql.ComPrepare && len(g.out) > 0 {
				// Parsed once the commands before it have run: one
				// may set sql_mode (ANSI_QUOTES), which the parse reads.
				return nil
			}
			if answer, v := g.refuse(g.in[4 : 4+n]); v != pass {
				if len(g.out) > 0 {
					// Answered once vitess has taken (and answered) the
					// commands before it, which keeps answers in order.
					return nil
				}
				if answer != nil {
					if _, err := g.Conn.Write(answer); err != nil {
						return err
					}
				}
				g.in = g.in[4+n:]
				if v == end {
					return io.EOF
				}
				continue
			}
		}
		g.cont = n == 0xffffff
		g.out = append(g.out, g.in[:4]...)
		g.in, g.body = g.in[4:], n
	}
	return nil
}

// verdict is what becomes of a command packet.
type verdict int

const (
	pass   verdict = iota // to vitess
	answer                // answered here (or dropped, when it has no answer)
	end                   // answered here, then the connection ends
)

// refuse decides on a command packet vitess cannot take, and returns its
// answer: an error packet, or nil for a command that has none.
func (g *commandGuard) refuse(cmd []byte) ([]byte, verdict) {
	if len(cmd) == 0 {
		// MySQL reads an empty command as COM_SLEEP, which a client may
		// not send.
		return errPacket(mysql.ERUnknownComError, mysql.SSUnknownComError, "Unknown command"), answer
	}
	switch cmd[0] {
	case mysql.ComStmtReset:
		if len(cmd) < 5 {
			return errPacket(mysql.ERUnknownComError, mysql.SSUnknownComError, "Malformed COM_STMT_RESET"), answer
		}
		if id := binary.LittleEndian.Uint32(cmd[1:]); !g.known(id) {
			return errPacket(erUnknownStmtHandler, mysql.SSUnknownSQLState,
				fmt.Sprintf("Unknown prepared statement handler (%d) given to mysqld_stmt_reset", id)), answer
		}
	case mysql.ComStmtSendLongData:
		// No answer is sent to it; MySQL reports a bad one at the next
		// COM_STMT_EXECUTE, vitess drops the connection. An unknown
		// statement's data, or a parameter's it does not have, is
		// dropped: executing it fails anyway, or lacks that parameter.
		if len(cmd) < 7 {
			return nil, answer
		}
		n, ok := g.params(binary.LittleEndian.Uint32(cmd[1:]))
		if !ok || binary.LittleEndian.Uint16(cmd[5:]) >= n {
			return nil, answer
		}
	case mysql.ComBinlogDump, mysql.ComBinlogDumpGTID:
		// MySQL ends the connection after a binlog dump, whatever came of it.
		return errReplication(cmd[0]), end
	case mysql.ComRegisterReplica:
		return errReplication(cmd[0]), answer
	case mysql.ComPrepare:
		if g.syntax != nil {
			if e := g.syntax(string(cmd[1:])); e != nil {
				return errPacket(uint16(e.Num), e.State, e.Message), answer
			}
		}
	}
	return nil, pass
}

func (g *commandGuard) known(id uint32) bool {
	_, ok := g.params(id)
	return ok
}

// errReplication is the error packet refusing a replication command:
// lakesql has no binary log.
func errReplication(cmd byte) []byte {
	return errPacket(mysql.ERNotSupportedYet, mysql.SSClientError, replicationMessage(cmd))
}

func replicationMessage(cmd byte) string {
	name := map[byte]string{mysql.ComBinlogDump: "COM_BINLOG_DUMP", mysql.ComBinlogDumpGTID: "COM_BINLOG_DUMP_GTID",
		mysql.ComRegisterReplica: "COM_REGISTER_SLAVE"}[cmd]
	return "lakesql has no binary log and does not support replication (" + name + ")"
}

// errPacket is an ERR packet answering a command (sequence 1).
func errPacket(code uint16, state, msg string) []byte {
	payload := []byte{0xff}
	payload = binary.LittleEndian.AppendUint16(payload, code)
	payload = append(payload, '#')
	payload = append(payload, state...)
	payload = append(payload, msg...)
	return append([]byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), 1}, payload...)
}
