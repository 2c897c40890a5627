package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// Probes of the privileges: a read-only user (SELECT on lakesql.*) on
// every path that writes, and a user with INSERT on one sink alone on the
// paths that read. Each refusal must carry MySQL's code and leave the
// sinks, the sink list and the file system as they were.

const (
	privilegesReadOnly   = "hostile_ro"
	privilegesReadOnlyPW = "hostile-ro-pw"
	privilegesInsertOnly = "hostile_ins"
	privilegesInsertPW   = "hostile-ins-pw"
)

// privilegesUsers creates the two users (once; the statements are
// idempotent) and returns their pools.
func privilegesUsers(h *hostileEnv) (ro, ins *sql.DB, err error) {
	for _, q := range []string{
		"CREATE USER IF NOT EXISTS '" + privilegesReadOnly + "'@'%' IDENTIFIED BY '" + privilegesReadOnlyPW + "'",
		"GRANT SELECT ON lakesql.* TO '" + privilegesReadOnly + "'@'%'",
		"CREATE USER IF NOT EXISTS '" + privilegesInsertOnly + "'@'%' IDENTIFIED BY '" + privilegesInsertPW + "'",
		"GRANT INSERT ON lakesql.canary_i TO '" + privilegesInsertOnly + "'@'%'",
	} {
		if err := h.exec(q); err != nil {
			return nil, nil, h.wrong("setup %s: %v", q, err)
		}
	}
	ro = h.open(privilegesReadOnly, privilegesReadOnlyPW)
	ins = h.open(privilegesInsertOnly, privilegesInsertPW)
	ro.SetMaxOpenConns(1)
	ins.SetMaxOpenConns(1)
	return ro, ins, nil
}

// privilegesSinks is what root sees of the sinks: a refused statement must
// leave it as it was.
func privilegesSinks(h *hostileEnv) ([][]string, error) {
	sinks, err := h.query("SHOW SINKS")
	if err != nil {
		return nil, err
	}
	status, err := h.query("SHOW SINK STATUS")
	if err != nil {
		return nil, err
	}
	for _, r := range status {
		sinks = append(sinks, []string{r[0], r[3], r[5]}) // name, table version, rows
	}
	return sinks, nil
}

