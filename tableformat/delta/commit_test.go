package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ctNewTable creates an empty two-column table in a temp folder.
func ctNewTable(t testing.TB, conf map[string]string) (*LocalStorage, *Table) {
	t.Helper()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(context.Background(), store, CreateOptions{Name: "t", Schema: atSchema(), Configuration: conf}); err != nil {
		t.Fatal(err)
	}
	return store, NewTable(store)
}

// ctAdd is an add action for a data file that need not exist: the log
// tests never read data.
func ctAdd(path string) *Add {
	return &Add{Path: path, PartitionValues: map[string]*string{}, Size: int64(100 + len(path)),
		ModificationTime: 1700000000000, DataChange: true, Stats: `{"numRecords":1}`}
}

// ctPaths lists the paths of the snapshot's active files.
func ctPaths(s *Snapshot) []string {
	out := []string{}
	for _, f := range s.Files() {
		out = append(out, f.Path)
	}
	return out
}

// ctTxns lists the txn actions among actions.
func ctTxns(actions []Action) []Txn {
	var out []Txn
	for _, a := range actions {
		if a.Txn != nil {
			out = append(out, *a.Txn)
		}
	}
	return out
}

// ctWithoutCommitInfo drops commitInfo actions.
func ctWithoutCommitInfo(actions []Action) []Action {
	var out []Action
	for _, a := range actions {
		if a.CommitInfo == nil {
			out = append(out, a)
		}
	}
	return out
}

// ctReadCommit parses the log entry of version from disk.
func ctReadCommit(t testing.TB, store *LocalStorage, version int64) ([]byte, []Action) {
	t.Helper()
	data, err := os.ReadFile(store.LocalPath(commitKey(version)))
	if err != nil {
		t.Fatalf("read commit %d: %v", version, err)
	}
	actions, err := ParseActions(data)
	if err != nil {
		t.Fatalf("parse commit %d: %v", version, err)
	}
	return data, actions
}

// ctNoTempFiles fails if a temp file of PutIfAbsent/Put was left behind.
func ctNoTempFiles(t testing.TB, store *LocalStorage) {
	t.Helper()
	entries, err := os.ReadDir(store.LocalPath(logDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left in the log: %s", e.Name())
		}
	}
}

// TestCommitRaceGoroutines: two goroutines commit the same version from the
// same read version, 50 times in a row. Exactly one wins; the loser gets a
// *ConflictError naming the winner's commit with the winner's actions; the
// entry on disk is byte for byte the winner's.
func TestCommitRaceGoroutines(t *testing.T) {
	ctx := context.Background()
	store, table := ctNewTable(t, nil)
	const rounds = 50
	lastWon := map[string]int64{}
	var wantPaths []string
	wins := [2]int{}
	for r := int64(1); r <= rounds; r++ {
		base, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if base.Version != r-1 {
			t.Fatalf("round %d: latest version %d, want %d", r, base.Version, r-1)
		}
		// Even rounds share one snapshot object, odd rounds read their own.
		snaps := [2]*Snapshot{base, base}
		if r%2 == 1 {
			if snaps[1], err = table.At(ctx, r-1); err != nil {
				t.Fatal(err)
			}
		}
		type attempt struct {
			app     string
			actions []Action
			now     time.Time
			res     CommitResult
			err     error
		}
		var at [2]attempt
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range at {
			at[g].app = fmt.Sprintf("writer-%d", g)
			at[g].now = time.UnixMilli(1700000000000 + r*10 + int64(g))
			at[g].actions = []Action{
				{Txn: &Txn{AppID: at[g].app, Version: r}},
				{Add: ctAdd(fmt.Sprintf("r%03d-g%d.parquet", r, g))},
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				now := at[g].now
				at[g].res, at[g].err = snaps[g].Commit(ctx, at[g].actions, CommitOptions{Now: func() time.Time { return now }})
			}()
		}
		close(start)
		wg.Wait()

		var w, l int
		switch {
		case at[0].err == nil && at[1].err != nil:
			w, l = 0, 1
		case at[1].err == nil && at[0].err != nil:
			w, l = 1, 0
		default:
			t.Fatalf("round %d: want exactly one winner, got errors %v and %v", r, at[0].err, at[1].err)
		}
		wins[w]++
		if at[w].res.Version != r {
			t.Fatalf("round %d: winner committed version %d", r, at[w].res.Version)
		}
		if at[w].res.CheckpointErr != nil {
			t.Fatalf("round %d: checkpoint: %v", r, at[w].res.CheckpointErr)
		}
		lerr := at[l].err
		if !errors.Is(lerr, ErrConflict) {
			t.Fatalf("round %d: loser error is not ErrConflict: %v", r, lerr)
		}
		var ce *ConflictError
		if !errors.As(lerr, &ce) {
			t.Fatalf("round %d: loser error is not a *ConflictError: %v", r, lerr)
		}
		if ce.Version != r {
			t.Errorf("round %d: ConflictError.Version = %d", r, ce.Version)
		}
		if len(ce.Winners) != 1 || ce.Winners[0].Version != r {
			t.Fatalf("round %d: winners %+v, want exactly version %d", r, ce.Winners, r)
		}
		if diff := cmp.Diff(at[w].actions, ctWithoutCommitInfo(ce.Winners[0].Actions)); diff != "" {
			t.Fatalf("round %d: winner's actions in the conflict (-winner +reported):\n%s", r, diff)
		}
		if txns := ctTxns(ce.Winners[0].Actions); len(txns) != 1 || txns[0].AppID != at[w].app || txns[0].Version != r {
			t.Fatalf("round %d: winner txns %+v, want %s/%d", r, txns, at[w].app, r)
		}
		if !strings.Contains(lerr.Error(), strconv.FormatInt(r, 10)) {
			t.Errorf("round %d: conflict message does not name the version: %v", r, lerr)
		}
		// The log entry is exactly what the winner wrote.
		got, _ := ctReadCommit(t, store, r)
		want, err := EncodeActions(append([]Action{{CommitInfo: commitInfo(at[w].now, "WRITE", nil, nil, entryTxnID(got))}}, at[w].actions...))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Fatalf("round %d: commit file is not the winner's:\nwant %s\ngot  %s", r, want, got)
		}
		lastWon[at[w].app] = r
		wantPaths = append(wantPaths, at[w].actions[1].Add.Path)
	}
	t.Logf("wins: writer-0 %d, writer-1 %d", wins[0], wins[1])

	final, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if final.Version != rounds {
		t.Fatalf("final version %d, want %d", final.Version, rounds)
	}
	sort.Strings(wantPaths)
	if diff := cmp.Diff(wantPaths, ctPaths(final)); diff != "" {
		t.Fatalf("files (-winners +table):\n%s", diff)
	}
	for app, v := range lastWon {
		if got, ok := final.TxnVersion(app); !ok || got != v {
			t.Errorf("txn %s = %d, %v; want %d", app, got, ok, v)
		}
	}
	for v := int64(1); v <= rounds; v++ {
		if _, actions := ctReadCommit(t, store, v); len(ctTxns(actions)) != 1 {
			t.Errorf("version %d has %d txn actions", v, len(ctTxns(actions)))
		}
	}
	ctNoTempFiles(t, store)
}

