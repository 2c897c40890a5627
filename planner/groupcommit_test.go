package planner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// groupFormats are the CREATE SINK targets the group commit tests run on.
var groupFormats = []struct{ name, into string }{
	{"delta", "DELTA 'lake/ev'"},
	{"iceberg", "ICEBERG 'db.ev'"},
}

// historyRow is one row of SHOW SINK HISTORY that matters here.
type historyRow struct {
	version, epoch, rows int64
	op                   string
}

func sinkHistory(t *testing.T, te *testEngine, s *Session, sink string) []historyRow {
	t.Helper()
	var out []historyRow
	for _, r := range te.rows(s, "SHOW SINK HISTORY "+sink) {
		h := historyRow{op: fmt.Sprint(r[2])}
		h.version, _ = r[0].(int64)
		h.epoch, _ = r[4].(int64)
		added, _ := r[5].(int64)
		removed, _ := r[6].(int64)
		h.rows = added - removed // auto-compaction adds what it removes
		out = append(out, h)
	}
	return out
}

// While a commit of the sink is in flight (here: the write lock is held
// as a commit holds it), the COMMITs that arrive wait, then land together
// as one table version whose epoch is the highest of theirs.
func TestGroupCommitOneVersion(t *testing.T) {
	for _, f := range groupFormats {
		t.Run(f.name, func(t *testing.T) {
			te := openTestEngine(t, t.TempDir())
			s := te.session()
			te.exec(s, "CREATE SINK ev INTO "+f.into+" (id BIGINT NOT NULL, v VARCHAR(8))")
			te.exec(s, "INSERT INTO ev VALUES (0, 'first')")
			before := sinkHistory(t, te, s, "ev")
			h, _ := te.e.lookup("ev")
			if err := h.acquire(context.Background()); err != nil {
				t.Fatal(err)
			}
			const n = 8
			errs := make(chan error, n)
			for i := 1; i <= n; i++ {
				go func() {
					_, err := te.e.Exec(context.Background(), te.session(), fmt.Sprintf("INSERT INTO ev VALUES (%d, 'g')", i))
					errs <- err
				}()
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				h.group.mu.Lock()
				waiting := len(h.group.queue)
				h.group.mu.Unlock()
				if waiting == n {
					break
				}
				if time.Now().After(deadline) {
					h.release()
					t.Fatalf("%d COMMITs wait for the sink, want %d", waiting, n)
				}
				time.Sleep(time.Millisecond)
			}
			h.release()
			for range n {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			after := sinkHistory(t, te, s, "ev")
			if len(after) != len(before)+1 {
				t.Fatalf("history grew from %d to %d versions, want one version for the group:\n%+v", len(before), len(after), after)
			}
			if got, want := after[0], before[0].epoch+n; got.epoch != want || got.rows != n {
				t.Errorf("group version: epoch %d rows %d, want epoch %d (the highest of the group) and %d rows", got.epoch, got.rows, want, n)
			}
			if got := te.rows(s, "SELECT count(*), count(DISTINCT id) FROM ev"); !cmp.Equal(got, [][]any{{int64(n + 1), int64(n + 1)}}) {
				t.Errorf("rows after the group: %v", got)
			}
			// The next transaction takes the epoch after the group's.
			te.exec(s, "INSERT INTO ev VALUES (100, 'next')")
			if got := sinkHistory(t, te, s, "ev")[0].epoch; got != before[0].epoch+n+1 {
				t.Errorf("epoch after the group: %d, want %d", got, before[0].epoch+n+1)
			}
		})
	}
}

// txnOutcome is what one transaction of the concurrency test came to.
type txnOutcome int

const (
	committed  txnOutcome = iota
	rolledBack            // ROLLBACK, or the session closed before COMMIT
	unknown               // the COMMIT's context ended: all of it or nothing
	replayed              // an explicit epoch the table held already
)

// N sessions run M transactions each on one append sink, committed, rolled
// back, abandoned by closing the session, or with their COMMIT cancelled
// mid-flight; one more session names its epochs. Every acknowledged row is
// there once, nothing rolled back is, a cancelled transaction is there
// whole or not at all, the versions are contiguous with rising epochs, and
// a replay of every explicit epoch that landed is skipped.
func TestConcurrentTransactionsGroupCommit(t *testing.T) {
	const sessions, txns = 8, 12
	for _, f := range groupFormats {
		t.Run(f.name, func(t *testing.T) {
			te := openTestEngine(t, t.TempDir())
			admin := te.session()
			te.exec(admin, "CREATE SINK ev INTO "+f.into+" (id BIGINT NOT NULL, v VARCHAR(16))")
			var mu sync.Mutex
			outcomes := map[int][]int64{} // outcome -> txn keys
			txnRows := map[int64][]int64{}
			explicit := map[int64][]int64{} // landed explicit epoch -> its ids
			record := func(key int64, o txnOutcome, ids []int64) {
				mu.Lock()
				defer mu.Unlock()
				outcomes[int(o)] = append(outcomes[int(o)], key)
				txnRows[key] = ids
			}
			var wg sync.WaitGroup
			for w := range sessions + 1 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 7))
					s := te.e.NewSession()
					defer func() { s.Close() }()
					exec := func(ctx context.Context, q string) (*Result, error) { return te.e.Exec(ctx, s, q) }
					for m := range txns {
						key := int64(w*1000 + m*10)
						named := w == sessions // the last session names its epochs
						epoch := int64(1_000_000 + m)
						if named {
							if _, err := exec(context.Background(), fmt.Sprintf("SET lakesql_epoch = %d", epoch)); err != nil {
								t.Error(err)
								return
							}
						}
						if _, err := exec(context.Background(), "BEGIN"); err != nil {
							t.Error(err)
							return
						}
						var ids []int64
						for k := range 1 + rng.IntN(3) {
							id := key + int64(k)
							if _, err := exec(context.Background(), fmt.Sprintf("INSERT INTO ev VALUES (%d, 'w%d')", id, w)); err != nil {
								t.Errorf("INSERT %d: %v", id, err)
								return
							}
							ids = append(ids, id)
						}
						switch p := rng.IntN(100); {
						case p < 15:
							if _, err := exec(context.Background(), "ROLLBACK"); err != nil {
								t.Error(err)
								return
							}
							record(key, rolledBack, ids)
						case p < 25 && !named:
							s.Close()
							s = te.e.NewSession()
							record(key, rolledBack, ids)
						case p < 40:
							ctx, cancel := context.WithCancel(context.Background())
							go func() { time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond); cancel() }()
							_, err := exec(ctx, "COMMIT")
							cancel()
							if err != nil {
								// A failed COMMIT ends the transaction; the
								// next statement starts afresh.
								s.Close()
								s = te.e.NewSession()
							}
							record(key, unknown, ids)
						default:
							res, err := exec(context.Background(), "COMMIT")
							if err != nil {
								t.Errorf("COMMIT of %d: %v", key, err)
								return
							}
							switch {
							case len(res.Warnings) > 0 && res.Warnings[0].Code == WarnEpochReplayed:
								record(key, replayed, ids)
							default:
								record(key, committed, ids)
								if named {
									mu.Lock()
									explicit[epoch] = ids
									mu.Unlock()
								}
							}
						}
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			present := map[int64]int{}
			for _, r := range te.rows(admin, "SELECT id FROM ev") {
				present[r[0].(int64)]++
			}
			for id, n := range present {
				if n != 1 {
					t.Errorf("id %d appears %d times", id, n)
				}
			}
			for o, keys := range outcomes {
				for _, key := range keys {
					ids := txnRows[key]
					found := 0
					for _, id := range ids {
						found += min(present[id], 1)
					}
					switch txnOutcome(o) {
					case committed:
						if found != len(ids) {
							t.Errorf("acknowledged transaction %d: %d of its %d rows are there", key, found, len(ids))
						}
					case rolledBack, replayed:
						if found != 0 {
							t.Errorf("transaction %d (outcome %d) left %d rows", key, o, found)
						}
					case unknown:
						if found != 0 && found != len(ids) {
							t.Errorf("cancelled transaction %d: %d of its %d rows are there, want all or none", key, found, len(ids))
						}
					}
					for _, id := range ids {
						delete(present, id)
					}
				}
			}
			if len(present) != 0 {
				t.Errorf("rows no transaction wrote: %v", present)
			}
			if len(outcomes[int(committed)]) == 0 {
				t.Fatal("no transaction committed")
			}
			// Oldest first: versions contiguous (Delta), epochs rising.
			hist := sinkHistory(t, te, admin, "ev")
			sort.Slice(hist, func(i, j int) bool { return hist[i].version < hist[j].version })
			var rows int64
			for i, h := range hist {
				rows += h.rows
				if i == 0 || !strings.EqualFold(h.op, "WRITE") {
					continue
				}
				if f.name == "delta" && h.version != hist[i-1].version+1 {
					t.Errorf("version %d follows %d", h.version, hist[i-1].version)
				}
				if h.epoch <= hist[i-1].epoch {
					t.Errorf("version %d has epoch %d after epoch %d", h.version, h.epoch, hist[i-1].epoch)
				}
			}
			if n := te.rows(admin, "SELECT count(*) FROM ev")[0][0].(int64); rows != n {
				t.Errorf("the history adds %d rows, the table holds %d", rows, n)
			}
			// A replay of an explicit epoch that landed is skipped.
			for e, ids := range explicit {
				te.exec(admin, fmt.Sprintf("SET lakesql_epoch = %d", e))
				res := te.exec(admin, fmt.Sprintf("INSERT INTO ev VALUES (%d, 'replay')", ids[0]))
				if len(res.Warnings) == 0 || res.Warnings[0].Code != WarnEpochReplayed {
					t.Errorf("replay of epoch %d: warnings %v, want it skipped", e, res.Warnings)
				}
			}
			if got := te.rows(admin, "SELECT count(*) FROM ev WHERE v = 'replay'"); !cmp.Equal(got, [][]any{{int64(0)}}) {
				t.Errorf("replayed rows landed: %v", got)
			}
			t.Logf("%s: outcomes committed %d, rolled back %d, cancelled %d, replayed %d; %d versions",
				f.name, len(outcomes[int(committed)]), len(outcomes[int(rolledBack)]), len(outcomes[int(unknown)]),
				len(outcomes[int(replayed)]), len(hist))
		})
	}
}
