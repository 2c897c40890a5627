package main

// Steps 1, 2 and 4 to 8 of the scenario.

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
)

func (s *scenario) connect() {
	s.check("connect", func(ctx context.Context) error {
		var one int
		if err := s.text.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			return err
		}
		if one != 1 {
			return fmt.Errorf("expected 1, got %d", one)
		}
		return nil
	})
	s.check("wrong password refused", func(ctx context.Context) error {
		db := open(config("wrong-password", true, true))
		defer db.Close()
		return wantErr(db.PingContext(ctx), 1045, "28000")
	})
}

const typesColumns = "id BIGINT NOT NULL, b BOOLEAN, i8 TINYINT, u8 TINYINT UNSIGNED, i16 SMALLINT, i32 INT, " +
	"u32 INT UNSIGNED, i64 BIGINT, f32 FLOAT, f64 DOUBLE, `dec` DECIMAL(20,6), vc VARCHAR(64), tx TEXT, js JSON, " +
	"vb VARBINARY(64), d DATE, dt DATETIME(6), ts TIMESTAMP(6), PRIMARY KEY (id)"

// sinks creates two sinks with CREATE SINK (text) and two with the CALL
// procedure, prepared.
func (s *scenario) sinks() {
	s.check("CREATE SINK types", func(ctx context.Context) error {
		_, err := s.text.ExecContext(ctx, "CREATE SINK types INTO DELTA 'lake/types' ("+typesColumns+") WITH (mode = 'upsert')")
		return err
	})
	s.check("CREATE SINK txn", func(ctx context.Context) error {
		_, err := s.text.ExecContext(ctx, "CREATE SINK txn INTO DELTA 'lake/txn' (id BIGINT NOT NULL, v VARCHAR(32))")
		return err
	})
	for _, c := range [][2]string{{"bulk", "id BIGINT NOT NULL, v VARCHAR(32), x DOUBLE"}, {"conc", "id BIGINT NOT NULL, conn INT"}} {
		s.check("CALL lakesql_create_sink "+c[0]+", prepared", func(ctx context.Context) error {
			// conc counts one version per commit: no auto-compaction among them.
			opts := ""
			if c[0] == "conc" {
				opts = "auto_compact = false"
			}
			_, err := s.binary.ExecContext(ctx, "CALL lakesql_create_sink(?, ?, ?, ?, ?, ?)", c[0], "delta", "lake/"+c[0], c[1], "", opts)
			return err
		})
	}
}

// transactions: db.BeginTx, through each protocol.
func (s *scenario) transactions() {
	id := int64(0)
	for _, p := range protocols {
		db := s.db(p)
		insert := func(ctx context.Context, ex interface {
			ExecContext(context.Context, string, ...any) (sql.Result, error)
		}, n int) ([]int64, error) {
			var ids []int64
			for range n {
				id++
				if _, err := ex.ExecContext(ctx, "INSERT INTO txn VALUES (?, ?)", id, p); err != nil {
					return nil, err
				}
				ids = append(ids, id)
			}
			return ids, nil
		}
		present := func(ctx context.Context, ids []int64, want int64) error {
			var list []string
			for _, i := range ids {
				list = append(list, fmt.Sprint(i))
			}
			return s.counts(ctx, "txn WHERE id IN ("+strings.Join(list, ", ")+")", want)
		}
		for _, commit := range []bool{true, false} {
			end, delta, want := "Rollback", int64(0), int64(0)
			if commit {
				end, delta, want = "Commit", 1, 2
			}
			s.check(fmt.Sprintf("%s: BeginTx, 2 INSERTs, %s: +%d, %d rows", p, end, delta, want), func(ctx context.Context) error {
				before, err := s.version(ctx, "txn")
				if err != nil {
					return err
				}
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				ids, err := insert(ctx, tx, 2)
				if err != nil {
					tx.Rollback()
					return err
				}
				if commit {
					err = tx.Commit()
				} else {
					err = tx.Rollback()
				}
				if err != nil {
					return err
				}
				if err := s.grew(ctx, "txn", before, delta); err != nil {
					return err
				}
				return present(ctx, ids, want)
			})
		}
		s.check(p+": autocommit INSERT: +1, 1 row", func(ctx context.Context) error {
			before, err := s.version(ctx, "txn")
			if err != nil {
				return err
			}
			ids, err := insert(ctx, db, 1)
			if err != nil {
				return err
			}
			if err := s.grew(ctx, "txn", before, 1); err != nil {
				return err
			}
			return present(ctx, ids, 1)
		})
	}
}

