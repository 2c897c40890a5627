package providertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
)

// checks are the promises of the contract, one subtest each.
var checks = []struct {
	name string
	run  func(t *testing.T, s *suite)
}{
	{"TableSpecOfNewTable", tableSpecOfNewTable},
	{"StageThenCommit", stageThenCommit},
	{"DiscardRemovesStagedFiles", discardRemovesStagedFiles},
	{"EpochRecordedIsSkipped", epochRecordedIsSkipped},
	{"LastEpochPerWriter", lastEpochPerWriter},
	{"RemovesTakeFilesOut", removesTakeFilesOut},
	{"NoNewDataSinceConflicts", noNewDataSinceConflicts},
	{"UnknownRequirementRefused", unknownRequirementRefused},
	{"ConcurrentCommitsOneWinnerPerVersion", concurrentCommits},
	{"InvalidIdentifiers", invalidIdentifiers},
	{"MissingTable", missingTable},
}

// tableSpecOfNewTable: the spec of a table just created has its columns,
// in order, with their nullability, no partition fields, and the version
// a new table starts at.
func tableSpecOfNewTable(t *testing.T, s *suite) {
	spec, err := s.p.TableSpec(context.Background(), s.id)
	if err != nil {
		t.Fatal(err)
	}
	want := Schema()
	if spec.Schema == nil || spec.Schema.NumFields() != want.NumFields() {
		t.Fatalf("schema %v, want %v", spec.Schema, want)
	}
	for i, f := range want.Fields() {
		got := spec.Schema.Field(i)
		if got.Name != f.Name || !arrow.TypeEqual(got.Type, f.Type) || got.Nullable != f.Nullable {
			t.Errorf("column %d is %v, want %v", i, got, f)
		}
	}
	if n := len(spec.PartitionSpec.Fields); n != 0 {
		t.Errorf("%d partition fields, want none", n)
	}
	if spec.Version != s.opts.CreatedVersion {
		t.Errorf("version %d, want %d", spec.Version, s.opts.CreatedVersion)
	}
	// TableSpec is idempotent.
	again, err := s.p.TableSpec(context.Background(), s.id)
	if err != nil || again.Version != spec.Version || !again.Schema.Equal(spec.Schema) {
		t.Errorf("second TableSpec %+v %v, want %+v", again, err, spec)
	}
}

