package sqlsink

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

// TestAlterCrash kills, with SIGKILL at random points, a process
// (TestAlterCrashChild) that loops over schema changes of one table, each
// followed by an epoch written under the new schema: round n is ALTER n
// (a deterministic cycle of ADD, RENAME, widening and DROP where the
// format allows them) then epoch n. After each kill the table, read with
// the format's own reader and with the provider's scan, has either the
// schema of its last recorded epoch e or the next one (ALTER e+1 landed,
// epoch e+1 not), never anything else, and its rows are exactly epochs
// 1..e, each written under its own schema, read under the current one:
// a column added after a row reads NULL, a renamed one keeps its values,
// a widened one its numbers, a dropped one is gone. A restarted child
// picks up where the table says it is, and checks the same. Kills land
// during the ALTERs mostly (the trigger is the line printed before one);
// -altercrash.kills sets their number per format (30).
func TestAlterCrash(t *testing.T) {
	if os.Getenv(alterCrashLakeEnv) != "" {
		t.Skip("this is a helper process")
	}
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			if _, _, ok := acEvolver(t, l, t.TempDir()); !ok {
				t.Fatalf("the %s provider does not change schemas", l.name)
			}
			runAlterCrash(t, l, exe, rand.New(rand.NewPCG(seed, 0x616c746572)))
		})
	}
}

var alterCrashKills = flag.Int("altercrash.kills", 30, "TestAlterCrash: kills of the ALTER process per format")

const (
	alterCrashLakeEnv = "LAKESQL_ALTER_CRASH_LAKE" // the child's lake; its root is in crashDirEnv
	acTable           = "alter_crash"
	acWriter          = "alter-kid"
)

// acEvolver opens the lake's provider under root; ok tells whether it
// changes schemas.
func acEvolver(t testing.TB, l lake, root string) (catalogadapter.Provider, catalogadapter.TableIdent, bool) {
	p, id := l.open(t, providertest.OpenDuckDB(t), root, acTable)
	_, ok := p.(catalogadapter.SchemaEvolver)
	return p, id, ok
}

func runAlterCrash(t *testing.T, l lake, exe string, rng *rand.Rand) {
	ctx := context.Background()
	root := t.TempDir()
	p, id, _ := acEvolver(t, l, root)
	def := catalogadapter.TableDef{Schema: acSchemaAt(l, 0).arrow(), Properties: acTableProperties(l)}
	if err := p.(catalogadapter.Creator).CreateTable(ctx, id, def); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), alterCrashLakeEnv+"="+l.name, crashDirEnv+"="+root, "TMPDIR="+t.TempDir())
	kills, committed := 0, int64(0)
	where := map[string]int{}
	started := time.Now()
	for run := 1; kills < *alterCrashKills; run++ {
		plan := crashPlan{
			trigger: []string{"alter", "alter", "alter", "altered", "epoch"}[rng.IntN(5)],
			nth:     1 + rng.IntN(3),
			delay:   time.Duration(rng.Int64N(int64(8 * time.Millisecond))),
		}
		r := runCrashProcess(t, exe, "TestAlterCrashChild", env, plan, time.Minute)
		state := "starting"
		for _, line := range r.lines() {
			if strings.HasPrefix(line, "FATAL") {
				t.Fatalf("run %d: the ALTER process saw an anomaly: %s\n%s", run, line, r.describe())
			}
			f := strings.Fields(strings.TrimPrefix(line, crashTag))
			if !strings.HasPrefix(line, crashTag) || len(f) != 2 {
				continue
			}
			if f[0] == "committed" {
				v, _ := strconv.ParseInt(f[1], 10, 64)
				committed = max(committed, v)
			}
			state = f[0]
		}
		if r.hardKilled || !r.killed {
			t.Fatalf("run %d (%v) was not killed by the plan:\n%s", run, plan, r.describe())
		}
		kills++
		where[state]++
		checkAlterCrashTable(t, l, root, committed, fmt.Sprintf("after kill %d (%v, last line %q)", kills, plan, state))
		if t.Failed() {
			return
		}
	}
	e, _, _ := p.LastEpoch(ctx, id, acWriter)
	t.Logf("%d kills in %v, by the last line the process printed: %v; the table reached epoch %d",
		kills, time.Since(started).Round(time.Millisecond), where, e)
}

