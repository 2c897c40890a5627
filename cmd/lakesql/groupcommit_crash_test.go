package main

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGroupCommitSurvivesKill sends concurrent appending transactions of
// three rows each to a real `lakesql serve`, so that their COMMITs meet in
// group commits, and kills the server with SIGKILL in the middle of them,
// several times. After each restart: every transaction whose COMMIT
// returned OK is there with its three rows, every other one is there
// whole or not at all (a group lands as one version or not), no row is
// there twice, and the Delta log's versions have no gap.
func TestGroupCommitSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	bin := buildLakesql(t)
	data := t.TempDir()
	env := []string{"LAKESQL_ROOT_PASSWORD=pw"}
	open := func(p *serveProcess) *sql.DB {
		db, err := sql.Open("mysql", fmt.Sprintf("root:pw@tcp(%s)/lakesql", p.addr))
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	p := startServe(t, bin, env, "--listen", "127.0.0.1:0", "--data", data)
	db := open(p)
	if _, err := db.Exec("CREATE SINK g INTO DELTA 'lake/g' (txn BIGINT NOT NULL, part INT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	const clients, rounds = 8, 6
	acked := map[int64]bool{}     // COMMIT returned OK
	attempted := map[int64]bool{} // sent at least its first INSERT
	var mu sync.Mutex
	next := int64(0)
	for round := range rounds {
		db := open(p)
		db.SetMaxOpenConns(clients)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					mu.Lock()
					id := next
					next++
					attempted[id] = true
					mu.Unlock()
					if transact(db, id) == nil {
						mu.Lock()
						acked[id] = true
						mu.Unlock()
					}
				}
			})
		}
		time.Sleep(time.Duration(200+rand.IntN(400)) * time.Millisecond)
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.cmd.Wait()
		close(stop)
		wg.Wait()
		db.Close()

		p = startServe(t, bin, env, "--listen", "127.0.0.1:0", "--data", data)
		db = open(p)
		parts := map[int64][]int{}
		rows, err := db.Query("SELECT txn, part FROM g")
		if err != nil {
			t.Fatalf("round %d: read after restart: %v", round, err)
		}
		for rows.Next() {
			var txn int64
			var part int
			if err := rows.Scan(&txn, &part); err != nil {
				t.Fatal(err)
			}
			parts[txn] = append(parts[txn], part)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		db.Close()
		mu.Lock()
		for id := range acked {
			if len(parts[id]) == 0 {
				t.Errorf("round %d: transaction %d committed (OK) but is gone after the kill", round, id)
			}
		}
		for id, ps := range parts {
			slices.Sort(ps)
			if !attempted[id] {
				t.Errorf("round %d: transaction %d was never sent but has rows %v", round, id, ps)
			}
			if !slices.Equal(ps, []int{0, 1, 2}) {
				t.Errorf("round %d: transaction %d has parts %v, want [0 1 2] (whole, once)", round, id, ps)
			}
		}
		t.Logf("round %d: %d transactions sent, %d acknowledged, %d in the table, %d log versions",
			round, len(attempted), len(acked), len(parts), logVersions(t, filepath.Join(data, "lake/g/_delta_log")))
		mu.Unlock()
		if t.Failed() {
			return
		}
	}
	if code, _ := p.stop(t); code != 0 {
		t.Errorf("exit code %d after SIGTERM\nstderr:\n%s", code, p.stderr)
	}
}

// transact writes transaction id as three one-row INSERTs and a COMMIT.
func transact(db *sql.DB, id int64) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	for part := range 3 {
		if _, err := tx.Exec("INSERT INTO g VALUES (?, ?)", id, part); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// logVersions counts the Delta log's commit files and fails the test when
// their versions have a gap.
func logVersions(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || len(name) != 20 {
			continue
		}
		var v int64
		if _, err := fmt.Sscanf(name, "%d", &v); err != nil {
			continue
		}
		versions = append(versions, v)
	}
	slices.Sort(versions)
	for i, v := range versions {
		if v != int64(i) {
			t.Errorf("log versions %v have a gap at %d", versions, i)
			break
		}
	}
	return len(versions)
}
