package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Probes of statements that ran away (issue 15, item 6) and values built
// without a size bound (item 7): each bounded statement gets its code,
// KILL QUERY, KILL and a client gone stop a statement in any phase.

func runawayChain(op string, n int) string { return strings.TrimSuffix(strings.Repeat("1"+op, n), op) }

func runawayNested(n int) string {
	return strings.Repeat("(SELECT ", n) + "1" + strings.Repeat(")", n)
}

// runawayConn opens a connection of its own and returns it with its id.
func runawayConn(h *hostileEnv) (*sql.Conn, int64, error) {
	c, err := h.db.Conn(h.ctx)
	if err != nil {
		return nil, 0, err
	}
	h.closers = append(h.closers, func() { c.Close() })
	var id int64
	err = c.QueryRowContext(h.ctx, "SELECT CONNECTION_ID()").Scan(&id)
	return c, id, err
}

// runawayInfo returns the statement connection id runs ("" for none) and
// whether the connection is listed.
func runawayInfo(h *hostileEnv, id int64) (string, bool, error) {
	rows, err := h.query("SELECT info FROM information_schema.processlist WHERE id = ?", id)
	if err != nil || len(rows) == 0 {
		return "", false, err
	}
	if rows[0][0] == "NULL" {
		return "", true, nil
	}
	return rows[0][0], true, nil
}

