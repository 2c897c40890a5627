// Command embedded writes to a Delta table through database/sql with the
// embedded lakesql driver: no server, no network, one data directory.
//
//	go run -tags duckdb_arrow ./examples/embedded [-data DIR]
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	_ "github.com/lakesql/lakesql/driver" // registers the "lakesql" driver
)

func main() {
	data := flag.String("data", "", "data directory, new or empty (default: a temporary one, removed at exit)")
	flag.Parse()
	dir := *data
	if dir == "" {
		tmp, err := os.MkdirTemp("", "lakesql-embedded-")
		if err != nil {
			log.Fatal(err)
		}
		dir = tmp
	}
	err := run(os.Stdout, dir)
	if *data == "" {
		os.RemoveAll(dir)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, dir string) error {
	ctx := context.Background()
	// The DSN is the data directory. Sink locations are relative to it.
	db, err := sql.Open("lakesql", dir)
	if err != nil {
		return err
	}
	defer db.Close()

	// A sink is a table: CREATE SINK creates the Delta table (version 0).
	if _, err := db.ExecContext(ctx, `CREATE SINK orders INTO DELTA 'lake/orders'
		(id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16))`); err != nil {
		return err
	}

	// Outside a transaction every statement is its own epoch: one table version.
	if _, err := db.ExecContext(ctx, "INSERT INTO orders VALUES (?, ?, ?)", 1, 9.5, "eu"); err != nil {
		return err
	}
	if err := report(ctx, w, db, "autocommit INSERT"); err != nil {
		return err
	}

	// A transaction is one epoch: its INSERTs land together as one version.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op once committed; on an early return it discards the epoch
	for i, region := range []string{"eu", "us", "us"} {
		if _, err := tx.ExecContext(ctx, "INSERT INTO orders VALUES (?, ?, ?)", i+2, float64(i+2)*10, region); err != nil {
			return err
		}
	}
	// Until COMMIT the rows sit in the epoch buffer: even this transaction
	// reads the last committed version.
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil {
		return err
	}
	fmt.Fprintf(w, "inside the transaction   -> %d row(s) visible\n", n)
	if err := tx.Commit(); err != nil {
		return err
	}
	if err := report(ctx, w, db, "3 INSERTs, one COMMIT"); err != nil {
		return err
	}

	// Rollback discards the epoch: no version, no files.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders VALUES (99, 0, 'xx')"); err != nil {
		return err
	}
	if err := tx.Rollback(); err != nil {
		return err
	}
	if err := report(ctx, w, db, "INSERT, then ROLLBACK"); err != nil {
		return err
	}

	// SELECT reads the last committed version.
	rows, err := db.QueryContext(ctx, "SELECT id, amount, region FROM orders ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintln(w, "\nid  amount  region")
	for rows.Next() {
		var id int64
		var amount float64
		var region string
		if err := rows.Scan(&id, &amount, &region); err != nil {
			return err
		}
		fmt.Fprintf(w, "%-3d %6.1f  %s\n", id, amount, region)
	}
	return rows.Err()
}

// report prints the table version SHOW SINK STATUS gives after a step.
func report(ctx context.Context, w io.Writer, db *sql.DB, step string) error {
	var name, health string
	var epoch, ver, commits, rows sql.NullInt64
	var errText sql.NullString
	if err := scanStatus(ctx, db, "orders", &name, &health, &epoch, &ver, &commits, &rows, &errText); err != nil {
		return err
	}
	fmt.Fprintf(w, "%-24s -> table version %d\n", step, ver.Int64)
	return nil
}

// scanStatus reads the first columns of a sink's SHOW SINK STATUS row into
// dest; the layout and maintenance columns after them are not needed here.
func scanStatus(ctx context.Context, db *sql.DB, sink string, dest ...any) error {
	rows, err := db.QueryContext(ctx, "SHOW SINK STATUS "+sink)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for len(dest) < len(cols) {
		dest = append(dest, new(sql.RawBytes))
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}
