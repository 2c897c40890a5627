package sqllogictest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	lakedriver "github.com/lakesql/lakesql/driver"
	"github.com/lakesql/lakesql/internal/storageloc"
)

// LabelObjectStorage is the label (Options.Labels) of runs whose Delta
// sinks live on object storage: `skipif lakesql-s3` marks a record that
// only holds on a local disk, `onlyif lakesql-s3` its object storage
// counterpart.
const LabelObjectStorage = "lakesql-s3"

// Engines are the names skipif and onlyif treat as this engine: lakesql,
// and mysql because lakesql speaks MySQL's dialect (a record meant only for
// MySQL runs here; one MySQL cannot run is skipped here).
var Engines = []string{"lakesql", "mysql"}

// Options configure a Runner.
type Options struct {
	// DSN, when set, runs the files against a MySQL server (a
	// go-sql-driver/mysql DSN, such as root:pw@tcp(127.0.0.1:3306)/lakesql)
	// instead of the embedded engine. Files then share the server's state:
	// a sink one file creates is there for the next.
	DSN string
	// DataDir is the embedded engine's data directory. When empty, each
	// file gets a fresh one, removed when the file ends.
	DataDir string
	// TempDir holds the per-file folders (__TEST_DIR__ and fresh data
	// directories); the system's temp folder when empty. Against a server,
	// __TEST_DIR__ only helps if the server allows sink locations under it.
	TempDir string
	// Restart is what `restart` does against a server, once every
	// connection is closed: restart the server and return the DSN to
	// reconnect with ("" keeps the current one). Without it, restart against
	// a server only reconnects: the server keeps running, so it rolls back
	// the closed sessions' transactions but tests no recovery. Embedded, a
	// restart always closes the engine and reopens it on the same data
	// directory, and Restart is not used.
	Restart func(ctx context.Context) (dsn string, err error)
	// Capabilities are names `require` accepts besides the built-in ones
	// (lakesql, delta, and embedded or server, and restart when a restart
	// reopens the engine).
	Capabilities []string
	// Labels are further names skipif and onlyif take as this engine, for
	// records that hold in one setup only: the project's suites mark with
	// lakesql-s3 (LabelObjectStorage) the records about sinks on object
	// storage, or about local paths.
	Labels []string
	// TableRoot (embedded only) is where relative Delta locations go: each
	// file gets a folder of its own under it (FOLDER/tables), so that files
	// never share a table. It may be an object storage location, such as
	// s3://bucket/prefix, with Storage holding the storage.* options to
	// reach it. Empty: the file's data directory.
	TableRoot string
	Storage   map[string]string
	// LockWaitTimeout (embedded only) bounds how long a transaction waits
	// for a sink another transaction writes to: 0 is the engine's default.
	LockWaitTimeout time.Duration
	// TestDirRoot, when set, holds the files' __TEST_DIR__ folders
	// (FOLDER/tmp, FOLDER of the file's own) instead of TempDir; an
	// object storage location puts them there. Against a server, the
	// server must allow sink locations under it.
	TestDirRoot string
	// Out receives each failure as it happens (and, with Verbose, a line per
	// file); nil discards them.
	Out     io.Writer
	Verbose bool
}

// Summary counts statement and query records.
type Summary struct {
	Passed, Failed, Skipped int
	Failures                []Failure
}

