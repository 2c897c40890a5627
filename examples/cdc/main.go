// Command cdc applies a changelog (inserts, updates, deletes, as a CDC tool
// such as Debezium emits them) to a Delta table through an upsert sink: one
// transaction of changes becomes one table version.
//
//	go run -tags duckdb_arrow ./examples/cdc [-data DIR]
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/lakesql/lakesql/driver" // registers the "lakesql" driver
)

// change is one changelog row. op is what the row does: I (insert),
// U (update, the row after), r (snapshot read) upsert; D deletes the key.
type change struct {
	op         string
	id         int64
	name, city string
}

// transactions is the changelog, as the upstream groups it.
var transactions = [][]change{
	{{"r", 1, "ana", "Lisbon"}, {"r", 2, "bo", "Oslo"}, {"r", 3, "cy", "Rome"}},
	{{"U", 2, "bo", "Bergen"}, {"I", 4, "dee", "Paris"}, {"D", 3, "", ""}},
	// Within one transaction the changes to a key collapse, last one wins:
	// id 1 ends in Faro, and id 5 comes and goes without a trace.
	{{"U", 1, "ana", "Porto"}, {"I", 5, "eve", "Oslo"}, {"U", 1, "ana", "Faro"}, {"D", 5, "", ""}},
}

func main() {
	data := flag.String("data", "", "data directory, new or empty (default: a temporary one, removed at exit)")
	flag.Parse()
	dir := *data
	if dir == "" {
		tmp, err := os.MkdirTemp("", "lakesql-cdc-")
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
	db, err := sql.Open("lakesql", dir)
	if err != nil {
		return err
	}
	defer db.Close()

	// Upsert mode needs a primary key: a row replaces the table's row with
	// the same key, and a delete removes it.
	if _, err := db.ExecContext(ctx, `CREATE SINK customers INTO DELTA 'lake/customers'
		(id BIGINT NOT NULL, name VARCHAR(32), city VARCHAR(32), PRIMARY KEY (id))
		WITH (mode = 'upsert')`); err != nil {
		return err
	}

	for i, changes := range transactions {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "transaction %d:", i+1)
		for _, c := range changes {
			// Naming the column _op makes the INSERT a changelog write.
			var name, city any = c.name, c.city
			if c.op == "D" {
				name, city = nil, nil // a delete needs only the key
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO customers (_op, id, name, city) VALUES (?, ?, ?, ?)",
				c.op, c.id, name, city); err != nil {
				tx.Rollback()
				return err
			}
			fmt.Fprintf(w, " %s %d", c.op, c.id)
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		if err := printTable(ctx, w, db); err != nil {
			return err
		}
	}

	// An unknown _op rejects the statement with MySQL error 1366; nothing
	// of it is written.
	_, err = db.ExecContext(ctx, "INSERT INTO customers (_op, id, name, city) VALUES ('X', 9, 'zed', 'Bern')")
	var lerr *driver.Error
	if !errors.As(err, &lerr) {
		return fmt.Errorf("an unknown _op was not refused: %v", err)
	}
	fmt.Fprintf(w, "unknown _op: error %d: %s\n", lerr.Code(), lerr.SQL.Message)
	return printTable(ctx, w, db)
}

// printTable prints the last committed version of the table.
func printTable(ctx context.Context, w io.Writer, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "SELECT id, name, city FROM customers ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name, city string
		if err := rows.Scan(&id, &name, &city); err != nil {
			return err
		}
		fmt.Fprintf(w, "  %d  %-4s %s\n", id, name, city)
	}
	return rows.Err()
}