const ctHelperEnv = "LAKESQL_DELTA_COMMIT_HELPER"

// TestHelperProcessCommit is not a test: TestCommitRaceProcesses runs the
// test binary with it as a separate writer process.
func TestHelperProcessCommit(t *testing.T) {
	if os.Getenv(ctHelperEnv) != "1" {
		return
	}
	os.Exit(ctHelperMain())
}

// ctHelperMain opens the table, says it is ready, waits for the start file,
// then commits its txn. It prints WON <version>, CONFLICT <version> followed
// by the winners as <version>:<appId>, or ERROR.
func ctHelperMain() int {
	ctx := context.Background()
	dir, app := os.Getenv("CT_TABLE"), os.Getenv("CT_APP")
	txn, err := strconv.ParseInt(os.Getenv("CT_TXN"), 10, 64)
	if err != nil {
		fmt.Println("ERROR bad CT_TXN:", err)
		return 1
	}
	store, err := NewLocalStorage(dir)
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	snap, err := NewTable(store).Latest(ctx)
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	if err := os.WriteFile(os.Getenv("CT_READY"), []byte(strconv.FormatInt(snap.Version, 10)), 0o644); err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(os.Getenv("CT_START")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("ERROR no start signal")
			return 1
		}
		time.Sleep(50 * time.Microsecond)
	}
	res, err := snap.Commit(ctx, []Action{
		{Txn: &Txn{AppID: app, Version: txn}},
		{Add: ctAdd(fmt.Sprintf("%s-%d.parquet", app, txn))},
	}, CommitOptions{})
	if err == nil {
		fmt.Printf("WON %d\n", res.Version)
		return 0
	}
	var ce *ConflictError
	if errors.Is(err, ErrConflict) && errors.As(err, &ce) {
		var ws []string
		for _, w := range ce.Winners {
			for _, tx := range ctTxns(w.Actions) {
				ws = append(ws, fmt.Sprintf("%d:%s", w.Version, tx.AppID))
			}
		}
		fmt.Printf("CONFLICT %d %s\n", ce.Version, strings.Join(ws, " "))
		return 3
	}
	fmt.Println("ERROR", err)
	return 1
}

