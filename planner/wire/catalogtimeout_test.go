package wire

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/lakesql/lakesql/internal/stalltest"
)

// newSilentCatalog is a REST catalog that hangs: it accepts, reads and
// never answers, until the test ends.
func newSilentCatalog(t *testing.T) *stalltest.Silent {
	t.Helper()
	s, err := stalltest.NewSilent()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// trickleCatalog is a REST catalog whose answers never end, until the
// test ends.
func trickleCatalog(t *testing.T) string {
	t.Helper()
	c, err := stalltest.NewTrickle()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.URI()
}

func wantCodeText(t *testing.T, err error, code uint16, text string) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code || !strings.Contains(me.Message, text) {
		t.Fatalf("got %v, want MySQL error %d containing %q", err, code, text)
	}
}

func restSink(name, uri string) string {
	return fmt.Sprintf("CREATE SINK %s INTO ICEBERG 'ns.%s' (id BIGINT NOT NULL) WITH (catalog.type = 'rest', catalog.uri = '%s')", name, name, uri)
}

// A REST catalog that accepts and never answers, and one that answers
// but never finishes, fail CREATE SINK with 1429 once the catalog timeout
// passes; the name is free again afterwards.
func TestCatalogTimeout(t *testing.T) {
	ts := startServerWith(t, Config{CatalogTimeout: 300 * time.Millisecond})
	db := ts.db(testPassword)
	silent := newSilentCatalog(t)
	_, err := db.Exec(restSink("hung", silent.URI()))
	wantCodeText(t, err, 1429, "did not answer within 300ms")
	_, err = db.Exec(restSink("hung", trickleCatalog(t)))
	wantCodeText(t, err, 1429, "did not answer within 300ms")
	mustExec(t, db, "CREATE SINK hung INTO ICEBERG 'ns.hung' (id BIGINT NOT NULL)")
}

// While a CREATE SINK waits on a REST catalog that never answers (and no
// timeout would end it soon), Iceberg CREATE SINK on the default catalog,
// a Delta CREATE SINK, writes, SHOW SINKS and SHOW SINK STATUS all go on;
// a second CREATE SINK of the waiting name is refused at once. All of it
// finishes before the waiting statement does: that one ends only when the
// catalog hangs up, which the test does last.
func TestCatalogHangBlocksNoOne(t *testing.T) {
	ts := startServerWith(t, Config{CatalogTimeout: time.Hour})
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK before INTO ICEBERG 'ns.before' (id BIGINT NOT NULL)")
	silent := newSilentCatalog(t)

	hung, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	done := make(chan error, 1)
	go func() {
		_, err := hung.ExecContext(context.Background(), restSink("hung", silent.URI()))
		done <- err
	}()
	<-silent.Requested() // the CREATE SINK is in the catalog's I/O now

	mustExec(t, db, "CREATE SINK ice INTO ICEBERG 'ns.ice' (id BIGINT NOT NULL)")
	mustExec(t, db, "INSERT INTO ice VALUES (1), (2)")
	mustExec(t, db, "CREATE SINK d INTO DELTA 'd' (id BIGINT NOT NULL)")
	mustExec(t, db, "INSERT INTO d VALUES (3)")
	if got := ids(t, db, "ice"); fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("ice holds %v, want [1 2]", got)
	}
	status := sinkStatusNames(t, db)
	if fmt.Sprint(status) != "[before d ice]" {
		t.Fatalf("SHOW SINK STATUS lists %v, want [before d ice] (not the sink being created)", status)
	}
	var sinks []string
	rows, err := db.Query("SHOW SINKS")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, format, loc, mode string
		if err := rows.Scan(&name, &format, &loc, &mode); err != nil {
			t.Fatal(err)
		}
		sinks = append(sinks, name)
	}
	rows.Close()
	if fmt.Sprint(sinks) != "[before d ice]" {
		t.Fatalf("SHOW SINKS lists %v, want [before d ice]", sinks)
	}
	_, err = db.Exec("CREATE SINK hung INTO ICEBERG 'ns.other' (id BIGINT NOT NULL)")
	wantCodeText(t, err, 1050, "another statement is creating it")
	_, err = db.Exec("SELECT * FROM hung")
	wantCodeText(t, err, 1146, "hung")

	select {
	case err := <-done:
		t.Fatalf("the CREATE SINK on the silent catalog ended before the others were checked: %v", err)
	default:
	}
	silent.Close()
	if err := <-done; err == nil {
		t.Fatal("CREATE SINK on a catalog that hung up succeeded")
	}
	mustExec(t, db, "CREATE SINK hung INTO ICEBERG 'ns.hung' (id BIGINT NOT NULL)")
}

// sinkStatusNames returns the sinks SHOW SINK STATUS lists.
func sinkStatusNames(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SHOW SINK STATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols)) // Sink, Health, ..., Error (6), then maintenance's
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if name, health := vals[0].String, vals[1].String; health != "healthy" {
			t.Fatalf("SHOW SINK STATUS: %s is %s: %s", name, health, vals[6].String)
		}
		out = append(out, vals[0].String)
	}
	return out
}