// runawayWait waits until done(info, listed) holds for connection id.
func runawayWait(h *hostileEnv, id int64, what string, done func(info string, listed bool) bool) error {
	for {
		info, listed, err := runawayInfo(h, id)
		if err != nil {
			return err
		}
		if done(info, listed) {
			return nil
		}
		select {
		case <-h.ctx.Done():
			return h.wrong("connection %d: %s never happened (it runs %.40q)", id, what, info)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// runawayKilled runs q on a connection of its own, sends kill (KILL QUERY
// or KILL) once it runs, and returns q's error (or nil when it succeeded).
func runawayKilled(h *hostileEnv, q, kill string) (error, *sql.Conn, int64) {
	c, id, err := runawayConn(h)
	if err != nil {
		return h.wrong("connect: %v", err), nil, 0
	}
	done := make(chan error, 1)
	go func() {
		rows, err := c.QueryContext(h.ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		done <- err
	}()
	prefix := q[:min(len(q), 20)]
	if err := runawayWait(h, id, "the statement", func(info string, _ bool) bool { return strings.HasPrefix(info, prefix) }); err != nil {
		return err, c, id
	}
	if err := h.exec(fmt.Sprintf("%s %d", kill, id)); err != nil {
		return h.wrong("%s: %v", kill, err), c, id
	}
	select {
	case err := <-done:
		if err == nil {
			return h.wrong("%s: the statement finished as if not killed", kill), c, id
		}
		return err, c, id
	case <-h.ctx.Done():
		return h.wrong("%s did not stop %.40q", kill, q), c, id
	}
}

func init() {
	bounded := func(name string, want int, q string) hostileProbe {
		return hostileProbe{name: "runaway/" + name, want: want, run: func(h *hostileEnv) error { return h.exec(q) }}
	}
	nested := runawayNested(10)
	crossJoin := "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 5000) SELECT count(*) FROM r a, r b, r c"
	registerHostile(
		bounded("plus-100000", 1436, "SELECT "+runawayChain("+", 100_000)),
		bounded("mod-65", 1436, "SELECT "+runawayChain(" % ", 66)),
		bounded("not-200000", 1436, "SELECT "+strings.Repeat("NOT ", 200_000)+"1"),
		bounded("or-1001", 1436, "SELECT "+runawayChain(" OR ", 1002)),
		bounded("mod-chains-wide", 1436, "SELECT "+strings.TrimSuffix(strings.Repeat(runawayChain(" % ", 64)+",", 17), ",")),
		bounded("explain-deep", 1436, "EXPLAIN SELECT "+runawayChain("+", 10_000)),
		bounded("columns-1000001", 1436, "SELECT "+runawayChain(",", 1_000_001)),
		bounded("subqueries-11", 1473, "SELECT "+runawayNested(11)),
		bounded("subqueries-wide", 1473, "SELECT "+nested+","+nested+","+nested),
		bounded("routed-deep", 1436, "SELECT id FROM canary_d WHERE "+runawayChain(" OR ", 1002)),
		// 65,528 placeholders: the most lakesql prepares (more get 1390).
		hostileProbe{name: "runaway/prepared-65528", want: 1436, run: func(h *hostileEnv) error {
			st, err := h.db.PrepareContext(h.ctx, "SELECT "+strings.TrimSuffix(strings.Repeat("?+", 65_528), "+"))
			if err == nil {
				st.Close()
			}
			return err
		}},
		hostileProbe{name: "runaway/within-bounds", run: func(h *hostileEnv) error {
			for _, q := range []string{"SELECT " + runawayChain("+", 65), "SELECT " + runawayChain(" OR ", 1000), "SELECT " + nested + "," + nested} {
				if err := h.exec(q); err != nil {
					return h.wrong("%.40q… refused: %v", q, err)
				}
			}
			return nil
		}},
		hostileProbe{name: "runaway/kill-query-sleep", want: 1317, run: func(h *hostileEnv) error {
			err, _, _ := runawayKilled(h, "SELECT SLEEP(100)", "KILL QUERY")
			return err
		}},
		hostileProbe{name: "runaway/kill-query-cross-join", want: 1317, run: func(h *hostileEnv) error {
			err, _, _ := runawayKilled(h, crossJoin, "KILL QUERY")
			return err
		}},
		hostileProbe{name: "runaway/kill-query-analysis", want: 1317, run: func(h *hostileEnv) error {
			err, _, _ := runawayKilled(h, "SELECT "+nested+","+nested+", SLEEP(100)", "KILL QUERY")
			return err
		}},
		hostileProbe{name: "runaway/kill-connection", run: func(h *hostileEnv) error {
			err, c, id := runawayKilled(h, "SELECT SLEEP(100)", "KILL")
			var hw hostileWrong
			if errors.As(err, &hw) {
				return err
			}
			if c.PingContext(h.ctx) == nil {
				return h.wrong("the killed connection still answers")
			}
			return runawayWait(h, id, "the connection's end", func(_ string, listed bool) bool { return !listed })
		}},
		hostileProbe{name: "runaway/disconnect", run: func(h *hostileEnv) error {
			for i, q := range []string{"SELECT SLEEP(100)", crossJoin} {
				var raw net.Conn
				dial := fmt.Sprintf("runaway-gone-%d", i)
				mysql.RegisterDialContext(dial, func(ctx context.Context, addr string) (net.Conn, error) {
					c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
					raw = c
					return c, err
				})
				db, err := sql.Open("mysql", fmt.Sprintf("root:%s@%s(%s)/lakesql", h.password, dial, h.addr))
				if err != nil {
					return err
				}
				h.closers = append(h.closers, func() { db.Close() })
				c, err := db.Conn(h.ctx)
				if err != nil {
					return err
				}
				var id int64
				if err := c.QueryRowContext(h.ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
					return err
				}
				go c.ExecContext(context.Background(), q)
				if err := runawayWait(h, id, "the statement", func(info string, _ bool) bool { return strings.HasPrefix(info, q[:17]) }); err != nil {
					return err
				}
				raw.Close()
				if err := runawayWait(h, id, "the statement's end after a disconnect", func(_ string, listed bool) bool { return !listed }); err != nil {
					return err
				}
			}
			return nil
		}},
	)

	builtNull := func(name, call, fn string) hostileProbe {
		return hostileProbe{name: "packet/" + name, run: func(h *hostileEnv) error {
			c, _, err := runawayConn(h)
			if err != nil {
				return err
			}
			var n sql.NullInt64
			if err := c.QueryRowContext(h.ctx, "SELECT LENGTH("+call+")").Scan(&n); err != nil {
				return err
			}
			if n.Valid {
				return h.wrong("LENGTH(%s) = %d, want NULL", call, n.Int64)
			}
			var level, msg string
			var code int
			if err := c.QueryRowContext(h.ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil {
				return err
			}
			want := fmt.Sprintf("Result of %s() was larger than max_allowed_packet (67108864) - truncated", fn)
			if code != 1301 || msg != want {
				return h.wrong("warning %d %q, want 1301 %q", code, msg, want)
			}
			return nil
		}}
	}
	registerHostile(
		builtNull("repeat-1gib", "REPEAT('x', 1<<30)", "repeat"),
		builtNull("space-1gib", "SPACE(1<<30)", "space"),
		builtNull("lpad-1gib", "LPAD('x', 1<<30, 'y')", "lpad"),
		builtNull("rpad-1gib", "RPAD('x', 1<<30, 'y')", "rpad"),
		builtNull("concat-80mib", "CONCAT(REPEAT('a', 40000000), REPEAT('b', 40000000))", "concat"),
		builtNull("concat-ws-80mib", "CONCAT_WS(REPEAT('-', 1000000), "+strings.Repeat("'a',", 80)+"'a')", "concat_ws"),
		builtNull("replace-1gb", "REPLACE(REPEAT('a', 1000), 'a', REPEAT('b', 1000000))", "replace"),
		builtNull("to-base64-80mib", "TO_BASE64(REPEAT('a', 60000000))", "to_base64"),
		builtNull("hex-80mib", "HEX(REPEAT('a', 40000000))", "hex"),
		hostileProbe{name: "packet/row-too-large", want: 1153, run: func(h *hostileEnv) error {
			_, err := h.query("SELECT REPEAT('x', 40000000), REPEAT('y', 40000000)")
			return err
		}},
		hostileProbe{name: "packet/default", run: func(h *hostileEnv) error {
			rows, err := h.query("SELECT @@max_allowed_packet")
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0][0] != "67108864" {
				return h.wrong("max_allowed_packet = %v, want 67108864", rows)
			}
			return nil
		}},
	)
}
