package sqlsink

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// orderSchema is the schema the engine tests write: (id, amount, region).
var orderSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// row is one test row; Op is "" for a plain insert.
type row struct {
	Op     string
	ID     int64
	Amount float64
	Region string
}

func (r row) String() string { return fmt.Sprintf("%d|%g|%s", r.ID, r.Amount, r.Region) }

// batch builds an Arrow batch of rows, with an _op column when any row has one.
func batch(t testing.TB, rows ...row) arrow.RecordBatch {
	t.Helper()
	withOp := false
	for _, r := range rows {
		withOp = withOp || r.Op != ""
	}
	fields := orderSchema.Fields()
	if withOp {
		fields = append([]arrow.Field{{Name: OpColumn, Type: arrow.BinaryTypes.String}}, fields...)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	i := 0
	if withOp {
		i = 1
	}
	for _, r := range rows {
		if withOp {
			b.Field(0).(*array.StringBuilder).Append(r.Op)
		}
		b.Field(i).(*array.Int64Builder).Append(r.ID)
		b.Field(i + 1).(*array.Float64Builder).Append(r.Amount)
		b.Field(i + 2).(*array.StringBuilder).Append(r.Region)
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

func TestAppendEpochIsOneVersion(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			s := e.open(e.config("orders"))
			res := e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1.5, Region: "eu"}), batch(t, row{ID: 2, Amount: 2.5, Region: "us"}))
			if res.Skipped || res.Version != e.version(1) || res.Rows != 2 {
				t.Fatalf("result %+v, want version %d with 2 rows", res, e.version(1))
			}
			want := []row{{ID: 1, Amount: 1.5, Region: "eu"}, {ID: 2, Amount: 2.5, Region: "us"}}
			if diff := cmp.Diff(want, e.rows()); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
			m := s.Metrics()
			if m.EpochsCommitted != 1 || m.RowsWritten != 2 || m.LastVersion != e.version(1) {
				t.Fatalf("metrics %+v", m)
			}
		})
	}
}

func TestRollbackLeavesNothing(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			cfg := e.config("orders")
			cfg.FlushRows = 1 // stage a file at every write
			s := e.open(cfg)
			ctx := context.Background()
			e.epoch(s, 1, batch(t, row{ID: 1, Region: "eu"}))
			committed := e.parquetFiles()
			if err := s.BeginEpoch(ctx, 2); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				if err := s.Write(ctx, batch(t, row{ID: int64(10 + i)})); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.PreCommit(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if got := len(e.parquetFiles()); got <= len(committed) {
				t.Fatalf("nothing staged: %d files", got)
			}
			if diff := cmp.Diff([]row{{ID: 1, Region: "eu"}}, e.rows()); diff != "" {
				t.Fatalf("staged rows visible before commit (-want +got):\n%s", diff)
			}
			if err := s.RollbackEpoch(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(committed, e.parquetFiles()); diff != "" {
				t.Fatalf("files left after rollback (-want +got):\n%s", diff)
			}
			// The epoch can be begun again, and commits only its new rows.
			e.epoch(s, 2, batch(t, row{ID: 20}))
			if diff := cmp.Diff([]row{{ID: 1, Region: "eu"}, {ID: 20}}, e.rows()); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplayedEpochIsSkipped(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			s := e.open(e.config("orders"))
			e.epoch(s, 5, batch(t, row{ID: 1}))
			s.Close()

			again := e.open(e.config("orders"))
			if last, ok := again.LastCommittedEpoch(); !ok || last != 5 {
				t.Fatalf("recovered epoch %d %v, want 5", last, ok)
			}
			for _, n := range []int64{3, 5} {
				res := e.epoch(again, n, batch(t, row{ID: 99}))
				if !res.Skipped || res.Rows != 0 {
					t.Fatalf("replay of %d: %+v, want skipped", n, res)
				}
			}
			if diff := cmp.Diff([]row{{ID: 1}}, e.rows()); diff != "" {
				t.Fatalf("rows after replay (-want +got):\n%s", diff)
			}
			if m := again.Metrics(); m.EpochsSkipped != 2 || m.Commits != 0 {
				t.Fatalf("metrics %+v", m)
			}
			// Another writer id does not share the record.
			other := e.config("orders")
			other.WriterID = "svc-b"
			b := e.open(other)
			if res := e.epoch(b, 5, batch(t, row{ID: 7})); res.Skipped {
				t.Fatal("a different writer's epoch 5 was skipped")
			}
		})
	}
}