// errors: code and SQLSTATE of each, on one connection per protocol that
// must keep answering after each.
func (s *scenario) errors() {
	type failure struct {
		name  string
		query string
		args  []any
		code  uint16
		state string
	}
	fs := []failure{
		{"duplicate CREATE SINK", "CREATE SINK txn INTO DELTA 'lake/txn2' (id BIGINT NOT NULL)", nil, 1050, "42S01"},
		{"duplicate CALL lakesql_create_sink", "CALL lakesql_create_sink(?, ?, ?, ?)", []any{"txn", "delta", "lake/txn2", "id BIGINT NOT NULL"}, 1050, "42S01"},
		{"unknown table", "SELECT * FROM nosuch WHERE 1 = ?", []any{1}, 1146, "42S02"},
		{"syntax", "SELEC ?", []any{1}, 1064, "42000"},
		{"NULL into NOT NULL", "INSERT INTO txn VALUES (?, ?)", []any{nil, "n"}, 1048, "23000"},
		{"'x1.5' into DECIMAL", "INSERT INTO types (id, `dec`) VALUES (?, ?)", []any{6001, "x1.5"}, 1366, "HY000"},
		{"65 characters into VARCHAR(64)", "INSERT INTO types (id, vc) VALUES (?, ?)", []any{6002, strings.Repeat("x", 65)}, 1406, "22001"},
		{"bad JSON", "INSERT INTO types (id, js) VALUES (?, ?)", []any{6003, "{bad"}, 3140, "22032"},
	}
	for _, p := range protocols {
		ctx := context.Background()
		conn, err := s.db(p).Conn(ctx)
		if err != nil {
			s.check(p+": a connection for the errors", func(context.Context) error { return err })
			continue
		}
		for _, f := range fs {
			if p == "text" && strings.HasPrefix(f.query, "CALL") {
				continue // the text protocol has CREATE SINK itself
			}
			if p == "binary" && f.args == nil {
				continue // CREATE SINK cannot be prepared; CALL stands in
			}
			s.check(fmt.Sprintf("%s: error: %s", p, f.name), func(ctx context.Context) error {
				var err error
				if strings.HasPrefix(f.query, "SELECT") || strings.HasPrefix(f.query, "SELEC ") {
					var rows *sql.Rows
					if rows, err = conn.QueryContext(ctx, f.query, f.args...); err == nil {
						for rows.Next() {
						}
						err = rows.Err()
						rows.Close()
					}
				} else {
					_, err = conn.ExecContext(ctx, f.query, f.args...)
				}
				if e := wantErr(err, f.code, f.state); e != nil {
					return e
				}
				var one int
				if err := conn.QueryRowContext(ctx, "SELECT ?", 1).Scan(&one); err != nil || one != 1 {
					return fmt.Errorf("expected the connection to answer SELECT 1 after the error, got %d, %v", one, err)
				}
				return nil
			})
		}
		conn.Close()
	}
}

// declared is what MySQL 8 shows in COLUMN_TYPE for each column of types.
var declared = [][2]string{
	{"id", "bigint"}, {"b", "tinyint(1)"}, {"i8", "tinyint"}, {"u8", "tinyint unsigned"}, {"i16", "smallint"},
	{"i32", "int"}, {"u32", "int unsigned"}, {"i64", "bigint"}, {"f32", "float"}, {"f64", "double"},
	{"dec", "decimal(20,6)"}, {"vc", "varchar(64)"}, {"tx", "text"}, {"js", "json"}, {"vb", "varbinary(64)"},
	{"d", "date"}, {"dt", "datetime(6)"}, {"ts", "timestamp(6)"},
}