// privilegesRefused runs q as the read-only (or insert-only) user and
// returns its error, or a wrong verdict when anything changed.
func privilegesRefused(h *hostileEnv, insertOnly bool, q string, args ...any) error {
	ro, ins, err := privilegesUsers(h)
	if err != nil {
		return err
	}
	db := ro
	if insertOnly {
		db = ins
	}
	before, err := privilegesSinks(h)
	if err != nil {
		return h.wrong("SHOW SINKS before: %v", err)
	}
	_, qerr := db.ExecContext(h.ctx, q, args...)
	after, err := privilegesSinks(h)
	if err != nil {
		return h.wrong("SHOW SINKS after: %v", err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		return h.wrong("%s changed the sinks (-before +after):\n%s", q, diff)
	}
	return qerr
}

func privilegesProbe(name string, want int, insertOnly bool, q string, args ...any) hostileProbe {
	return hostileProbe{name: "privileges/" + name, want: want, run: func(h *hostileEnv) error {
		return privilegesRefused(h, insertOnly, q, args...)
	}}
}

// privilegesOutfile refuses INTO OUTFILE / DUMPFILE (q has one %s, the
// file) and checks that no file appeared.
func privilegesOutfile(name, q string, prepared bool) hostileProbe {
	return hostileProbe{name: "privileges/" + name, want: 1045, run: func(h *hostileEnv) error {
		path := filepath.Join(h.data, "files", "privileges-"+strings.ReplaceAll(name, "/", "-")+".txt")
		ro, _, err := privilegesUsers(h)
		if err != nil {
			return err
		}
		stmt := fmt.Sprintf(q, path)
		if prepared {
			conn, cerr := ro.Conn(h.ctx)
			if cerr != nil {
				return h.wrong("conn: %v", cerr)
			}
			defer conn.Close()
			if _, err = conn.ExecContext(h.ctx, "PREPARE privileges_s FROM '"+strings.ReplaceAll(stmt, "'", "''")+"'"); err == nil {
				_, err = conn.ExecContext(h.ctx, "EXECUTE privileges_s")
			}
		} else {
			_, err = ro.ExecContext(h.ctx, stmt)
		}
		if _, serr := os.Stat(path); serr == nil {
			return h.wrong("the refused statement wrote %s", path)
		}
		return err
	}}
}

func init() {
	registerHostile(
		// The read-only user on each path that writes.
		privilegesProbe("ro/insert", 1142, false, "INSERT INTO canary_d VALUES (9, 'nine')"),
		privilegesProbe("ro/insert-select", 1142, false, "INSERT INTO canary_i SELECT * FROM canary_d"),
		privilegesProbe("ro/replace", 1142, false, "REPLACE INTO canary_d VALUES (1, 'uno')"),
		privilegesProbe("ro/update", 1142, false, "UPDATE canary_d SET v = 'x' WHERE id = 1"),
		privilegesProbe("ro/delete", 1142, false, "DELETE FROM canary_d WHERE id = 1"),
		privilegesProbe("ro/delete-prepared", 1142, false, "DELETE FROM canary_d WHERE id = ?", 1),
		privilegesProbe("ro/create-sink", 1142, false, "CREATE SINK privileges_c INTO DELTA 'lake/privileges_c' (id BIGINT)"),
		privilegesProbe("ro/drop-sink", 1142, false, "DROP SINK canary_d"),
		privilegesProbe("ro/drop-sink-if-exists", 1142, false, "DROP SINK IF EXISTS canary_i"),
		privilegesProbe("ro/call-create-sink", 1142, false, "CALL lakesql_create_sink('privileges_c', 'delta', 'lake/privileges_c', 'id BIGINT')"),
		privilegesProbe("ro/call-create-sink-prepared", 1142, false, "CALL lakesql_create_sink(?, ?, ?, ?)", "privileges_c", "delta", "lake/privileges_c", "id BIGINT"),
		privilegesProbe("ro/call-drop-sink", 1142, false, "CALL lakesql_drop_sink('canary_d')"),
		privilegesProbe("ro/call-drop-sink-mixed-case", 1142, false, "CALL LakeSQL_Drop_Sink('canary_d')"),
		privilegesProbe("ro/set-epoch", 1044, false, "SET lakesql_epoch = 42"),
		privilegesProbe("ro/set-epoch-session", 1044, false, "SET SESSION lakesql_epoch = 42"),
		privilegesProbe("ro/set-epoch-at", 1044, false, "SET @@lakesql_epoch = 42"),
		privilegesProbe("ro/create-view", 1142, false, "CREATE VIEW privileges_v AS SELECT * FROM canary_d"),
		privilegesProbe("ro/load-data", 1045, false, "LOAD DATA INFILE 'x.csv' INTO TABLE canary_d"),
		privilegesProbe("ro/grant-self", 1044, false, "GRANT INSERT ON lakesql.* TO '"+privilegesReadOnly+"'@'%'"),
		privilegesProbe("ro/grant-global", 1045, false, "GRANT ALL ON *.* TO '"+privilegesReadOnly+"'@'%'"),
		privilegesProbe("ro/create-user", 1227, false, "CREATE USER 'privileges_x'@'%' IDENTIFIED BY 'x'"),
		privilegesProbe("ro/alter-root", 1227, false, "ALTER USER root IDENTIFIED BY 'taken'"),
		privilegesProbe("ro/drop-root", 1227, false, "DROP USER root"),
		privilegesProbe("ro/write-mysql-user", 1142, false, "INSERT INTO mysql.user (Host, User) VALUES ('%', 'privileges_y')"),
		privilegesOutfile("ro/into-outfile", "SELECT * FROM canary_d INTO OUTFILE '%s'", false),
		privilegesOutfile("ro/into-dumpfile", "SELECT v FROM canary_d LIMIT 1 INTO DUMPFILE '%s'", false),
		privilegesOutfile("ro/into-outfile-no-table", "SELECT 'x' INTO OUTFILE '%s'", false),
		privilegesOutfile("ro/into-outfile-sql-prepare", "SELECT * FROM canary_d INTO OUTFILE '%s'", true),

		// The user with INSERT on canary_i alone on the paths that read.
		privilegesProbe("insert-only/select-other", 1142, true, "SELECT * FROM canary_d"),
		privilegesProbe("insert-only/select-routed", 1142, true, "SELECT count(*) FROM canary_d"),
		privilegesProbe("insert-only/select-own", 1142, true, "SELECT * FROM canary_i"),
		privilegesProbe("insert-only/join", 1142, true, "SELECT * FROM canary_i JOIN canary_d"),
		privilegesProbe("insert-only/subquery", 1142, true, "SELECT (SELECT count(*) FROM canary_d)"),
		privilegesProbe("insert-only/insert-select-other", 1142, true, "INSERT INTO canary_i SELECT * FROM canary_d"),
		privilegesProbe("insert-only/show-create-sink", 1142, true, "SHOW CREATE SINK canary_d"),
		privilegesProbe("insert-only/sink-status", 1142, true, "SHOW SINK STATUS canary_d"),
		hostileProbe{name: "privileges/insert-only/show-sinks-lists-own", run: func(h *hostileEnv) error {
			_, ins, err := privilegesUsers(h)
			if err != nil {
				return err
			}
			rows, err := hostileRows(h.ctx, ins, "SHOW SINKS")
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0][0] != "canary_i" {
				return h.wrong("SHOW SINKS as a user with INSERT on canary_i alone: %v", rows)
			}
			return nil
		}},
		hostileProbe{name: "privileges/ro/reads-allowed", run: func(h *hostileEnv) error {
			ro, _, err := privilegesUsers(h)
			if err != nil {
				return err
			}
			for _, q := range []string{"SELECT count(*) FROM canary_d", "SELECT count(*) FROM canary_i JOIN canary_d", "SHOW CREATE SINK canary_d", "CALL lakesql_show_sinks()"} {
				if _, err := hostileRows(h.ctx, ro, q); err != nil {
					return h.wrong("%s as the read-only user: %v", q, err)
				}
			}
			return nil
		}},
	)
}