// TestCommitRaceProcesses: two OS processes open the same table and commit
// the same next version at the same moment, ten rounds. Exactly one wins
// each round; the other reports the conflict naming the winner; the log
// has one commit per version holding the winner's txn.
func TestCommitRaceProcesses(t *testing.T) {
	if os.Getenv(ctHelperEnv) == "1" {
		t.Skip("inside a helper process")
	}
	ctx := context.Background()
	store, _ := ctNewTable(t, nil)
	barrier := t.TempDir()
	const rounds = 10
	apps := [2]string{"proc-a", "proc-b"}
	winners := map[int64]string{}
	lastWon := map[string]int64{}
	for r := int64(1); r <= rounds; r++ {
		start := filepath.Join(barrier, fmt.Sprintf("start-%d", r))
		type proc struct {
			cmd   *exec.Cmd
			out   bytes.Buffer
			ready string
			done  chan error
		}
		var ps [2]*proc
		for i, app := range apps {
			p := &proc{ready: filepath.Join(barrier, fmt.Sprintf("ready-%d-%s", r, app)), done: make(chan error, 1)}
			p.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcessCommit$", "-test.count=1")
			p.cmd.Env = append(os.Environ(), ctHelperEnv+"=1",
				"CT_TABLE="+store.Root, "CT_APP="+app, "CT_TXN="+strconv.FormatInt(r, 10),
				"CT_READY="+p.ready, "CT_START="+start)
			p.cmd.Stdout = &p.out
			p.cmd.Stderr = &p.out
			if err := p.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { p.done <- p.cmd.Wait() }()
			ps[i] = p
		}
		// Both processes have read the table before either may commit.
		deadline := time.Now().Add(60 * time.Second)
		for _, p := range ps {
			for {
				if b, err := os.ReadFile(p.ready); err == nil && len(b) > 0 {
					if string(b) != strconv.FormatInt(r-1, 10) {
						t.Fatalf("round %d: helper read version %s, want %d", r, b, r-1)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("round %d: helper not ready: %s", r, p.out.String())
				}
				time.Sleep(time.Millisecond)
			}
		}
		if err := os.WriteFile(start, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		var codes [2]int
		var outs [2]string
		for i, p := range ps {
			err := <-p.done
			codes[i] = p.cmd.ProcessState.ExitCode()
			outs[i] = strings.TrimSpace(p.out.String())
			if err != nil && codes[i] != 3 {
				t.Fatalf("round %d: %s exited %d: %v\n%s", r, apps[i], codes[i], err, outs[i])
			}
		}
		var w, l int
		switch {
		case codes[0] == 0 && codes[1] == 3:
			w, l = 0, 1
		case codes[1] == 0 && codes[0] == 3:
			w, l = 1, 0
		default:
			t.Fatalf("round %d: want one winner and one conflict, got exit codes %v:\n%s\n---\n%s", r, codes, outs[0], outs[1])
		}
		if want := fmt.Sprintf("WON %d", r); !strings.Contains(outs[w], want) {
			t.Fatalf("round %d: winner said %q, want %q", r, outs[w], want)
		}
		if want := fmt.Sprintf("CONFLICT %d %d:%s\n", r, r, apps[w]); !strings.Contains(outs[l]+"\n", want) {
			t.Fatalf("round %d: loser said %q, want %q", r, outs[l], want)
		}
		winners[r] = apps[w]
		lastWon[apps[w]] = r
	}
	final, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if final.Version != rounds {
		t.Fatalf("final version %d, want %d", final.Version, rounds)
	}
	for v := int64(1); v <= rounds; v++ {
		_, actions := ctReadCommit(t, store, v)
		txns := ctTxns(actions)
		if len(txns) != 1 || txns[0].AppID != winners[v] || txns[0].Version != v {
			t.Errorf("version %d txns %+v, want only %s/%d", v, txns, winners[v], v)
		}
	}
	for app, v := range lastWon {
		if got, ok := final.TxnVersion(app); !ok || got != v {
			t.Errorf("txn %s = %d, %v; want %d", app, got, ok, v)
		}
	}
	if len(final.Files()) != rounds {
		t.Errorf("%d files, want %d", len(final.Files()), rounds)
	}
	if entries, _ := os.ReadDir(store.LocalPath(logDir)); len(entries) == 0 {
		t.Fatal("empty log")
	}
	ctNoTempFiles(t, store)
}

// ctCommitOnce commits actions carrying the txn (app, txnVersion) from
// snap, retrying on conflicts from a fresh snapshot. A winner that already
// carries this txn means an earlier attempt landed: nothing is committed.
func ctCommitOnce(ctx context.Context, table *Table, snap *Snapshot, app string, txnVersion int64, actions []Action) (version int64, committed bool, attempts int, err error) {
	actions = append([]Action{{Txn: &Txn{AppID: app, Version: txnVersion}}}, actions...)
	for attempts = 1; attempts <= 50; attempts++ {
		if v, ok := snap.TxnVersion(app); ok && v >= txnVersion {
			return snap.Version, false, attempts, nil
		}
		res, err := snap.Commit(ctx, actions, CommitOptions{})
		if err == nil {
			return res.Version, true, attempts, nil
		}
		var ce *ConflictError
		if !errors.As(err, &ce) {
			return 0, false, attempts, err
		}
		for _, w := range ce.Winners {
			for _, tx := range ctTxns(w.Actions) {
				if tx.AppID == app && tx.Version >= txnVersion {
					return w.Version, false, attempts, nil
				}
			}
		}
		if snap, err = table.Latest(ctx); err != nil {
			return 0, false, attempts, err
		}
	}
	return 0, false, attempts, fmt.Errorf("gave up after %d attempts", attempts)
}

// TestCommitConflictRetry: a writer two versions behind gets both winners
// in order, re-reads and commits on top; a replay of a commit that already
// landed is recognised by its txn and not committed twice; four writers
// retrying against each other all land.
func TestCommitConflictRetry(t *testing.T) {
	ctx := context.Background()
	store, table := ctNewTable(t, nil)
	stale, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= 2; v++ {
		s, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit(ctx, []Action{{Txn: &Txn{AppID: "a", Version: v}}, {Add: ctAdd(fmt.Sprintf("a%d.parquet", v))}}, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = stale.Commit(ctx, []Action{{Txn: &Txn{AppID: "b", Version: 1}}, {Add: ctAdd("b1.parquet")}}, CommitOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) {
		t.Fatalf("stale commit: want a conflict, got %v", err)
	}
	if ce.Version != 1 || len(ce.Winners) != 2 || ce.Winners[0].Version != 1 || ce.Winners[1].Version != 2 {
		t.Fatalf("conflict %+v, want version 1 won by 1 and 2", ce)
	}
	for i, w := range ce.Winners {
		if txns := ctTxns(w.Actions); len(txns) != 1 || txns[0] != (Txn{AppID: "a", Version: int64(i + 1)}) {
			t.Errorf("winner %d txns %+v", w.Version, txns)
		}
	}
	if _, err := os.Stat(store.LocalPath(commitKey(3))); err == nil {
		t.Fatal("a conflicting commit wrote a later version")
	}

	v, committed, attempts, err := ctCommitOnce(ctx, table, stale, "b", 1, []Action{{Add: ctAdd("b1.parquet")}})
	if err != nil || !committed || v != 3 || attempts != 2 {
		t.Fatalf("retry: version %d committed %v attempts %d err %v; want 3, true, 2, nil", v, committed, attempts, err)
	}
	// The same txn again from a stale snapshot: the conflict shows it landed.
	stale2, err := table.At(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	v, committed, _, err = ctCommitOnce(ctx, table, stale2, "b", 1, []Action{{Add: ctAdd("b1-again.parquet")}})
	if err != nil || committed || v != 3 {
		t.Fatalf("replay: version %d committed %v err %v; want 3, false, nil", v, committed, err)
	}
	snap, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != 3 {
		t.Fatalf("version %d after the replay, want 3", snap.Version)
	}
	if diff := cmp.Diff([]string{"a1.parquet", "a2.parquet", "b1.parquet"}, ctPaths(snap)); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}

	// Four writers, five commits each, all retrying against each other.
	const writers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			app := fmt.Sprintf("w%d", w)
			for k := int64(1); k <= each; k++ {
				s, err := table.Latest(ctx)
				if err != nil {
					errs <- err
					return
				}
				_, committed, _, err := ctCommitOnce(ctx, table, s, app, k, []Action{{Add: ctAdd(fmt.Sprintf("%s-%d.parquet", app, k))}})
				if err != nil || !committed {
					errs <- fmt.Errorf("%s/%d: committed %v: %v", app, k, committed, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	final, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if final.Version != 3+writers*each {
		t.Fatalf("final version %d, want %d", final.Version, 3+writers*each)
	}
	if n := len(final.Files()); n != 3+writers*each {
		t.Fatalf("%d files, want %d", n, 3+writers*each)
	}
	for w := 0; w < writers; w++ {
		if v, ok := final.TxnVersion(fmt.Sprintf("w%d", w)); !ok || v != each {
			t.Errorf("txn w%d = %d, %v", w, v, ok)
		}
	}
	ctNoTempFiles(t, store)
}

// ctWriteVersion0 writes a version 0 with the given protocol by hand.
func ctWriteVersion0(t testing.TB, store Storage, proto Protocol, conf map[string]string) {
	t.Helper()
	schema, err := atSchema().JSON()
	if err != nil {
		t.Fatal(err)
	}
	if conf == nil {
		conf = map[string]string{}
	}
	data, err := EncodeActions([]Action{
		{Protocol: &proto},
		{MetaData: &Metadata{ID: "11111111-2222-3333-4444-555555555555", Format: Format{Provider: "parquet"},
			SchemaString: schema, PartitionColumns: []string{}, Configuration: conf}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(context.Background(), commitKey(0), data); err != nil {
		t.Fatal(err)
	}
}

// TestCommitRefusesUnwritable: tables whose writer protocol we do not
// honour are readable but refuse commits and checkpoints; a protocol
// upgrade to such a protocol is refused; so is a caller's commitInfo and a
// data-changing remove on an append-only table.
func TestCommitRefusesUnwritable(t *testing.T) {
	ctx := context.Background()
	refused := []struct {
		name  string
		proto Protocol
		what  string
		conf  map[string]string // legacy versions refuse only a feature in use
	}{
		{"unknown writer feature", Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", "someFutureWriterFeature"}}, "someFutureWriterFeature", nil},
		{"writer version 8", Protocol{MinReaderVersion: 1, MinWriterVersion: 8}, "8", nil},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			store, err := NewLocalStorage(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ctWriteVersion0(t, store, c.proto, c.conf)
			table := NewTable(store)
			snap, err := table.Latest(ctx)
			if err != nil {
				t.Fatalf("the table must stay readable: %v", err)
			}
			_, err = snap.Commit(ctx, []Action{{Add: ctAdd("x.parquet")}}, CommitOptions{})
			if !errors.Is(err, ErrUnsupportedFeature) {
				t.Fatalf("commit: want ErrUnsupportedFeature, got %v", err)
			}
			if !strings.Contains(err.Error(), c.what) {
				t.Errorf("error does not name %q: %v", c.what, err)
			}
			if _, err := os.Stat(store.LocalPath(commitKey(1))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused commit wrote version 1 (%v)", err)
			}
			if err := table.Checkpoint(ctx, 0); !errors.Is(err, ErrUnsupportedFeature) {
				t.Fatalf("checkpoint: want ErrUnsupportedFeature, got %v", err)
			}
			if _, err := os.Stat(store.LocalPath(checkpointKey(0))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused checkpoint was written (%v)", err)
			}
		})
	}

	t.Run("supported writer features", func(t *testing.T) {
		store, err := NewLocalStorage(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ctWriteVersion0(t, store, Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"appendOnly", "timestampNtz", "domainMetadata"}}, nil)
		snap, err := NewTable(store).Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := snap.Commit(ctx, []Action{{Add: ctAdd("x.parquet")}}, CommitOptions{}); err != nil || res.Version != 1 {
			t.Fatalf("commit: %+v, %v", res, err)
		}
	})

	t.Run("protocol upgrade to an unknown feature", func(t *testing.T) {
		store, table := ctNewTable(t, nil)
		snap, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = snap.Commit(ctx, []Action{{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "someFutureWriterFeature"}}}}, CommitOptions{})
		if !errors.Is(err, ErrUnsupportedFeature) {
			t.Fatalf("want ErrUnsupportedFeature, got %v", err)
		}
		if _, err := os.Stat(store.LocalPath(commitKey(1))); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("the refused upgrade was committed")
		}
	})

	t.Run("caller commitInfo", func(t *testing.T) {
		store, table := ctNewTable(t, nil)
		snap, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, actions := range [][]Action{
			{{CommitInfo: map[string]any{"operation": "MINE"}}, {Add: ctAdd("x.parquet")}},
			{{Add: ctAdd("x.parquet")}, {CommitInfo: map[string]any{"timestamp": 1}}},
		} {
			_, err = snap.Commit(ctx, actions, CommitOptions{})
			if err == nil || !strings.Contains(err.Error(), "commitInfo") {
				t.Fatalf("want an error naming commitInfo, got %v", err)
			}
		}
		if _, err := os.Stat(store.LocalPath(commitKey(1))); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("a commit with a caller's commitInfo was written")
		}
		// Commit writes exactly one commitInfo itself, first.
		res, err := snap.Commit(ctx, []Action{{Add: ctAdd("x.parquet")}}, CommitOptions{Operation: "MERGE", Parameters: map[string]any{"predicate": "id = 1"}})
		if err != nil {
			t.Fatal(err)
		}
		_, actions := ctReadCommit(t, store, res.Version)
		if len(actions) != 2 || actions[0].CommitInfo == nil || actions[1].CommitInfo != nil {
			t.Fatalf("commit actions %+v: want commitInfo then the add", actions)
		}
		ci := actions[0].CommitInfo
		if ci["operation"] != "MERGE" || ci["engineInfo"] != EngineInfo {
			t.Errorf("commitInfo %v", ci)
		}
		if ps, _ := ci["operationParameters"].(map[string]any); ps["predicate"] != "id = 1" {
			t.Errorf("operationParameters %v", ci["operationParameters"])
		}
	})

	t.Run("append-only", func(t *testing.T) {
		store, table := ctNewTable(t, map[string]string{"delta.appendOnly": "true"})
		snap, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := snap.Commit(ctx, []Action{{Add: ctAdd("a.parquet")}}, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		if snap, err = table.Latest(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = snap.Commit(ctx, []Action{{Remove: &Remove{Path: "a.parquet", DataChange: true}}}, CommitOptions{})
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("want an append-only error, got %v", err)
		}
		if _, err := os.Stat(store.LocalPath(commitKey(2))); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("the refused remove was committed")
		}
		// Rewriting files without changing data (compaction) is allowed.
		if _, err := snap.Commit(ctx, []Action{{Remove: &Remove{Path: "a.parquet", DataChange: false}},
			{Add: &Add{Path: "b.parquet", PartitionValues: map[string]*string{}, Size: 1, DataChange: false}}}, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCommitRefusesColumnInvariants: at writer versions 2 to 6 column
// invariants are always on; the sink evaluates those of top-level columns
// only, so a table whose nested fields carry delta.invariants stays
// readable but refuses data files, commits and checkpoints; a commit
// adding one to a writable table is refused too. Without them, or with a
// top-level one, writer 2 writes.
func TestCommitRefusesColumnInvariants(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	inv := map[string]any{invariantKey: `{"expression": {"expression": "x > 3"}}`}
	for _, c := range []struct {
		name string
		x    DataType
		meta map[string]any
		want string // the column the error names
	}{
		{"nested field", &StructType{Fields: []*StructField{{Name: "y", Type: TypeInteger, Nullable: true, Metadata: inv}}}, nil, "x.y"},
		{"field in a list", &ArrayType{ElementType: &StructType{Fields: []*StructField{{Name: "y", Type: TypeInteger, Nullable: true, Metadata: inv}}}, ContainsNull: true}, nil, "x.element.y"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, err := NewLocalStorage(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			schema := &StructType{Fields: []*StructField{
				{Name: "id", Type: TypeLong, Nullable: true},
				{Name: "x", Type: c.x, Nullable: true, Metadata: c.meta},
			}}
			if _, err := Create(ctx, store, CreateOptions{Schema: schema}); err != nil {
				t.Fatal(err)
			}
			table := NewTable(store)
			snap, err := table.Latest(ctx)
			if err != nil {
				t.Fatalf("the table must stay readable: %v", err)
			}
			if snap.Protocol.MinWriterVersion != 2 {
				t.Fatalf("protocol %+v, want writer 2", snap.Protocol)
			}
			wantRefused := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrUnsupportedFeature) || !strings.Contains(err.Error(), fmt.Sprintf("%q", c.want)) {
					t.Fatalf("%s: want ErrUnsupportedFeature naming %q, got %v", what, c.want, err)
				}
			}
			_, err = snap.WriteFiles(ctx, db, `SELECT 1::BIGINT AS id, NULL AS x`, WriteOptions{})
			wantRefused("write files", err)
			_, err = snap.Commit(ctx, []Action{{Add: ctAdd("x.parquet")}}, CommitOptions{})
			wantRefused("commit", err)
			if _, err := os.Stat(store.LocalPath(commitKey(1))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused commit wrote version 1 (%v)", err)
			}
			wantRefused("checkpoint", table.Checkpoint(ctx, 0))
		})
	}

	t.Run("metaData adding an invariant", func(t *testing.T) {
		store, table := ctNewTable(t, nil)
		snap, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		schema, err := snap.Schema()
		if err != nil {
			t.Fatal(err)
		}
		changed := *schema
		changed.Fields = append([]*StructField(nil), schema.Fields...)
		f := *changed.Fields[0]
		f.Type = &StructType{Fields: []*StructField{{Name: "y", Type: TypeInteger, Nullable: true, Metadata: inv}}}
		changed.Fields[0] = &f
		schemaString, err := changed.JSON()
		if err != nil {
			t.Fatal(err)
		}
		md := snap.Metadata
		md.SchemaString = schemaString
		if _, err := snap.Commit(ctx, []Action{{MetaData: &md}}, CommitOptions{}); !errors.Is(err, ErrUnsupportedFeature) {
			t.Fatalf("want ErrUnsupportedFeature, got %v", err)
		}
		if _, err := os.Stat(store.LocalPath(commitKey(1))); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("the invariant was committed")
		}
	})

	t.Run("writer 2 without invariants", func(t *testing.T) {
		_, table := ctNewTable(t, nil)
		snap, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		adds, err := snap.WriteFiles(ctx, db, `SELECT 1::BIGINT AS id, 'a' AS v`, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := snap.Commit(ctx, []Action{{Add: adds[0]}}, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// ctLastCheckpoint reads _last_checkpoint.
func ctLastCheckpoint(t testing.TB, store *LocalStorage) lastCheckpointInfo {
	t.Helper()
	data, err := os.ReadFile(store.LocalPath(lastCheckpointKey))
	if err != nil {
		t.Fatal(err)
	}
	var lc lastCheckpointInfo
	if err := json.Unmarshal(data, &lc); err != nil {
		t.Fatalf("_last_checkpoint %q: %v", data, err)
	}
	return lc
}

// TestCommitCheckpoint: with delta.checkpointInterval = 3, commits 3 and 6
// write checkpoints and _last_checkpoint; a fresh reader starts from the
// newest; the txn of an application that last wrote at version 1 survives
// deleting every JSON commit the checkpoint covers; a corrupt or wrong
// _last_checkpoint is ignored in favour of listing.
func TestCommitCheckpoint(t *testing.T) {
	ctx := context.Background()
	store, table := ctNewTable(t, map[string]string{"delta.checkpointInterval": "3"})
	commit := func(k int64, extra ...Action) CommitResult {
		t.Helper()
		snap, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Version != k-1 {
			t.Fatalf("before commit %d: version %d", k, snap.Version)
		}
		actions := append([]Action{{Txn: &Txn{AppID: "app", Version: k * 10}}, {Add: ctAdd(fmt.Sprintf("f%d.parquet", k))}}, extra...)
		res, err := snap.Commit(ctx, actions, CommitOptions{})
		if err != nil {
			t.Fatalf("commit %d: %v", k, err)
		}
		if res.CheckpointErr != nil {
			t.Fatalf("checkpoint at %d: %v", k, res.CheckpointErr)
		}
		if res.Checkpointed != (k%3 == 0) {
			t.Fatalf("commit %d: checkpointed = %v", k, res.Checkpointed)
		}
		return res
	}
	now := time.Now().UnixMilli()
	commit(1, Action{Txn: &Txn{AppID: "early", Version: 1}})
	for k := int64(2); k <= 7; k++ {
		var extra []Action
		if k == 5 {
			extra = append(extra, Action{Remove: &Remove{Path: "f2.parquet", DeletionTimestamp: &now, DataChange: true}})
		}
		commit(k, extra...)
		if k == 3 || k == 6 {
			if lc := ctLastCheckpoint(t, store); lc.Version != k {
				t.Fatalf("after commit %d: _last_checkpoint names %d", k, lc.Version)
			}
		}
	}
	lc := ctLastCheckpoint(t, store)
	cpInfo, err := os.Stat(store.LocalPath(checkpointKey(6)))
	if err != nil {
		t.Fatalf("checkpoint 6: %v", err)
	}
	if lc.Version != 6 || lc.NumOfAddFiles == nil || *lc.NumOfAddFiles != 5 ||
		lc.SizeInBytes == nil || *lc.SizeInBytes != cpInfo.Size() {
		t.Fatalf("_last_checkpoint %+v (numOfAddFiles/sizeInBytes want 5/%d)", lc, cpInfo.Size())
	}
	for v := int64(0); v <= 7; v++ {
		_, err := os.Stat(store.LocalPath(checkpointKey(v)))
		if exists := err == nil; exists != (v == 3 || v == 6) {
			t.Errorf("checkpoint %d exists = %v", v, exists)
		}
	}

	wantFiles := []string{"f1.parquet", "f3.parquet", "f4.parquet", "f5.parquet", "f6.parquet", "f7.parquet"}
	check := func(what string, wantCP int64) *Snapshot {
		t.Helper()
		snap, err := NewTable(store).Latest(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if snap.Version != 7 || snap.CheckpointVersion != wantCP {
			t.Fatalf("%s: version %d checkpoint %d, want 7 and %d", what, snap.Version, snap.CheckpointVersion, wantCP)
		}
		if diff := cmp.Diff(wantFiles, ctPaths(snap)); diff != "" {
			t.Fatalf("%s: files (-want +got):\n%s", what, diff)
		}
		if diff := cmp.Diff([]Txn{{AppID: "app", Version: 70}, {AppID: "early", Version: 1}}, snap.Txns()); diff != "" {
			t.Fatalf("%s: txns (-want +got):\n%s", what, diff)
		}
		// Tombstones are read only for checkpointing.
		full, err := NewTable(store).snapshot(ctx, snap.Version, true)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ts := full.tombstones; len(ts) != 1 || ts[0].Path != "f2.parquet" {
			t.Fatalf("%s: tombstones %+v, want f2.parquet", what, ts)
		}
		return snap
	}
	check("fresh reader", 6)
	for v, cp := range map[int64]int64{2: -1, 3: 3, 4: 3, 5: 3, 6: 6} {
		s, err := NewTable(store).At(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if s.CheckpointVersion != cp {
			t.Errorf("At(%d) started from checkpoint %d, want %d", v, s.CheckpointVersion, cp)
		}
	}

	// Log cleanup: the commits before the checkpoint and the older
	// checkpoint go; then the checkpoint's own commit too.
	for v := int64(0); v < 6; v++ {
		if err := os.Remove(store.LocalPath(commitKey(v))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(store.LocalPath(checkpointKey(3))); err != nil {
		t.Fatal(err)
	}
	check("commits 0-5 deleted", 6)
	if err := os.Remove(store.LocalPath(commitKey(6))); err != nil {
		t.Fatal(err)
	}
	snap := check("commits 0-6 deleted", 6)
	if v, ok := snap.TxnVersion("early"); !ok || v != 1 {
		t.Fatalf("txn early = %d, %v after cleanup", v, ok)
	}
	if s, err := NewTable(store).At(ctx, 6); err != nil || s.CheckpointVersion != 6 || len(s.Files()) != 5 {
		t.Fatalf("At(6) after cleanup: %v", err)
	}
	if _, err := NewTable(store).At(ctx, 5); err == nil || !strings.Contains(err.Error(), "5") {
		t.Fatalf("At(5) after cleanup: want an error naming version 5, got %v", err)
	}

	// The table goes on: commit 8, and 9 checkpoints again.
	commit(8)
	commit(9)
	if lc := ctLastCheckpoint(t, store); lc.Version != 9 {
		t.Fatalf("_last_checkpoint names %d, want 9", lc.Version)
	}
	// An explicit checkpoint of an older version does not move the hint back.
	if err := table.Checkpoint(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if lc := ctLastCheckpoint(t, store); lc.Version != 9 {
		t.Fatalf("_last_checkpoint moved back to %d", lc.Version)
	}
	wantFiles = append(wantFiles, "f8.parquet", "f9.parquet")
	// An older hint is followed (it is only a hint: replaying from an older
	// checkpoint gives the same state); a broken one falls back to listing.
	for _, hint := range []struct {
		name   string
		data   []byte
		wantCP int64
	}{
		{"garbage", []byte("\x00\xff\xfe{{not json"), 9},
		{"empty", nil, 9},
		{"truncated", []byte(`{"version":9,"si`), 9},
		{"too new", []byte(`{"version":100,"size":3}`), 9},
		{"no checkpoint there", []byte(`{"version":8,"size":3}`), 9},
		{"older", []byte(`{"version":6,"size":3}`), 6},
		{"negative", []byte(`{"version":-4,"size":3}`), 9},
		{"wrong type", []byte(`{"version":"9"}`), 9},
	} {
		if err := os.WriteFile(store.LocalPath(lastCheckpointKey), hint.data, 0o644); err != nil {
			t.Fatal(err)
		}
		snap, err := NewTable(store).Latest(ctx)
		if err != nil {
			t.Fatalf("_last_checkpoint %s: %v", hint.name, err)
		}
		if snap.Version != 9 || snap.CheckpointVersion != hint.wantCP {
			t.Fatalf("_last_checkpoint %s: version %d checkpoint %d, want 9 and %d", hint.name, snap.Version, snap.CheckpointVersion, hint.wantCP)
		}
		if diff := cmp.Diff(wantFiles, ctPaths(snap)); diff != "" {
			t.Fatalf("_last_checkpoint %s: files (-want +got):\n%s", hint.name, diff)
		}
		if v, ok := snap.TxnVersion("early"); !ok || v != 1 {
			t.Fatalf("_last_checkpoint %s: txn early = %d, %v", hint.name, v, ok)
		}
	}
	// No _last_checkpoint at all.
	if err := os.Remove(store.LocalPath(lastCheckpointKey)); err != nil {
		t.Fatal(err)
	}
	if snap, err := NewTable(store).Latest(ctx); err != nil || snap.CheckpointVersion != 9 {
		t.Fatalf("without _last_checkpoint: %v", err)
	}
	ctNoTempFiles(t, store)
}

// TestCreateProtocolForTimestampNtz: the protocol lets a table hold a
// timestamp without time zone only at reader 3 / writer 7 with the
// timestampNtz feature in both lists; other tables stay at reader 1 /
// writer 2. At writer 7 append-only is a listed feature. We still write
// and read such a table.
func TestCreateProtocolForTimestampNtz(t *testing.T) {
	ctx := context.Background()
	ntz := []string{"timestampNtz"}
	for _, tc := range []struct {
		name  string
		typ   DataType
		conf  map[string]string
		wantP Protocol
	}{
		{"no ntz", TypeTimestamp, nil, Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{"ntz", TypeTimestampNTZ, nil, Protocol{3, 7, ntz, ntz}},
		{"nested ntz", &ArrayType{ElementType: &StructType{Fields: []*StructField{{Name: "at", Type: TypeTimestampNTZ, Nullable: true}}}, ContainsNull: true}, nil, Protocol{3, 7, ntz, ntz}},
		{"ntz append-only", TypeTimestampNTZ, map[string]string{"delta.appendOnly": "TRUE"}, Protocol{3, 7, ntz, []string{"timestampNtz", "appendOnly"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, err := NewLocalStorage(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			schema := &StructType{Fields: []*StructField{{Name: "id", Type: TypeLong, Nullable: true}, {Name: "at", Type: tc.typ, Nullable: true}}}
			snap, err := Create(ctx, store, CreateOptions{Schema: schema, Configuration: tc.conf})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantP, snap.Protocol); diff != "" {
				t.Fatalf("protocol (-want +got):\n%s", diff)
			}
			if err := CheckWritable(snap.Protocol, schema); err != nil {
				t.Fatalf("our own table is not writable: %v", err)
			}
			if _, err := snap.Commit(ctx, []Action{{Add: &Add{Path: "a.parquet", PartitionValues: map[string]*string{}, Size: 1, DataChange: true}}}, CommitOptions{}); err != nil {
				t.Fatalf("commit: %v", err)
			}
			got, err := NewTable(store).Latest(ctx)
			if err != nil || got.Version != 1 || len(got.Files()) != 1 {
				t.Fatalf("read back: %v", err)
			}
		})
	}
}