// stageThenCommit: staged rows are invisible, and the one commit that
// takes their receipt makes them visible as a new version.
func stageThenCommit(t *testing.T, s *suite) {
	before := s.version(t)
	r := s.stage(t, 0, 3)
	if r.Rows != 3 || r.Files < 1 || r.Bytes <= 0 {
		t.Errorf("receipt counts %+v, want 3 rows in at least one file", r)
	}
	if s.wantIDs(t); s.version(t) != before {
		t.Fatalf("staging moved the version from %d to %d", before, s.version(t))
	}
	out := s.commit(t, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
	if out.Skipped || out.Version == before {
		t.Fatalf("commit %+v, want a new version after %d", out, before)
	}
	if v := s.version(t); v != out.Version {
		t.Errorf("TableSpec version %d, commit reported %d", v, out.Version)
	}
	s.wantIDs(t, [2]int64{0, 3})
	// With nothing to record, nothing is written.
	if out := s.commit(t, nil, catalogadapter.CommitOptions{Epoch: -1}); out.Skipped || s.version(t) != out.Version {
		t.Errorf("empty commit %+v moved the table to %d", out, s.version(t))
	}
	s.wantIDs(t, [2]int64{0, 3})
}

// discardRemovesStagedFiles: Discard deletes the files of receipts never
// committed, and keeps those a landed commit references. The sink discards
// a skipped epoch's receipts, and a restarted sink a killed run's journal,
// which may name a commit that landed.
func discardRemovesStagedFiles(t *testing.T, s *suite) {
	ctx := context.Background()
	empty := s.stored(t)
	committed := s.stage(t, 0, 2)
	s.commit(t, []catalogadapter.Receipt{committed}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
	kept := s.stored(t)
	if len(kept) <= len(empty) {
		t.Fatalf("stored files %v after a commit, %v before", kept, empty)
	}
	replay := s.stage(t, 10, 12)
	if n := len(s.stored(t)); n != len(kept)+replay.Files {
		t.Fatalf("%d stored files after staging %d, want %d", n, replay.Files, len(kept)+replay.Files)
	}
	if out := s.commit(t, []catalogadapter.Receipt{replay}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); !out.Skipped {
		t.Fatalf("replay of epoch 1: %+v, want skipped", out)
	}
	if err := s.p.Discard(ctx, s.id, []catalogadapter.Receipt{replay, committed}); err != nil {
		t.Fatal(err)
	}
	if got := s.stored(t); !slices.Equal(got, kept) {
		t.Errorf("stored files after discard %v, want %v", got, kept)
	}
	s.wantIDs(t, [2]int64{0, 2})
	if err := s.p.Discard(ctx, s.id, nil); err != nil {
		t.Errorf("discarding nothing: %v", err)
	}
}

// epochRecordedIsSkipped: a commit of an epoch the table holds for the
// writer, or of an older one, is skipped and writes nothing; an epoch
// without files still records itself.
func epochRecordedIsSkipped(t *testing.T, s *suite) {
	landed := s.commit(t, []catalogadapter.Receipt{s.stage(t, 0, 3)}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 5})
	for _, epoch := range []int64{5, 4, 0} {
		out := s.commit(t, []catalogadapter.Receipt{s.stage(t, 100, 103)}, catalogadapter.CommitOptions{WriterID: "w", Epoch: epoch})
		if !out.Skipped || out.Version != landed.Version {
			t.Errorf("epoch %d again: %+v, want skipped at version %d", epoch, out, landed.Version)
		}
	}
	if v := s.version(t); v != landed.Version {
		t.Errorf("version %d after skipped commits, want %d", v, landed.Version)
	}
	s.wantIDs(t, [2]int64{0, 3})
	// An empty epoch still records itself, so its replay is skipped too.
	empty := s.commit(t, nil, catalogadapter.CommitOptions{WriterID: "w", Epoch: 6})
	if empty.Skipped || empty.Version == landed.Version {
		t.Errorf("empty epoch: %+v, want a new version", empty)
	}
	if e, ok, err := s.p.LastEpoch(context.Background(), s.id, "w"); err != nil || !ok || e != 6 {
		t.Errorf("LastEpoch after the empty epoch = %d %v %v, want 6", e, ok, err)
	}
	if out := s.commit(t, nil, catalogadapter.CommitOptions{WriterID: "w", Epoch: 6}); !out.Skipped {
		t.Errorf("empty epoch again: %+v, want skipped", out)
	}
}

// lastEpochPerWriter: LastEpoch reports each writer's last epoch, none for
// a writer that never committed, and is not moved by a commit without an
// epoch.
func lastEpochPerWriter(t *testing.T, s *suite) {
	ctx := context.Background()
	want := func(writer string, epoch int64, has bool) {
		t.Helper()
		e, ok, err := s.p.LastEpoch(ctx, s.id, writer)
		if err != nil || ok != has || (has && e != epoch) {
			t.Errorf("LastEpoch(%q) = %d %v %v, want %d %v", writer, e, ok, err, epoch, has)
		}
	}
	want("a", 0, false)
	s.commit(t, []catalogadapter.Receipt{s.stage(t, 0, 1)}, catalogadapter.CommitOptions{WriterID: "a", Epoch: 1})
	s.commit(t, []catalogadapter.Receipt{s.stage(t, 1, 2)}, catalogadapter.CommitOptions{WriterID: "a", Epoch: 2})
	s.commit(t, []catalogadapter.Receipt{s.stage(t, 2, 3)}, catalogadapter.CommitOptions{WriterID: "b", Epoch: 7})
	s.commit(t, []catalogadapter.Receipt{s.stage(t, 3, 4)}, catalogadapter.CommitOptions{WriterID: "a", Epoch: -1})
	want("a", 2, true)
	want("b", 7, true)
	want("c", 0, false)
	if _, _, err := s.p.LastEpoch(ctx, s.id, ""); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("LastEpoch of an empty writer id: %v, want ErrInvalid", err)
	}
}