func TestBadBatchKeepsTheRest(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			s := e.open(e.config("orders"))
			ctx := context.Background()
			if err := s.BeginEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, batch(t, row{ID: 1})); err != nil {
				t.Fatal(err)
			}
			err := s.Write(ctx, batch(t, row{Op: "I", ID: 2}, row{Op: "X", ID: 3}))
			var opErr *OpError
			if !errors.As(err, &opErr) || opErr.Row != 1 || opErr.Value != "X" {
				t.Fatalf("bad _op: %v", err)
			}
			if err := s.Write(ctx, batch(t, row{Op: "D", ID: 1})); !errors.Is(err, ErrBadOp) {
				t.Fatalf("delete in append mode: %v", err)
			}
			if err := s.PreCommit(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CommitEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]row{{ID: 1}}, e.rows()); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpsertCollapsesAndRewrites(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			cfg := e.config("orders")
			cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
			s := e.open(cfg)
			e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2}, row{ID: 3, Amount: 3}))
			e.epoch(s, 2, batch(t, row{ID: 10, Amount: 10}))
			ctx := context.Background()
			scanner := e.provider.(catalogadapter.Scanner)
			_, before, err := scanner.Files(ctx, cfg.Table)
			if err != nil {
				t.Fatal(err)
			}
			res := e.epoch(s, 3,
				batch(t, row{Op: "U", ID: 2, Amount: 20}, row{Op: "D", ID: 3}, row{Op: "I", ID: 4, Amount: 4}),
				batch(t, row{Op: "I", ID: 4, Amount: 40}, row{Op: "-U", ID: 5}, row{Op: "D", ID: 4}, row{Op: "c", ID: 4, Amount: 400}))
			if res.Version != e.version(3) {
				t.Fatalf("upsert epoch landed as version %d, want %d", res.Version, e.version(3))
			}
			want := []row{{ID: 1, Amount: 1}, {ID: 2, Amount: 20}, {ID: 4, Amount: 400}, {ID: 10, Amount: 10}}
			if diff := cmp.Diff(want, e.rows()); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
			// Epoch 2's file holds none of the keys: pruning must keep it as
			// it is. A row delta (Iceberg) rewrites no file at all.
			_, after, err := scanner.Files(ctx, cfg.Table)
			if err != nil {
				t.Fatal(err)
			}
			live := map[string]bool{}
			for _, f := range after {
				live[f.Path] = true
			}
			kept := 0
			for _, f := range before {
				if live[f.Path] {
					kept++
				}
			}
			switch {
			case l.upsertRewrites && (kept != 1 || len(after) != 2):
				t.Fatalf("%d of %d files kept, %d live after the merge; want epoch 2's file kept and epoch 1's rewritten", kept, len(before), len(after))
			case !l.upsertRewrites && kept != len(before):
				t.Fatalf("%d of %d files kept after a row delta; want all", kept, len(before))
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			for name, mutate := range map[string]func(*Config){
				"no name":        func(c *Config) { c.Name = "" },
				"upsert no key":  func(c *Config) { c.Mode = ModeUpsert },
				"bad mode":       func(c *Config) { c.Mode = "merge" },
				"bad delivery":   func(c *Config) { c.Delivery = "twice" },
				"negative flush": func(c *Config) { c.FlushRows = -1 },
			} {
				cfg := e.config("orders")
				mutate(&cfg)
				if _, err := New(cfg); !errors.Is(err, ErrConfig) {
					t.Errorf("%s: %v, want ErrConfig", name, err)
				}
			}
			cfg := e.config("orders")
			cfg.Mode, cfg.Key = ModeUpsert, []string{"nope"}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Open(context.Background()); !errors.Is(err, ErrConfig) {
				t.Fatalf("unknown key column: %v", err)
			}
			if h := s.Health(); h.Status != Unhealthy {
				t.Fatalf("health after failed open: %+v", h)
			}
		})
	}
}

// TestTargetFileSize (Delta only: it reads the Delta table's metadata):
// the sink's TargetFileSize becomes the table property
// delta.targetFileSize, and the files the sink writes follow it.
func TestTargetFileSize(t *testing.T) {
	e := newEnv(t)
	cfg := e.config("sized")
	cfg.TargetFileSize = 1 << 20
	s := e.open(cfg)
	rows := make([]row, 600_000)
	for i := range rows {
		// Distinct strings, so that the files do not compress to nothing.
		rows[i] = row{ID: int64(i), Amount: float64(i) / 7, Region: fmt.Sprintf("region-%x-%d", i*2654435761, i)}
	}
	e.epoch(s, 1, batch(t, rows...))
	if files := e.parquetFiles(); len(files) < 2 {
		t.Errorf("%d data file(s) for ~20 MB of rows with a 1 MiB target, want several", len(files))
	}
	store, err := delta.NewLocalStorage(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := delta.NewTable(store).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Metadata.Configuration["delta.targetFileSize"]; got != "1048576" {
		t.Errorf("delta.targetFileSize = %q, want 1048576", got)
	}
	if got := len(e.rows()); got != len(rows) {
		t.Errorf("%d rows read back, want %d", got, len(rows))
	}
}
