package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lakesql/lakesql/internal/deltatest"
	"github.com/lakesql/lakesql/internal/stalltest"
)

// Probes of items 9 (secrets shown to other sessions), 11 (writes in
// read-only transactions and servers) and 13 (a COMMIT that lands on some
// sinks only).

// sessionsWaitInfo polls SHOW PROCESSLIST and information_schema.PROCESSLIST
// on viewer until a statement containing marker runs, and returns every
// Info it saw for it; done closing first means the statement ended unseen.
func sessionsWaitInfo(h *hostileEnv, viewer *sql.DB, marker string, done <-chan error) ([]string, error) {
	var seen []string
	for _, q := range []string{"SHOW PROCESSLIST", "SELECT id, user, host, db, command, time, state, info FROM information_schema.PROCESSLIST"} {
		found := false
		for !found {
			select {
			case err := <-done:
				return seen, h.wrong("the statement ended (%v) before %s showed it", err, q)
			case <-h.ctx.Done():
				return seen, h.wrong("%s never showed the statement", q)
			default:
			}
			rows, err := hostileRows(h.ctx, viewer, q)
			if err != nil {
				return seen, err
			}
			for _, r := range rows {
				if strings.Contains(r[7], marker) && !strings.Contains(r[7], "PROCESSLIST") {
					seen, found = append(seen, r[7]), true
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return seen, nil
}

// sessionsSilentListener accepts connections and never answers them, so a
// statement that reaches it waits; stop hangs up, which ends the wait.
func sessionsSilentListener(h *hostileEnv) (addr string, stop func()) {
	s, err := stalltest.NewSilent()
	if err != nil {
		h.t.Fatal(err)
	}
	h.closers = append(h.closers, s.Close)
	return s.Addr(), s.Close
}

// sessionsReadOnly runs q on a connection of its own after setup, and
// returns q's error.
func sessionsReadOnly(h *hostileEnv, setup, q string) error {
	c, err := h.db.Conn(h.ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(h.ctx, setup); err != nil {
		return h.wrong("%s: %v", setup, err)
	}
	_, err = c.ExecContext(h.ctx, q)
	c.ExecContext(h.ctx, "ROLLBACK")
	c.ExecContext(h.ctx, "SET transaction_read_only = 0")
	return err
}

// sessionsReadOnlyServer starts a server of its own with a second user,
// reader, and root's SET GLOBAL set applied: global variables must not
// reach the suite's server. It returns root's and reader's pools.
func sessionsReadOnlyServer(h *hostileEnv, set string) (root, reader *sql.DB, err error) {
	dir := filepath.Join(h.t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	p := h.serve(nil, "--listen", "127.0.0.1:0", "--data", dir)
	open := func(user, pw string) *sql.DB {
		db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/lakesql?timeout=20s", user, pw, p.addr))
		if err != nil {
			h.t.Fatal(err)
		}
		h.closers = append(h.closers, func() { db.Close() })
		return db
	}
	root, reader = open("root", hostilePassword), open("reader", "reader-pw")
	// reader may write everything; read_only is what stops it.
	for _, q := range []string{"CREATE USER 'reader'@'%' IDENTIFIED BY 'reader-pw'", "GRANT ALL ON lakesql.* TO 'reader'@'%'",
		"GRANT FILE ON *.* TO 'reader'@'%'", "CREATE SINK ro INTO DELTA 'ro' (id BIGINT NOT NULL)", "INSERT INTO ro VALUES (1)", set} {
		if _, err := root.ExecContext(h.ctx, q); err != nil {
			return nil, nil, h.wrong("%s: %v", q, err)
		}
	}
	return root, reader, nil
}

func init() {
	registerHostile(
		hostileProbe{name: "secrets/processlist-comment", run: func(h *hostileEnv) error {
			const key = "sessions-sleep-secret-4Kq"
			h.secret(key)
			done := make(chan error, 1)
			go func() {
				_, err := h.db.ExecContext(h.ctx, "SELECT SLEEP(3) /* sessions-marker storage.secret_access_key='"+key+"' */")
				done <- err
			}()
			seen, err := sessionsWaitInfo(h, h.open("root", h.password), "sessions-marker", done)
			for _, info := range seen {
				if strings.Contains(info, key) {
					return h.leaked("another session's process list shows %s", info)
				}
			}
			if err != nil {
				return err
			}
			return <-done
		}},
		hostileProbe{name: "secrets/processlist-create-sink", run: func(h *hostileEnv) error {
			// The endpoint never answers: CREATE SINK waits in the
			// process list, its secret key and endpoint password in it.
			const key, pw = "sessions-create-secret-8Zp", "sessions-endpoint-pw-3Rt"
			h.secret(key)
			h.secret(pw)
			addr, stop := sessionsSilentListener(h)
			done := make(chan error, 1)
			go func() {
				_, err := h.db.ExecContext(h.ctx, fmt.Sprintf("CREATE SINK sessions_hang INTO DELTA 's3://sessions-bucket/t' (id BIGINT) WITH ("+
					"storage.endpoint = 'http://proxy:%s@%s', storage.access_key_id = 'AKIASESSIONS', storage.secret_access_key = '%s', "+
					"storage.path_style = 'true', storage.region = 'us-east-1', storage.max_attempts = '1')", pw, addr, key))
				done <- err
			}()
			seen, err := sessionsWaitInfo(h, h.open("root", h.password), "sessions_hang", done)
			stop()
			for _, info := range seen {
				if strings.Contains(info, key) || strings.Contains(info, pw) {
					return h.leaked("another session's process list shows %s", info)
				}
			}
			if err != nil {
				return err
			}
			if cerr := <-done; cerr == nil {
				return h.wrong("CREATE SINK on an endpoint that never answered succeeded")
			} else if strings.Contains(cerr.Error(), key) || strings.Contains(cerr.Error(), pw) {
				return h.leaked("the CREATE SINK error shows a secret: %v", cerr)
			}
			return nil
		}},
		hostileProbe{name: "secrets/show-create-sink-endpoint", run: func(h *hostileEnv) error {
			const pw = "sessions-show-pw-6Yh"
			h.secret(pw)
			opts := lake.Options()
			endpoint := strings.Replace(opts["storage.endpoint"], "://", "://proxy:"+pw+"@", 1)
			loc := lake.URL(lakePrefix(h.t) + "/sessions_show")
			if err := h.exec(fmt.Sprintf("CREATE SINK sessions_show INTO DELTA '%s' (id BIGINT NOT NULL) WITH (storage.endpoint = '%s', "+
				"storage.access_key_id = '%s', storage.secret_access_key = '%s', storage.region = '%s', storage.path_style = 'true')",
				loc, endpoint, opts["storage.access_key_id"], opts["storage.secret_access_key"], opts["storage.region"])); err != nil {
				return h.wrong("CREATE SINK on versitygw: %v", err)
			}
			defer h.exec("DROP SINK sessions_show")
			for _, q := range []string{"SHOW CREATE SINK sessions_show", "CALL lakesql_show_create_sink('sessions_show')", "SHOW SINK STATUS sessions_show"} {
				rows, err := hostileRows(h.ctx, h.open("root", h.password), q)
				if err != nil {
					return err
				}
				if s := fmt.Sprint(rows); strings.Contains(s, pw) || strings.Contains(s, opts["storage.secret_access_key"]) {
					return h.leaked("%s shows %s", q, s)
				}
			}
			return nil
		}},

		hostileProbe{name: "readonly/tx-drop-canary", want: 1792, run: func(h *hostileEnv) error {
			return sessionsReadOnly(h, "START TRANSACTION READ ONLY", "DROP SINK canary_d")
		}},
		hostileProbe{name: "readonly/tx-call-drop-canary", want: 1792, run: func(h *hostileEnv) error {
			return sessionsReadOnly(h, "START TRANSACTION READ ONLY", "CALL lakesql_drop_sink('canary_i')")
		}},
		hostileProbe{name: "readonly/tx-create-sink", want: 1792, run: func(h *hostileEnv) error {
			return sessionsReadOnly(h, "START TRANSACTION READ ONLY", "CREATE SINK sessions_ro INTO DELTA 'lake/sessions_ro' (id BIGINT)")
		}},
		hostileProbe{name: "readonly/tx-call-create-sink", want: 1792, run: func(h *hostileEnv) error {
			return sessionsReadOnly(h, "START TRANSACTION READ ONLY", "CALL lakesql_create_sink('sessions_ro', 'delta', 'lake/sessions_ro', 'id BIGINT')")
		}},
		hostileProbe{name: "readonly/tx-set-epoch", want: 1792, run: func(h *hostileEnv) error {
			return sessionsReadOnly(h, "START TRANSACTION READ ONLY", "SET lakesql_epoch = 99")
		}},
		hostileProbe{name: "readonly/tx-into-outfile", want: 1792, run: func(h *hostileEnv) error {
			out := filepath.Join(h.data, "files", "sessions_ro.txt")
			err := sessionsReadOnly(h, "START TRANSACTION READ ONLY", "SELECT * FROM canary_d INTO OUTFILE '"+out+"'")
			if _, serr := os.Stat(out); serr == nil {
				return h.wrong("INTO OUTFILE in a READ ONLY transaction wrote %s (%v)", out, err)
			}
			return err
		}},
		hostileProbe{name: "readonly/tx-into-dumpfile", want: 1792, run: func(h *hostileEnv) error {
			return sessionsReadOnly(h, "START TRANSACTION READ ONLY", "SELECT 'x' INTO DUMPFILE '"+filepath.Join(h.data, "files", "sessions_ro.bin")+"'")
		}},
		hostileProbe{name: "readonly/tx-create-view", want: 1792, run: func(h *hostileEnv) error {
			return sessionsReadOnly(h, "START TRANSACTION READ ONLY", "CREATE VIEW sessions_v AS SELECT * FROM canary_d")
		}},
		hostileProbe{name: "readonly/session-insert-canary", want: 1792, run: func(h *hostileEnv) error {
			return sessionsReadOnly(h, "SET transaction_read_only = 1", "INSERT INTO canary_d VALUES (4, 'four')")
		}},
		hostileProbe{name: "readonly/session-drop-canary", want: 1792, run: func(h *hostileEnv) error {
			return sessionsReadOnly(h, "SET transaction_read_only = 1", "DROP SINK canary_i")
		}},
		hostileProbe{name: "readonly/global-read-only-user", want: 1290, timeout: 90 * time.Second, run: func(h *hostileEnv) error {
			root, reader, err := sessionsReadOnlyServer(h, "SET GLOBAL read_only = 1")
			if err != nil {
				return err
			}
			for _, q := range []string{"INSERT INTO ro VALUES (2)", "CREATE SINK ro2 INTO DELTA 'ro2' (id BIGINT)", "SET lakesql_epoch = 3"} {
				if _, err := reader.ExecContext(h.ctx, q); hostileCode(err) != 1290 {
					return h.wrong("read_only = 1, reader: %s: %v, want 1290", q, err)
				}
			}
			if _, err := root.ExecContext(h.ctx, "INSERT INTO ro VALUES (3)"); err != nil {
				return h.wrong("read_only = 1 refused root: %v", err)
			}
			_, err = reader.ExecContext(h.ctx, "DROP SINK ro")
			return err
		}},
		hostileProbe{name: "readonly/global-lift-by-user", want: 1227, timeout: 90 * time.Second, run: func(h *hostileEnv) error {
			_, reader, err := sessionsReadOnlyServer(h, "SET GLOBAL read_only = 1")
			if err != nil {
				return err
			}
			_, err = reader.ExecContext(h.ctx, "SET GLOBAL read_only = 0")
			if _, ierr := reader.ExecContext(h.ctx, "INSERT INTO ro VALUES (5)"); hostileCode(ierr) != 1290 {
				return h.wrong("after reader's SET GLOBAL read_only = 0 (%v), its INSERT: %v, want 1290", err, ierr)
			}
			return err
		}},
		hostileProbe{name: "readonly/global-super-read-only-root", want: 1290, timeout: 90 * time.Second, run: func(h *hostileEnv) error {
			root, _, err := sessionsReadOnlyServer(h, "SET GLOBAL super_read_only = 1")
			if err != nil {
				return err
			}
			_, err = root.ExecContext(h.ctx, "DROP SINK ro")
			return err
		}},

		hostileProbe{name: "commit/partial-two-sinks", want: 1105, run: func(h *hostileEnv) error {
			for _, s := range []string{"sessions_pa", "sessions_pb"} {
				if err := h.exec("CREATE SINK " + s + " INTO DELTA 'lake/" + s + "' (id BIGINT NOT NULL)"); err != nil {
					return h.wrong("CREATE SINK %s: %v", s, err)
				}
				defer h.exec("DROP SINK " + s)
			}
			table := filepath.Join(h.data, "lake", "sessions_pb")
			next := filepath.Join(table, "_delta_log", fmt.Sprintf("%020d.json", deltatest.Versions(h.t, table)))
			if err := os.Mkdir(next, 0o755); err != nil {
				return err
			}
			c, err := h.db.Conn(h.ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			tx := []string{"SET lakesql_epoch = 42", "BEGIN", "INSERT INTO sessions_pa VALUES (1), (2)", "INSERT INTO sessions_pb VALUES (1), (2)", "COMMIT"}
			var commitErr error
			for _, q := range tx {
				if _, commitErr = c.ExecContext(h.ctx, q); commitErr != nil {
					break
				}
			}
			if commitErr == nil {
				return h.wrong("COMMIT succeeded although sessions_pb's log entry was taken")
			}
			msg := commitErr.Error()
			for _, want := range []string{"Committed: sessions_pa (table version 1, epoch 42)", "not committed (rolled back): sessions_pb", "SET lakesql_epoch = 42"} {
				if !strings.Contains(msg, want) {
					return h.wrong("the partial COMMIT's error does not say %q: %s", want, msg)
				}
			}
			if err := os.Remove(next); err != nil {
				return err
			}
			for _, q := range tx {
				if _, err := c.ExecContext(h.ctx, q); err != nil {
					return h.wrong("the replay: %s: %v", q, err)
				}
			}
			for _, s := range []string{"sessions_pa", "sessions_pb"} {
				rows, err := h.query("SELECT id FROM " + s + " ORDER BY id")
				if err != nil {
					return err
				}
				if fmt.Sprint(rows) != "[[1] [2]]" {
					return h.wrong("%s after the replay holds %v, want rows 1 and 2 once", s, rows)
				}
			}
			return commitErr
		}},
	)
}
