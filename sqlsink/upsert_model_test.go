package sqlsink

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"
)

// The upsert model test drives an upsert sink with random changelogs and
// checks the table after every commit against a plain Go model of the same
// changelog: a map from key to row, where within an epoch the last arrival
// for a key wins and a delete removes the key.

var (
	upsertSeed   = flag.Uint64("upsert.seed", 0, "TestUpsertModel: the first random seed after the fixed ones (0: from the clock)")
	upsertSeeds  = flag.Int("upsert.seeds", 1, "TestUpsertModel: how many random seeds to run after the fixed ones")
	upsertEpochs = flag.Int("upsert.epochs", 15, "TestUpsertModel: epochs per run")
)

var (
	upsertOps  = []string{"I", "U", "+U", "r", "c"}
	deleteOps  = []string{"D", "-D", "U-", "-U"}
	regions    = []string{"eu", "us", "ap"}
	upsertKeys = 41 // ids 0..40
)

// modelKey is a row's key: Region is part of it only with a composite key.
type modelKey struct {
	ID     int64
	Region string
}

// upsertModel is the expected table.
type upsertModel struct {
	composite bool
	rows      map[modelKey]row
	stats     upsertStats
}

// upsertStats counts what the committed changelogs did, to show the
// random runs cover what they should.
type upsertStats struct {
	Inserts, Replaces, Deletes, AbsentDeletes int
	Moves, MovesByU                           int // key id: an upsert to another region (partition)
	Rollbacks, RollbacksAfterPreCommit        int
	AbsentOnlyEpochs, EmptyEpochs, Replays    int
}

func (m *upsertModel) key(r row) modelKey {
	if m.composite {
		return modelKey{r.ID, r.Region}
	}
	return modelKey{ID: r.ID}
}

// apply applies an epoch's changelog in arrival order, which is the same
// as collapsing it per key, last arrival winning.
func (m *upsertModel) apply(batches [][]row) {
	for _, b := range batches {
		for _, r := range b {
			old, had := m.rows[m.key(r)]
			if op, _ := ParseOp(r.Op); r.Op != "" && op == OpDelete {
				if had {
					m.stats.Deletes++
				} else {
					m.stats.AbsentDeletes++
				}
				delete(m.rows, m.key(r))
				continue
			}
			switch {
			case !had:
				m.stats.Inserts++
			case old.Region != r.Region:
				m.stats.Moves++
				if r.Op == "U" {
					m.stats.MovesByU++
				}
				fallthrough
			default:
				m.stats.Replaces++
			}
			r.Op = ""
			m.rows[m.key(r)] = r
		}
	}
}

func (m *upsertModel) sorted() []row {
	out := make([]row, 0, len(m.rows))
	for _, r := range m.rows {
		out = append(out, r)
	}
	sortRows(out)
	return out
}

func (m *upsertModel) liveKeys() []modelKey {
	keys := make([]modelKey, 0, len(m.rows))
	for k := range m.rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].ID != keys[j].ID {
			return keys[i].ID < keys[j].ID
		}
		return keys[i].Region < keys[j].Region
	})
	return keys
}

// sortRows orders rows by id, region, amount: env.rows orders by id and
// amount only, which leaves composite-key rows in no fixed order.
func sortRows(rs []row) {
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.Amount < b.Amount
	})
}

// upsertGen draws changelogs.
type upsertGen struct {
	rng   *rand.Rand
	model *upsertModel
}

func (g *upsertGen) pick(s []string) string { return s[g.rng.IntN(len(s))] }

func (g *upsertGen) amount() float64 { return float64(g.rng.IntN(100000)) / 100 }

// change draws one changelog row (or two: a -U/+U pair that moves a
// composite key to another region).
func (g *upsertGen) change(live []modelKey) []row {
	existing := len(live) > 0 && g.rng.IntN(2) == 0
	var k modelKey
	if existing {
		k = live[g.rng.IntN(len(live))]
	} else {
		k = modelKey{ID: int64(g.rng.IntN(upsertKeys)), Region: g.pick(regions)}
	}
	region := k.Region
	if !g.model.composite {
		region = g.pick(regions) // with key id, an upsert may move the key to another partition
	}
	switch n := g.rng.IntN(10); {
	case n < 4 && existing || n < 2:
		return []row{{Op: g.pick(deleteOps), ID: k.ID, Amount: g.amount(), Region: region}}
	case n < 5 && existing && g.model.composite:
		to := g.pick(regions)
		return []row{
			{Op: g.pick([]string{"U-", "-U"}), ID: k.ID, Amount: g.amount(), Region: region},
			{Op: g.pick([]string{"+U", "U"}), ID: k.ID, Amount: g.amount(), Region: to},
		}
	}
	return []row{{Op: g.pick(upsertOps), ID: k.ID, Amount: g.amount(), Region: region}}
}