func init() {
	registerHostile(hostileProbe{name: "privileges/ro/load-file-null", run: func(h *hostileEnv) error {
		ro, _, err := privilegesUsers(h)
		if err != nil {
			return err
		}
		path := filepath.Join(h.data, "files", "privileges-load-file.txt")
		if err := os.WriteFile(path, []byte("privileges-load-file-secret"), 0o600); err != nil {
			return h.wrong("write %s: %v", path, err)
		}
		rows, err := hostileRows(h.ctx, ro, "SELECT LOAD_FILE(?)", path)
		if err != nil {
			return err
		}
		if len(rows) != 1 || rows[0][0] != "NULL" {
			return h.leaked("LOAD_FILE without FILE read %v", rows)
		}
		return nil
	}})
}

func init() {
	registerHostile(hostileProbe{name: "privileges/ro/kill-root", want: 1095, run: func(h *hostileEnv) error {
		ro, _, err := privilegesUsers(h)
		if err != nil {
			return err
		}
		c, err := h.db.Conn(h.ctx)
		if err != nil {
			return h.wrong("root conn: %v", err)
		}
		defer c.Close()
		var id string
		if err := c.QueryRowContext(h.ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			return h.wrong("CONNECTION_ID: %v", err)
		}
		_, kerr := ro.ExecContext(h.ctx, "KILL "+id)
		if err := c.PingContext(h.ctx); err != nil {
			return h.wrong("root's connection after the read-only user's KILL: %v", err)
		}
		return kerr
	}})
}