// checkAlterCrashTable checks the table after a kill (see TestAlterCrash)
// through a provider of this process and the format's own reader.
func checkAlterCrashTable(t *testing.T, l lake, root string, committed int64, when string) {
	t.Helper()
	ctx := context.Background()
	db := providertest.OpenDuckDB(t)
	p, id := l.open(t, db, root, acTable)
	e, _, err := p.LastEpoch(ctx, id, acWriter)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if e < committed {
		t.Errorf("%s: the table records epoch %d, but epoch %d was reported committed", when, e, committed)
	}
	spec, err := p.TableSpec(ctx, id)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	s, ok := acMatch(l, e, specColumns(spec))
	if !ok {
		t.Fatalf("%s: epoch %d is recorded under columns %s, which are neither %s (after ALTER %d) nor %s (after ALTER %d)",
			when, e, specColumns(spec), acSchemaAt(l, e).spell(), e, acSchemaAt(l, e+1).spell(), e+1)
	}
	want := acModel(l, e, s)
	for _, read := range []struct {
		name string
		fn   func() ([]string, []string, error)
	}{
		{"the format's own reader", func() ([]string, []string, error) { return independentTable(t, l, root, id) }},
		{"the provider's scan", func() ([]string, []string, error) { return sinkScanTable(ctx, p, id, db) }},
	} {
		cols, rows, err := read.fn()
		if err != nil {
			t.Fatalf("%s: %s cannot read the table: %v", when, read.name, err)
		}
		if diff := cmp.Diff(s.names(), cols); diff != "" {
			t.Errorf("%s: %s reads the columns (-want +got):\n%s", when, read.name, diff)
		}
		if diff := cmp.Diff(want, rows); diff != "" {
			t.Errorf("%s: %s reads epochs 1..%d under %s (-want +got):\n%s", when, read.name, e, s.spell(), diff)
		}
	}
}

// acCol is one column of the cycle: origin is the round that added it (0
// for the table's own columns).
type acCol struct {
	origin int64
	name   string
	typ    arrow.DataType
}

type acSchema []acCol

func (s acSchema) spell() string {
	var parts []string
	for _, c := range s {
		parts = append(parts, c.name+":"+c.typ.String())
	}
	return strings.Join(parts, ",")
}

func (s acSchema) names() []string {
	var out []string
	for _, c := range s {
		out = append(out, c.name)
	}
	return out
}

func (s acSchema) arrow() *arrow.Schema {
	fields := make([]arrow.Field, len(s))
	for i, c := range s {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: c.name != "id"}
	}
	return arrow.NewSchema(fields, nil)
}

// acRenames tells whether the lake renames and drops columns: Iceberg
// natively; Delta only with column mapping (acTableProperties).
func acRenames(l lake) bool { return l.name != deltaLake.name || acDeltaColumnMapping }

// acDeltaColumnMapping: the Delta table is created with column mapping,
// so the cycle renames and drops there too. Off: a Delta table created
// with delta.columnMapping.mode gets no physical names yet, and its first
// write fails ("column has no column mapping physical name").
const acDeltaColumnMapping = false

func acTableProperties(l lake) map[string]string {
	if l.name == deltaLake.name && acDeltaColumnMapping {
		return map[string]string{"delta.columnMapping.mode": "name"}
	}
	return nil
}

// acChange is ALTER n: with renames, a cycle of four (ADD c<n> INT,
// RENAME it to r<n>, widen it to BIGINT, DROP it); without, a cycle of
// two (ADD c<n> INT, widen it), the table growing a column per cycle.
func acChange(l lake, n int64) catalogadapter.SchemaChange {
	if !acRenames(l) {
		if n%2 == 1 {
			return catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: fmt.Sprintf("c%d", n), Type: arrow.PrimitiveTypes.Int32}
		}
		return catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: fmt.Sprintf("c%d", n-1), Type: arrow.PrimitiveTypes.Int64}
	}
	switch n % 4 {
	case 1:
		return catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: fmt.Sprintf("c%d", n), Type: arrow.PrimitiveTypes.Int32}
	case 2:
		return catalogadapter.SchemaChange{Kind: catalogadapter.RenameColumn, Column: fmt.Sprintf("c%d", n-1), NewName: fmt.Sprintf("r%d", n-1)}
	case 3:
		return catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: fmt.Sprintf("r%d", n-2), Type: arrow.PrimitiveTypes.Int64}
	}
	return catalogadapter.SchemaChange{Kind: catalogadapter.DropColumn, Column: fmt.Sprintf("r%d", n-3)}
}

// acSchemaAt is the schema after ALTERs 1..n.
func acSchemaAt(l lake, n int64) acSchema {
	s := acSchema{{0, "id", arrow.PrimitiveTypes.Int64}, {0, "v", arrow.PrimitiveTypes.Int64}}
	for k := int64(1); k <= n; k++ {
		c := acChange(l, k)
		i := len(s)
		for j, col := range s {
			if col.name == c.Column {
				i = j
			}
		}
		switch c.Kind {
		case catalogadapter.AddColumn:
			s = append(s, acCol{k, c.Column, c.Type})
		case catalogadapter.RenameColumn:
			s[i].name = c.NewName
		case catalogadapter.WidenColumn:
			s[i].typ = c.Type
		case catalogadapter.DropColumn:
			s = append(s[:i:i], s[i+1:]...)
		}
	}
	return s
}

// acMatch finds the schema a table recording epoch e may have.
func acMatch(l lake, e int64, cols string) (acSchema, bool) {
	for _, n := range []int64{e, e + 1} {
		if s := acSchemaAt(l, n); s.spell() == cols {
			return s, true
		}
	}
	return nil, false
}