// epoch draws an epoch's batches. Rows are drawn against the model as it
// stands before the epoch, so deletes hit live keys about half the time.
func (g *upsertGen) epoch() [][]row {
	live := g.model.liveKeys()
	batches := make([][]row, 1+g.rng.IntN(4))
	for i := range batches {
		n := 1 + g.rng.IntN(10)
		var b []row
		for len(b) < n {
			b = append(b, g.change(live)...)
		}
		if g.rng.IntN(10) == 0 {
			// A batch without _op: every row upserts.
			for j := range b {
				b[j].Op = ""
			}
		}
		batches[i] = b
	}
	return batches
}

// absentDeletes draws an epoch that only deletes keys the table does not hold.
func (g *upsertGen) absentDeletes() [][]row {
	var b []row
	for len(b) < 1+g.rng.IntN(6) {
		k := modelKey{ID: int64(g.rng.IntN(upsertKeys + 20)), Region: g.pick(regions)}
		if !g.model.composite {
			k.Region = ""
		}
		if _, ok := g.model.rows[k]; ok {
			continue
		}
		region := k.Region
		if region == "" {
			region = g.pick(regions)
		}
		b = append(b, row{Op: g.pick(deleteOps), ID: k.ID, Amount: g.amount(), Region: region})
	}
	return [][]row{b}
}

type upsertCase struct {
	name      string
	key       []string
	partition []string
}

func TestUpsertModel(t *testing.T) {
	cases := []upsertCase{
		{"key id", []string{"id"}, nil},
		{"key id, partitioned by region", []string{"id"}, []string{"region"}},
		{"key id+region, partitioned by region", []string{"id", "region"}, []string{"region"}},
		{"key region+id, partitioned by region", []string{"region", "id"}, []string{"region"}},
	}
	extra := *upsertSeed
	if extra == 0 {
		extra = uint64(time.Now().UnixNano())
	}
	seeds := []uint64{1, 2}
	for i := 0; i < *upsertSeeds; i++ {
		seeds = append(seeds, extra+uint64(i))
	}
	t.Logf("seeds %v (rerun the random ones with -upsert.seed=%d -upsert.seeds=%d)", seeds, extra, *upsertSeeds)
	for i, l := range lakes {
		// The random seeds run on the first lake only, to keep the
		// package's time: the fixed ones cover each lake's upserts.
		lakeSeeds := seeds
		if i > 0 {
			lakeSeeds = seeds[:2]
		}
		t.Run(l.name, func(t *testing.T) {
			for _, c := range cases {
				var total upsertStats
				for _, seed := range lakeSeeds {
					t.Run(fmt.Sprintf("%s/seed=%d", c.name, seed), func(t *testing.T) {
						st := runUpsertModel(t, l, c, seed, int64(*upsertEpochs))
						total.Inserts += st.Inserts
						total.MovesByU += st.MovesByU
						total.Deletes += st.Deletes
						total.Rollbacks += st.Rollbacks
						total.AbsentOnlyEpochs += st.AbsentOnlyEpochs
						total.EmptyEpochs += st.EmptyEpochs
					})
				}
				if t.Failed() {
					return
				}
				// The seeds are fixed but for one: make sure they cover the
				// cases the test is for.
				if c.partition != nil && !(len(c.key) > 1) && total.MovesByU == 0 {
					t.Errorf("%s, %s: no key moved to another partition by a U", l.name, c.name)
				}
				if total.Deletes == 0 || total.Rollbacks == 0 || total.AbsentOnlyEpochs == 0 || total.EmptyEpochs == 0 {
					t.Errorf("%s, %s: the seeds miss a kind of epoch: %+v", l.name, c.name, total)
				}
			}
		})
	}
}

