package driver_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"

	_ "github.com/lakesql/lakesql/driver"
)

// A transaction through database/sql is one epoch: one table version.
func Example() {
	dir, err := os.MkdirTemp("", "lakesql-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := sql.Open("lakesql", dir) // or dir+"?allowed_roots=/a,/b"
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE SINK orders INTO DELTA 'lake/orders'
	  (id BIGINT NOT NULL, amount DOUBLE, PRIMARY KEY (id))`); err != nil {
		log.Fatal(err)
	}
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := tx.Exec("INSERT INTO orders VALUES (?, ?)", i, float64(i)*1.5); err != nil {
			log.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	var n int
	var total float64
	if err := db.QueryRow("SELECT count(*), sum(amount) FROM orders").Scan(&n, &total); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, total)
	// Output: 3 9
}