// removesTakeFilesOut: a commit's Removes take the named files out of the
// table with its adds, in the same version; removing a file no longer
// live conflicts.
func removesTakeFilesOut(t *testing.T, s *suite) {
	s.commit(t, []catalogadapter.Receipt{s.stage(t, 0, 3)}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
	old := s.files(t)
	if len(old) == 0 {
		t.Fatal("no live file after a commit")
	}
	s.commit(t, []catalogadapter.Receipt{s.stage(t, 10, 12)}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 2, Removes: old})
	s.wantIDs(t, [2]int64{10, 12})
	for _, f := range s.files(t) {
		if slices.Contains(old, f) {
			t.Errorf("removed file %s is still live", f)
		}
	}
	before := s.version(t)
	_, err := s.p.Commit(context.Background(), s.id, []catalogadapter.Receipt{s.stage(t, 20, 21)},
		catalogadapter.CommitOptions{WriterID: "w", Epoch: 3, Removes: old})
	if !errors.Is(err, catalogadapter.ErrConflict) {
		t.Errorf("removing files already removed: %v, want ErrConflict", err)
	}
	if v := s.version(t); v != before {
		t.Errorf("a refused commit moved the version from %d to %d", before, v)
	}
}

// noNewDataSinceConflicts: a commit requiring no new data since the
// version its merge read conflicts once another commit added data, and
// lands when nothing did.
func noNewDataSinceConflicts(t *testing.T, s *suite) {
	ctx := context.Background()
	s.commit(t, []catalogadapter.Receipt{s.stage(t, 0, 2)}, catalogadapter.CommitOptions{WriterID: "a", Epoch: 1})
	read := s.version(t)
	// An epoch record alone adds no data.
	s.commit(t, nil, catalogadapter.CommitOptions{WriterID: "b", Epoch: 1})
	ok := s.commit(t, []catalogadapter.Receipt{s.stage(t, 2, 3)}, catalogadapter.CommitOptions{
		WriterID: "a", Epoch: 2, Requires: []catalogadapter.Requirement{catalogadapter.NoNewDataSince(read)}})
	if ok.Skipped {
		t.Fatalf("commit on an unchanged table: %+v", ok)
	}
	read = ok.Version
	s.commit(t, []catalogadapter.Receipt{s.stage(t, 10, 11)}, catalogadapter.CommitOptions{WriterID: "b", Epoch: 2})
	after := s.version(t)
	staged := s.stage(t, 3, 4)
	_, err := s.p.Commit(ctx, s.id, []catalogadapter.Receipt{staged}, catalogadapter.CommitOptions{
		WriterID: "a", Epoch: 3, Requires: []catalogadapter.Requirement{catalogadapter.NoNewDataSince(read)}})
	if !errors.Is(err, catalogadapter.ErrConflict) {
		t.Fatalf("commit after another added data: %v, want ErrConflict", err)
	}
	if v := s.version(t); v != after {
		t.Errorf("a conflicting commit moved the version from %d to %d", after, v)
	}
	s.wantIDs(t, [2]int64{0, 3}, [2]int64{10, 11})
	if e, _, _ := s.p.LastEpoch(ctx, s.id, "a"); e != 2 {
		t.Errorf("LastEpoch = %d after a conflicting epoch 3, want 2", e)
	}
}

// unknownRequirementRefused: a requirement the backend does not know is
// refused with ErrUnsupported, and nothing is written.
func unknownRequirementRefused(t *testing.T, s *suite) {
	before := s.version(t)
	unknown := catalogadapter.Requirement{Kind: "providertest-unknown", Version: before}
	_, err := s.p.Commit(context.Background(), s.id, []catalogadapter.Receipt{s.stage(t, 0, 1)}, catalogadapter.CommitOptions{
		WriterID: "w", Epoch: 1, Requires: []catalogadapter.Requirement{catalogadapter.NoNewDataSince(before), unknown}})
	if !errors.Is(err, catalogadapter.ErrUnsupported) {
		t.Fatalf("unknown requirement: %v, want ErrUnsupported", err)
	}
	if v := s.version(t); v != before {
		t.Errorf("a refused commit moved the version from %d to %d", before, v)
	}
	s.wantIDs(t)
}