func runUpsertModel(t *testing.T, l lake, c upsertCase, seed uint64, epochs int64) upsertStats {
	e := newLakeEnv(t, l)
	cfg := e.config("orders")
	cfg.Mode, cfg.Key, cfg.PartitionColumns = ModeUpsert, c.key, c.partition
	cfg.WriterID = "model"
	s := e.open(cfg)
	ctx := context.Background()
	model := &upsertModel{composite: len(c.key) > 1, rows: map[modelKey]row{}}
	g := &upsertGen{rng: rand.New(rand.NewPCG(seed, 0x75707365)), model: model}
	commits, version := int64(0), int64(0)
	var log []string // what happened, for failure messages

	check := func(what string) {
		t.Helper()
		got := e.rows()
		sortRows(got)
		want := model.sorted()
		if len(want) == 0 {
			want = nil
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d, after %s: table rows (-model +table):\n%s\nhistory:\n%s", seed, what, diff, strings.Join(log, "\n"))
		}
	}
	write := func(n int64, batches [][]row) {
		t.Helper()
		for _, b := range batches {
			if err := s.Write(ctx, batch(t, b...)); err != nil {
				t.Fatalf("seed %d: write to epoch %d: %v", seed, n, err)
			}
		}
	}
	commit := func(n int64, what string) {
		t.Helper()
		if err := s.PreCommit(ctx, n); err != nil {
			t.Fatalf("seed %d: precommit %d (%s): %v", seed, n, what, err)
		}
		res, err := s.CommitEpoch(ctx, n)
		if err != nil {
			t.Fatalf("seed %d: commit %d (%s): %v\nhistory:\n%s", seed, n, what, err, strings.Join(log, "\n"))
		}
		commits++
		if want := e.version(commits); res.Skipped || res.Version != want {
			t.Fatalf("seed %d: epoch %d (%s): %+v, want version %d", seed, n, what, res, want)
		}
		version = res.Version
	}

	for n := int64(1); n <= epochs; n++ {
		switch roll := g.rng.IntN(20); {
		case roll < 3:
			// An epoch rolled back, before or after PreCommit: its rows must
			// not count. Then the same epoch number is retried.
			batches := g.epoch()
			log = append(log, fmt.Sprintf("epoch %d rolled back: %v", n, batches))
			if err := s.BeginEpoch(ctx, n); err != nil {
				t.Fatal(err)
			}
			write(n, batches)
			model.stats.Rollbacks++
			if g.rng.IntN(2) == 0 {
				model.stats.RollbacksAfterPreCommit++
				if err := s.PreCommit(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.RollbackEpoch(ctx, n); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("rollback of epoch %d", n))
			n-- // retry the epoch number
			continue
		case roll < 5:
			batches := g.absentDeletes()
			log = append(log, fmt.Sprintf("epoch %d, deletes of absent keys: %v", n, batches))
			if err := s.BeginEpoch(ctx, n); err != nil {
				t.Fatal(err)
			}
			write(n, batches)
			commit(n, "deletes of absent keys")
			model.stats.AbsentOnlyEpochs++
			model.apply(batches)
			check(fmt.Sprintf("epoch %d (deletes of absent keys)", n))
		case roll < 7:
			log = append(log, fmt.Sprintf("epoch %d empty", n))
			if err := s.BeginEpoch(ctx, n); err != nil {
				t.Fatal(err)
			}
			if g.rng.IntN(2) == 0 {
				write(n, [][]row{nil})
			}
			commit(n, "empty")
			model.stats.EmptyEpochs++
			check(fmt.Sprintf("empty epoch %d", n))
		default:
			batches := g.epoch()
			log = append(log, fmt.Sprintf("epoch %d: %v", n, batches))
			if err := s.BeginEpoch(ctx, n); err != nil {
				t.Fatal(err)
			}
			write(n, batches)
			commit(n, "changelog")
			model.apply(batches)
			check(fmt.Sprintf("epoch %d", n))
		}
		if g.rng.IntN(6) == 0 {
			// Restart the writer and replay the last epoch with other
			// rows: it must be skipped.
			log = append(log, fmt.Sprintf("reopen, replay of epoch %d", n))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = e.open(cfg)
			if last, ok := s.LastCommittedEpoch(); !ok || last != n {
				t.Fatalf("seed %d: recovered epoch %d %v, want %d", seed, last, ok, n)
			}
			if res := e.epoch(s, n, replayBatch(t, g)); !res.Skipped {
				t.Fatalf("seed %d: replay of epoch %d was written: %+v", seed, n, res)
			}
			check(fmt.Sprintf("replay of epoch %d", n))
			model.stats.Replays++
		}
	}
	t.Logf("%d epochs, %d commits (last version %d), %d rows in the table; %+v", epochs, commits, version, len(model.rows), model.stats)
	return model.stats
}

func replayBatch(t *testing.T, g *upsertGen) arrow.RecordBatch {
	return batch(t, row{Op: "D", ID: 0, Region: "eu"}, row{Op: "I", ID: 1, Amount: g.amount(), Region: "us"})
}
