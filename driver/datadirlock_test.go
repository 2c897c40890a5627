package driver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/planner"
)

// TestDataDirHeldElsewhere: two sql.DBs of one data directory share its
// engine, so they may be open at once; a data directory another engine
// holds (here one of this process, as another process's would be) is
// refused on the first connection with ErrDataDirInUse, not opened twice.
func TestDataDirHeldElsewhere(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := openDB(t, dir), openDB(t, dir)
	mustExec(t, a, createOrders)
	mustExec(t, b, "INSERT INTO orders VALUES (1, 1.5, 'eu')")

	held := t.TempDir()
	e, err := planner.Open(ctx, planner.Options{DataDir: held})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	err = openDB(t, held).PingContext(ctx)
	if !errors.Is(err, planner.ErrDataDirInUse) || !strings.Contains(err.Error(), held) {
		t.Fatalf("Ping of a held data directory: %v, want ErrDataDirInUse naming %s", err, held)
	}
}