// String is the final line of a run: "N passed, M failed" and ", K skipped"
// when records were skipped.
func (s Summary) String() string {
	out := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Skipped > 0 {
		out += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	return out
}

func (s *Summary) add(o Summary) {
	s.Passed += o.Passed
	s.Failed += o.Failed
	s.Skipped += o.Skipped
	s.Failures = append(s.Failures, o.Failures...)
}

// Failure is a record that did not do what its file says, or a file that
// could not run.
type Failure struct {
	File     string
	Line     int
	Iter     string // loop variables, such as "i=3", inside a loop
	SQL      string
	Expected string
	Actual   string
}

func (f Failure) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "FAIL %s:%d", f.File, f.Line)
	if f.Iter != "" {
		fmt.Fprintf(&b, " (%s)", f.Iter)
	}
	b.WriteByte('\n')
	section := func(name, text string) {
		if text == "" {
			return
		}
		fmt.Fprintf(&b, "  %s:\n", name)
		for l := range strings.SplitSeq(text, "\n") {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	section("sql", f.SQL)
	section("expected", f.Expected)
	section("actual", f.Actual)
	return b.String()
}

// Runner runs .slt files.
type Runner struct {
	opts Options
	dsn  string // the server's current DSN: a restart hook may change it
}

// New returns a Runner.
func New(opts Options) *Runner {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	return &Runner{opts: opts, dsn: opts.DSN}
}

// Run runs files in order and adds up their summaries.
func (r *Runner) Run(ctx context.Context, files []string) Summary {
	var sum Summary
	for _, f := range files {
		sum.add(r.RunFile(ctx, f))
	}
	return sum
}

// RunFile runs one file on a fresh set of connections.
func (r *Runner) RunFile(ctx context.Context, path string) Summary {
	fr := &fileRun{r: r, path: path, labels: map[string]labelHash{}}
	fr.run(ctx)
	if r.opts.Verbose {
		fmt.Fprintf(r.opts.Out, "%s: %s\n", path, fr.sum)
	}
	return fr.sum
}

func (r *Runner) capable(name string) bool {
	switch name {
	case "lakesql", "delta", "iceberg":
		return true
	case "embedded":
		return r.opts.DSN == ""
	case "server":
		return r.opts.DSN != ""
	case "restart":
		return r.opts.DSN == "" || r.opts.Restart != nil
	}
	return slices.Contains(r.opts.Capabilities, name)
}

type labelHash struct {
	hash string
	line int
}

// fileRun is the state of one file's run.
type fileRun struct {
	r         *Runner
	path      string
	tgt       *target
	testDir   string
	threshold int
	skipping  bool // between mode skip and mode unskip
	vars      []loopVar
	labels    map[string]labelHash
	sum       Summary
}

type loopVar struct {
	name  string
	value int
}

func (f *fileRun) fail(fl Failure) {
	fl.File = f.path
	fl.Iter = f.iter()
	f.sum.Failed++
	f.sum.Failures = append(f.sum.Failures, fl)
	fmt.Fprint(f.r.opts.Out, fl.String())
}

func (f *fileRun) iter() string {
	parts := make([]string, len(f.vars))
	for i, v := range f.vars {
		parts[i] = v.name + "=" + strconv.Itoa(v.value)
	}
	return strings.Join(parts, " ")
}

func (f *fileRun) run(ctx context.Context) {
	src, err := os.ReadFile(f.path)
	if err != nil {
		f.fail(Failure{Actual: err.Error()})
		return
	}
	script, err := Parse(f.path, string(src))
	if err != nil {
		fl := Failure{Actual: "parse error: " + err.Error()}
		var pe *ParseError
		if errors.As(err, &pe) {
			fl = Failure{Line: pe.Line, Actual: "parse error: " + pe.Msg}
		}
		f.fail(fl)
		return
	}
	base, err := os.MkdirTemp(f.r.opts.TempDir, "lakesql-slt-*")
	if err != nil {
		f.fail(Failure{Actual: fmt.Sprintf("temp folder: %v", err)})
		return
	}
	defer os.RemoveAll(base)
	// The file's own folder under TableRoot and TestDirRoot is named like
	// its temporary folder, unique among the runs on this machine.
	own := filepath.Base(base)
	if root := f.r.opts.TestDirRoot; root != "" {
		f.testDir = under(root, own, "tmp")
	} else {
		f.testDir = filepath.Join(base, "tmp")
	}
	if !storageloc.IsLocation(f.testDir) {
		if err := os.MkdirAll(f.testDir, 0o755); err != nil {
			f.fail(Failure{Actual: fmt.Sprintf("temp folder: %v", err)})
			return
		}
	}
	if f.r.opts.DSN != "" {
		f.tgt, err = openTarget("mysql", f.r.dsn)
	} else {
		dataDir := f.r.opts.DataDir
		if dataDir == "" {
			dataDir = filepath.Join(base, "data")
		}
		tableRoot := ""
		if f.r.opts.TableRoot != "" {
			tableRoot = under(f.r.opts.TableRoot, own, "tables")
		}
		if dataDir, err = filepath.Abs(dataDir); err == nil {
			f.tgt, err = openTarget(lakedriver.DriverName, embeddedDSN(dataDir, f.testDir, tableRoot, f.r.opts.Storage, f.r.opts.LockWaitTimeout))
		}
	}
	if err != nil {
		f.fail(Failure{Actual: err.Error()})
		return
	}
	f.records(ctx, script.Records)
	if err := f.tgt.close(); err != nil {
		f.fail(Failure{Actual: fmt.Sprintf("closing the connections at the end of the file: %v", err)})
	}
}

// records runs records in order; it returns false when the file must stop
// (halt, a missing capability, a failed restart).
func (f *fileRun) records(ctx context.Context, recs []Record) bool {
	for i, rec := range recs {
		if ctx.Err() != nil {
			f.fail(Failure{Line: rec.Line, Actual: ctx.Err().Error()})
			return false
		}
		if !f.record(ctx, rec, recs[i+1:]) {
			return false
		}
	}
	return true
}

func (f *fileRun) record(ctx context.Context, rec Record, rest []Record) bool {
	switch rec.Kind {
	case KindMode:
		f.skipping = rec.Arg == "skip"
		return true
	case KindHashThreshold:
		f.threshold = rec.N
		return true
	case KindLoop:
		for v := rec.Start; v < rec.End; v++ {
			f.vars = append(f.vars, loopVar{rec.Var, v})
			ok := f.records(ctx, rec.Body)
			f.vars = f.vars[:len(f.vars)-1]
			if !ok {
				return false
			}
		}
		return true
	}
	if f.skipping || !f.applies(rec.Conditions) {
		if rec.Kind == KindStatement || rec.Kind == KindQuery {
			f.sum.Skipped++
		}
		return true
	}
	switch rec.Kind {
	case KindHalt:
		return false
	case KindRequire:
		if f.r.capable(rec.Arg) {
			return true
		}
		f.sum.Skipped += countRecords(rest)
		return false
	case KindRestart:
		if err := f.restart(ctx); err != nil {
			f.fail(Failure{Line: rec.Line, SQL: "restart", Actual: err.Error()})
			return false
		}
		return true
	case KindStatement:
		f.statement(ctx, rec)
	case KindQuery:
		f.query(ctx, rec)
	}
	return true
}

// applies evaluates skipif and onlyif.
func (f *fileRun) applies(conds []Condition) bool {
	for _, c := range conds {
		this := slices.Contains(Engines, c.Engine) || slices.Contains(f.r.opts.Labels, c.Engine)
		if this == c.Skip {
			return false
		}
	}
	return true
}

// countRecords counts the statements and queries records would run.
func countRecords(recs []Record) int {
	n := 0
	for _, r := range recs {
		switch r.Kind {
		case KindStatement, KindQuery:
			n++
		case KindLoop:
			if r.End > r.Start {
				n += (r.End - r.Start) * countRecords(r.Body)
			}
		}
	}
	return n
}

func (f *fileRun) restart(ctx context.Context) error {
	if f.r.opts.DSN == "" || f.r.opts.Restart == nil {
		return f.tgt.reopen("")
	}
	if err := f.tgt.close(); err != nil {
		return fmt.Errorf("close before restart: %w", err)
	}
	dsn, err := f.r.opts.Restart(ctx)
	if err != nil {
		return fmt.Errorf("restart hook: %w", err)
	}
	if dsn != "" {
		f.r.dsn = dsn
	}
	return f.tgt.reopen(f.r.dsn)
}

// under is root/elems: a file path, or a location on object storage.
func under(root string, elems ...string) string {
	if storageloc.IsLocation(root) {
		return strings.TrimSuffix(root, "/") + "/" + strings.Join(elems, "/")
	}
	return filepath.Join(append([]string{root}, elems...)...)
}

// subst replaces __TEST_DIR__ and the loop variables (${i}).
func (f *fileRun) subst(s string) string {
	s = strings.ReplaceAll(s, "__TEST_DIR__", f.testDir)
	for i := len(f.vars) - 1; i >= 0; i-- {
		s = strings.ReplaceAll(s, "${"+f.vars[i].name+"}", strconv.Itoa(f.vars[i].value))
	}
	return s
}

func (f *fileRun) statement(ctx context.Context, rec Record) {
	sql := f.subst(rec.SQL)
	conn, err := f.tgt.conn(ctx, rec.Conn)
	if err == nil {
		_, err = conn.ExecContext(ctx, sql)
	}
	if !rec.ExpectError {
		if err != nil {
			f.fail(Failure{Line: rec.Line, SQL: sql, Expected: "statement ok", Actual: errorText(err)})
			return
		}
		f.sum.Passed++
		return
	}
	msg := f.subst(rec.ErrorMessage)
	want := "an error"
	if rec.ErrorCode != 0 {
		want += fmt.Sprintf(" with code %d", rec.ErrorCode)
	}
	if msg != "" {
		want += " containing:\n" + msg
	}
	switch {
	case err == nil:
		f.fail(Failure{Line: rec.Line, SQL: sql, Expected: want, Actual: "statement ok"})
	case rec.ErrorCode != 0 && errorCode(err) != rec.ErrorCode,
		msg != "" && !strings.Contains(errorMessage(err), msg):
		f.fail(Failure{Line: rec.Line, SQL: sql, Expected: want, Actual: errorText(err)})
	default:
		f.sum.Passed++
	}
}

func (f *fileRun) query(ctx context.Context, rec Record) {
	sql := f.subst(rec.SQL)
	expected := make([]string, len(rec.Expected))
	for i, l := range rec.Expected {
		expected[i] = f.subst(l)
	}
	want := strings.Join(expected, "\n")
	if want == "" {
		want = "no rows"
	}
	res, err := f.fetch(ctx, rec, sql)
	if err != nil {
		f.fail(Failure{Line: rec.Line, SQL: sql, Expected: want, Actual: errorText(err)})
		return
	}
	if res.cols != len(rec.Types) {
		f.fail(Failure{Line: rec.Line, SQL: sql,
			Expected: fmt.Sprintf("%d columns (query %s)", len(rec.Types), rec.Types),
			Actual:   fmt.Sprintf("%d columns:\n%s", res.cols, strings.Join(render(nil, res, NoSort, 0), "\n"))})
		return
	}
	if !matches(expected, res, rec.Sort) {
		got := strings.Join(render(expected, res, rec.Sort, f.threshold), "\n")
		if got == "" {
			got = "no rows"
		}
		f.fail(Failure{Line: rec.Line, SQL: sql, Expected: want, Actual: got})
		return
	}
	if rec.Label != "" {
		h := HashValues(res.values(rec.Sort))
		if prev, ok := f.labels[rec.Label]; ok && prev.hash != h {
			f.fail(Failure{Line: rec.Line, SQL: sql,
				Expected: fmt.Sprintf("the same result as %s at line %d", rec.Label, prev.line),
				Actual:   strings.Join(render(expected, res, rec.Sort, f.threshold), "\n")})
			return
		} else if !ok {
			f.labels[rec.Label] = labelHash{h, rec.Line}
		}
	}
	f.sum.Passed++
}

// fetch runs a query and formats its values by the record's column types.
func (f *fileRun) fetch(ctx context.Context, rec Record, sql string) (result, error) {
	conn, err := f.tgt.conn(ctx, rec.Conn)
	if err != nil {
		return result{}, err
	}
	rows, err := conn.QueryContext(ctx, sql)
	if err != nil {
		return result{}, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return result{}, err
	}
	// A server says which columns are dates; a DATE then reads as a date,
	// not a midnight timestamp. (The embedded driver does not report column
	// types yet, so there a DATE shows as YYYY-MM-DD 00:00:00.)
	dates := make([]bool, len(cols))
	// A DATETIME(p) or TIMESTAMP(p) shows exactly p fraction digits, as
	// the wire sends it; -1: no fixed width known.
	fractions := make([]int, len(cols))
	if cts, err := rows.ColumnTypes(); err == nil {
		for i, ct := range cts {
			dates[i] = strings.EqualFold(ct.DatabaseTypeName(), "DATE")
			fractions[i] = -1
			if n := ct.DatabaseTypeName(); strings.EqualFold(n, "DATETIME") || strings.EqualFold(n, "TIMESTAMP") {
				if _, s, ok := ct.DecimalSize(); ok {
					fractions[i] = int(s)
				}
			}
		}
	}
	res := result{cols: len(cols)}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	types := []rune(rec.Types)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return result{}, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			typ := 'T'
			if i < len(types) {
				typ = types[i]
			}
			if t, ok := v.(time.Time); ok && dates[i] {
				v = t.Format(time.DateOnly)
			} else if ok && i < len(fractions) && fractions[i] >= 0 {
				layout := time.DateTime
				if fractions[i] > 0 {
					layout += "." + strings.Repeat("0", fractions[i])
				}
				v = t.Format(layout)
			}
			row[i] = FormatValue(v, typ)
		}
		res.rows = append(res.rows, row)
	}
	return res, rows.Err()
}