// concurrentCommits: blind appends racing each land, each in a version
// of its own; commits racing under one NoNewDataSince have one winner,
// and the others conflict.
func concurrentCommits(t *testing.T, s *suite) {
	const writers = 4
	race := func(opts func(w int) catalogadapter.CommitOptions) ([]catalogadapter.CommitOutcome, []error) {
		receipts := make([]catalogadapter.Receipt, writers)
		for w := range writers {
			receipts[w] = s.stage(t, int64(w)*100, int64(w)*100+2)
		}
		outs, errs := make([]catalogadapter.CommitOutcome, writers), make([]error, writers)
		var start, wg sync.WaitGroup
		start.Add(1)
		for w := range writers {
			wg.Go(func() {
				start.Wait()
				outs[w], errs[w] = s.p.Commit(context.Background(), s.id, receipts[w:w+1], opts(w))
			})
		}
		start.Done()
		wg.Wait()
		return outs, errs
	}
	outs, errs := race(func(w int) catalogadapter.CommitOptions {
		return catalogadapter.CommitOptions{WriterID: fmt.Sprintf("w%d", w), Epoch: 1, MaxRetries: 50}
	})
	versions := map[int64]int{}
	var ranges [][2]int64
	for w := range writers {
		if errs[w] != nil || outs[w].Skipped {
			t.Fatalf("writer %d: %+v %v", w, outs[w], errs[w])
		}
		versions[outs[w].Version]++
		ranges = append(ranges, [2]int64{int64(w) * 100, int64(w)*100 + 2})
	}
	if len(versions) != writers {
		t.Errorf("versions %v: want one writer each", versions)
	}
	s.wantIDs(t, ranges...)

	read := s.version(t)
	outs, errs = race(func(w int) catalogadapter.CommitOptions {
		return catalogadapter.CommitOptions{WriterID: fmt.Sprintf("w%d", w), Epoch: 2, MaxRetries: 50,
			Requires: []catalogadapter.Requirement{catalogadapter.NoNewDataSince(read)}}
	})
	won := 0
	for w := range writers {
		switch {
		case errs[w] == nil:
			won++
			ranges = append(ranges, [2]int64{int64(w) * 100, int64(w)*100 + 2})
		case !errors.Is(errs[w], catalogadapter.ErrConflict):
			t.Errorf("writer %d: %v, want ErrConflict or success", w, errs[w])
		}
	}
	if won != 1 {
		t.Fatalf("%d guarded commits landed, want exactly one", won)
	}
	s.wantIDs(t, ranges...)
}

// invalidIdentifiers: every entry point refuses an identifier no backend
// can serve, and the backend's own refusals, with ErrInvalid.
func invalidIdentifiers(t *testing.T, s *suite) {
	ctx := context.Background()
	ids := append([]catalogadapter.TableIdent{{}, {Namespace: s.id.Namespace, Name: "a\x00b"}}, s.opts.Invalid...)
	for _, id := range ids {
		if _, err := s.p.TableSpec(ctx, id); !errors.Is(err, catalogadapter.ErrInvalid) {
			t.Errorf("TableSpec(%q): %v, want ErrInvalid", id, err)
		}
		if _, err := s.p.StageSQL(ctx, id, s.db, rowsSource(0, 1)); !errors.Is(err, catalogadapter.ErrInvalid) {
			t.Errorf("StageSQL(%q): %v, want ErrInvalid", id, err)
		}
		if _, err := s.p.Commit(ctx, id, nil, catalogadapter.CommitOptions{Epoch: -1}); !errors.Is(err, catalogadapter.ErrInvalid) {
			t.Errorf("Commit(%q): %v, want ErrInvalid", id, err)
		}
		if _, _, err := s.p.LastEpoch(ctx, id, "w"); !errors.Is(err, catalogadapter.ErrInvalid) {
			t.Errorf("LastEpoch(%q): %v, want ErrInvalid", id, err)
		}
	}
}

// missingTable: every entry point reports a table that does not exist
// with ErrNoTable.
func missingTable(t *testing.T, s *suite) {
	ctx := context.Background()
	id := s.opts.Missing(s.id)
	if _, err := s.p.TableSpec(ctx, id); !errors.Is(err, catalogadapter.ErrNoTable) {
		t.Errorf("TableSpec: %v, want ErrNoTable", err)
	}
	if _, err := s.p.StageSQL(ctx, id, s.db, rowsSource(0, 1)); !errors.Is(err, catalogadapter.ErrNoTable) {
		t.Errorf("StageSQL: %v, want ErrNoTable", err)
	}
	if _, err := s.p.Commit(ctx, id, nil, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); !errors.Is(err, catalogadapter.ErrNoTable) {
		t.Errorf("Commit: %v, want ErrNoTable", err)
	}
	if _, _, err := s.p.LastEpoch(ctx, id, "w"); !errors.Is(err, catalogadapter.ErrNoTable) {
		t.Errorf("LastEpoch: %v, want ErrNoTable", err)
	}
}