// metadata: go-sql-driver has no catalog API, so information_schema and
// SHOW INDEX, and the result-column metadata database/sql exposes.
func (s *scenario) metadata() {
	for _, d := range declared {
		s.check("COLUMN_TYPE "+d[0], func(ctx context.Context) error {
			var got string
			err := s.text.QueryRowContext(ctx, "SELECT COLUMN_TYPE FROM information_schema.COLUMNS "+
				"WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'types' AND COLUMN_NAME = ?", os.Getenv("LAKESQL_DATABASE"), d[0]).Scan(&got)
			if err != nil {
				return err
			}
			if got != d[1] {
				return fmt.Errorf("expected %q, got %q", d[1], got)
			}
			return nil
		})
	}
	s.check("id NOT NULL and PRI", func(ctx context.Context) error {
		var null, key string
		err := s.text.QueryRowContext(ctx, "SELECT IS_NULLABLE, COLUMN_KEY FROM information_schema.COLUMNS "+
			"WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'types' AND COLUMN_NAME = 'id'", os.Getenv("LAKESQL_DATABASE")).Scan(&null, &key)
		if err != nil {
			return err
		}
		if null != "NO" || key != "PRI" {
			return fmt.Errorf("expected IS_NULLABLE NO and COLUMN_KEY PRI, got %q and %q", null, key)
		}
		return nil
	})
	s.check("SHOW INDEX: PRIMARY (id)", func(ctx context.Context) error {
		rows, err := s.text.QueryContext(ctx, "SHOW INDEX FROM types")
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		var got []string
		for rows.Next() {
			cells := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			var key, col string
			for i, c := range cols {
				switch c {
				case "Key_name":
					key = cells[i].String
				case "Column_name":
					col = cells[i].String
				}
			}
			got = append(got, key+"/"+col)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(got) != 1 || got[0] != "PRIMARY/id" {
			return fmt.Errorf("expected one row PRIMARY/id, got %q", got)
		}
		return nil
	})
	for _, p := range protocols {
		s.check(p+": result columns carry NOT NULL, UNSIGNED and 6 fraction digits", func(ctx context.Context) error {
			rows, err := s.db(p).QueryContext(ctx, "SELECT id, u8, u32, dt, ts FROM types WHERE id = ?", 1)
			if err != nil {
				return err
			}
			defer rows.Close()
			cts, err := rows.ColumnTypes()
			if err != nil {
				return err
			}
			var errs []string
			if n, ok := cts[0].Nullable(); !ok || n {
				errs = append(errs, "id: expected NOT NULL, got nullable")
			}
			for i, want := range []string{1: "UNSIGNED TINYINT", 2: "UNSIGNED INT"} {
				if want == "" {
					continue
				}
				if got := cts[i].DatabaseTypeName(); got != want {
					errs = append(errs, fmt.Sprintf("%s: expected %s, got %s", cts[i].Name(), want, got))
				}
			}
			for _, i := range []int{3, 4} {
				if _, scale, ok := cts[i].DecimalSize(); !ok || scale != 6 {
					errs = append(errs, fmt.Sprintf("%s: expected 6 decimals, got %d", cts[i].Name(), scale))
				}
			}
			if errs != nil {
				return fmt.Errorf("%s", strings.Join(errs, "; "))
			}
			return nil
		})
	}
}

// bulk: one prepared multi-row INSERT, executed in a loop inside one
// transaction.
func (s *scenario) bulk() {
	const rowsPerStatement, statements = 1000, 100
	s.check("bulk: 100,000 rows, prepared multi-row INSERTs in one transaction", func(ctx context.Context) error {
		before, err := s.version(ctx, "bulk")
		if err != nil {
			return err
		}
		tx, err := s.binary.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO bulk VALUES "+strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", rowsPerStatement), ", "))
		if err != nil {
			return err
		}
		args := make([]any, 0, 3*rowsPerStatement)
		for n := range statements {
			args = args[:0]
			for i := range rowsPerStatement {
				id := int64(n*rowsPerStatement + i)
				args = append(args, id, fmt.Sprint("v", id), float64(id)+0.5)
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("statement %d: %w", n, err)
			}
		}
		if err := stmt.Close(); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		if err := s.grew(ctx, "bulk", before, 1); err != nil {
			return err
		}
		return s.counts(ctx, "bulk", rowsPerStatement*statements)
	})
}

// concurrency: 16 connections × 50 autocommit INSERTs, half of them
// through each protocol.
func (s *scenario) concurrency() {
	const conns, inserts = 16, 50
	s.check("concurrency: 16 connections × 50 autocommit INSERTs: 800 rows, each once, 800 epochs in 1 to 800 versions", func(ctx context.Context) error {
		epoch0, before, err := s.status(ctx, "conc")
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		errs := make([]error, conns)
		for c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, err := s.db(protocols[c%2]).Conn(ctx)
				if err != nil {
					errs[c] = err
					return
				}
				defer conn.Close()
				for i := range inserts {
					if _, err := conn.ExecContext(ctx, "INSERT INTO conc VALUES (?, ?)", c*100+i, c); err != nil {
						errs[c] = fmt.Errorf("connection %d (%s), INSERT %d: %w", c, protocols[c%2], i, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		if err := s.counts(ctx, "conc", conns*inserts); err != nil {
			return err
		}
		// Group commit: COMMITs that meet land as one version of
		// consecutive epochs, so each INSERT is an epoch, not a version.
		epoch, now, err := s.status(ctx, "conc")
		if err != nil {
			return err
		}
		if epoch != epoch0+conns*inserts || now-before < 1 || now-before > conns*inserts {
			return fmt.Errorf("expected Last_epoch %d+%d and Table_version %d+1..%d, got %d and %d",
				epoch0, conns*inserts, before, conns*inserts, epoch, now)
		}
		return nil
	})
}