// acIDs are the row ids of epoch m.
func acIDs(m int64) []int64 { return []int64{m * 10, m*10 + 1} }

// acValue is the value of column c in a row of epoch m written under
// schema written, and whether the row has it at all.
func acValue(c acCol, id, m int64, written acSchema) string {
	switch {
	case c.name == "id":
		return strconv.FormatInt(id, 10)
	case c.origin == 0:
		return strconv.FormatInt(m, 10)
	}
	for _, w := range written {
		if w.origin == c.origin {
			return strconv.FormatInt(id*3, 10)
		}
	}
	return "NULL"
}

// acModel is epochs 1..e read under schema s.
func acModel(l lake, e int64, s acSchema) []string {
	out := []string{}
	for m := int64(1); m <= e; m++ {
		written := acSchemaAt(l, m)
		for _, id := range acIDs(m) {
			parts := make([]string, len(s))
			for i, c := range s {
				parts[i] = acValue(c, id, m, written)
			}
			out = append(out, strings.Join(parts, "|"))
		}
	}
	sort.Strings(out)
	return out
}

// acEpochQuery is a DuckDB query yielding epoch m's rows under schema s.
func acEpochQuery(m int64, s acSchema) string {
	var rows []string
	for _, id := range acIDs(m) {
		var cols []string
		for _, c := range s {
			v := acValue(c, id, m, s)
			cols = append(cols, fmt.Sprintf("%s::%s AS %s", v, acDuckType(c.typ), sqlquote.Ident(c.name)))
		}
		rows = append(rows, "SELECT "+strings.Join(cols, ", "))
	}
	return strings.Join(rows, " UNION ALL ")
}

func acDuckType(t arrow.DataType) string {
	if t.ID() == arrow.INT32 {
		return "INTEGER"
	}
	return "BIGINT"
}

// TestAlterCrashChild is the ALTER process of TestAlterCrash; it does
// nothing in an ordinary test run. It finds where the table is (its last
// epoch e and whether ALTER e+1 landed), then loops: ALTER n, epoch n,
// printing each step before it starts, until it is killed.
func TestAlterCrashChild(t *testing.T) {
	name := os.Getenv(alterCrashLakeEnv)
	if name == "" {
		t.Skip("helper process of TestAlterCrash")
	}
	l, ok := lakeNamed(name)
	if !ok {
		crashExit(crashExitSetup, "unknown lake %q", name)
	}
	ctx := context.Background()
	root := os.Getenv(crashDirEnv)
	db := providertest.OpenDuckDB(t)
	p, id := l.open(t, db, root, acTable)
	ev := p.(catalogadapter.SchemaEvolver)
	e, _, err := p.LastEpoch(ctx, id, acWriter)
	if err != nil {
		crashExit(crashExitSinkError, "last epoch: %v", err)
	}
	spec, err := p.TableSpec(ctx, id)
	if err != nil {
		crashExit(crashExitSinkError, "table spec: %v", err)
	}
	if _, ok := acMatch(l, e, specColumns(spec)); !ok {
		crashExit(crashExitRecord, "epoch %d under columns %s", e, specColumns(spec))
	}
	altered := specColumns(spec) == acSchemaAt(l, e+1).spell()
	fmt.Printf(crashTag+"recovered %d\n", e)
	for n := e + 1; ; n++ {
		if !altered {
			fmt.Printf(crashTag+"alter %d\n", n)
			out, err := ev.AlterSchema(ctx, id, []catalogadapter.SchemaChange{acChange(l, n)})
			if err != nil {
				crashExit(crashExitSinkError, "alter %d: %v", n, err)
			}
			if got, want := specColumns(out), acSchemaAt(l, n).spell(); got != want {
				crashExit(crashExitRecord, "alter %d gave columns %s, want %s", n, got, want)
			}
			fmt.Printf(crashTag+"altered %d\n", n)
		}
		altered = false
		fmt.Printf(crashTag+"epoch %d\n", n)
		rc, err := p.StageSQL(ctx, id, db, catalogadapter.Source{Query: acEpochQuery(n, acSchemaAt(l, n))})
		if err != nil {
			crashExit(crashExitSinkError, "stage epoch %d: %v", n, err)
		}
		res, err := p.Commit(ctx, id, []catalogadapter.Receipt{rc}, catalogadapter.CommitOptions{WriterID: acWriter, Epoch: n})
		switch {
		case err != nil && !errors.Is(err, catalogadapter.ErrConflict):
			crashExit(crashExitSinkError, "commit epoch %d: %v", n, err)
		case err != nil:
			crashExit(crashExitSinkError, "commit epoch %d conflicts with nobody: %v", n, err)
		case res.Skipped:
			crashExit(crashExitSkipped, "epoch %d was skipped", n)
		}
		fmt.Printf(crashTag+"committed %d\n", n)
	}
}
