// Command exactlyonce replays an upstream's batches after a crash without
// duplicating a row: each batch is one transaction whose epoch is the batch
// number, and lakesql skips an epoch the table already holds.
//
//	go run -tags duckdb_arrow ./examples/exactlyonce [-data DIR]
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

// batch is one unit of the upstream (a Kafka poll, a file, ...). Its number
// is stable: the same batch has the same number when it is read again.
type batch struct {
	no     int64
	events []string
}

var upstream = []batch{
	{1, []string{"ana signs up", "ana logs in"}},
	{2, []string{"bo signs up"}},
	{3, []string{"ana buys", "bo logs in", "bo buys"}},
	{4, []string{"cy signs up"}},
	{5, []string{"ana logs out", "bo logs out"}},
}

func main() {
	data := flag.String("data", "", "data directory (default: a temporary one, removed at exit)")
	flag.Parse()
	dir := *data
	if dir == "" {
		tmp, err := os.MkdirTemp("", "lakesql-exactlyonce-")
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

	// First run: batches 1 to 3 land, but the upstream saved its own
	// checkpoint (its read position) only after batch 1; then the process
	// stops, as a crash would stop it.
	fmt.Fprintln(w, "run 1")
	db, err := sql.Open("lakesql", dir)
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE SINK IF NOT EXISTS events INTO DELTA 'lake/events'
		(batch BIGINT NOT NULL, seq INT NOT NULL, event VARCHAR(32))`); err != nil {
		db.Close()
		return err
	}
	for _, b := range upstream[:3] {
		if err := deliver(ctx, w, db, b); err != nil {
			db.Close()
			return err
		}
	}
	if err := db.Close(); err != nil { // the engine and its sinks are gone
		return err
	}

	// Second run: a new engine on the same data directory. The upstream
	// resumes after its checkpoint, so batches 2 and 3 come again.
	db, err = sql.Open("lakesql", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	epoch, _, err := status(ctx, db)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "run 2: the table holds epochs up to %d; the upstream resumes at batch 2\n", epoch)
	for _, b := range upstream[1:] {
		if err := deliver(ctx, w, db, b); err != nil {
			return err
		}
	}

	// Every batch is in the table once.
	rows, err := db.QueryContext(ctx, "SELECT batch, count(*) FROM events GROUP BY batch ORDER BY batch")
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintln(w, "\nbatch  rows")
	for rows.Next() {
		var no, n int64
		if err := rows.Scan(&no, &n); err != nil {
			return err
		}
		fmt.Fprintf(w, "%5d  %4d\n", no, n)
	}
	return rows.Err()
}

// deliver writes one batch as one transaction whose epoch is the batch number.
func deliver(ctx context.Context, w io.Writer, db *sql.DB, b batch) error {
	_, before, err := status(ctx, db)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op after Commit
	// The epoch is fixed by the transaction's first write, so SET comes
	// first. It holds for this transaction only.
	if _, err := tx.ExecContext(ctx, "SET lakesql_epoch = ?", b.no); err != nil {
		return err
	}
	for i, ev := range b.events {
		if _, err := tx.ExecContext(ctx, "INSERT INTO events VALUES (?, ?, ?)", b.no, i+1, ev); err != nil {
			return err
		}
	}
	// A replay commits successfully and writes nothing.
	if err := tx.Commit(); err != nil {
		return err
	}
	_, after, err := status(ctx, db)
	if err != nil {
		return err
	}
	// With one writer, an unchanged version means the epoch was a replay.
	if after == before {
		fmt.Fprintf(w, "  batch %d: a replay, skipped (table stays at version %d)\n", b.no, after)
	} else {
		fmt.Fprintf(w, "  batch %d: %d row(s) committed as table version %d\n", b.no, len(b.events), after)
	}
	return nil
}

// status returns the sink's last committed epoch (0 for none) and its table
// version, from SHOW SINK STATUS.
func status(ctx context.Context, db *sql.DB) (epoch, version int64, err error) {
	var name, health string
	var last, ver, commits, rows sql.NullInt64
	var errText sql.NullString
	err = scanStatus(ctx, db, "events", &name, &health, &last, &ver, &commits, &rows, &errText)
	return last.Int64, ver.Int64, err
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
