package main

// The REPL: `lakesql [--data DIR] [-e SQL] [--force]`.
//
//   - `-e "SQL"` runs the statements of SQL (separated by `;`, the last one
//     may omit it) and exits.
//   - Otherwise, when stdin is not a terminal, it is read as a script:
//     statements end with `;` and may span lines; `-- ` and `#` comments run
//     to the end of the line, `/* */` comments may span lines, and a `;`
//     inside quotes or comments does not end a statement.
//   - When stdin is a terminal, statements are read interactively with the
//     prompt `lakesql> ` (and `     -> ` for a statement's further lines).
//     Statements are kept in the session's history and appended to
//     DATA/.lakesql_history; `\history` prints it. `\timing` toggles the
//     elapsed time after each result; `\q`, `exit`, `quit` and end of input
//     leave. Ctrl-C while a statement runs aborts it (ERROR 1317), except a
//     COMMIT, which finishes; at the prompt Ctrl-C ends the REPL (an open
//     transaction is lost: nothing of it was committed).
//
// Like the mysql client, a script or -e stops at the first failing
// statement (exit code 1) unless --force is given, in which case every
// statement runs and the exit code is 1 if any failed. Errors go to stderr
// as `ERROR <code> (<SQLSTATE>): <message>` (`... at line N: ...` in a
// script). Results go to stdout as tables, followed by "N rows in set" or
// "Query OK, N rows affected" and the statement's warnings. A statement
// still running after a second (a long COMMIT) prints a progress line to
// stderr every second.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/shopspring/decimal"

	"github.com/lakesql/lakesql/internal/secret"
	"github.com/lakesql/lakesql/planner"
)

// historyFile is the name of the history file in the data directory.
const historyFile = ".lakesql_history"

// progressAfter and progressEvery pace the progress line of a long statement.
var (
	progressAfter = time.Second
	progressEvery = time.Second
)

func replCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lakesql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data", "./lakesql-data", "the data directory")
	var (
		roots     rootList
		tableRoot string
		storage   storageFlags
	)
	fs.Var(&roots, "allowed-roots", allowedRootsUsage)
	addStorageFlags(fs, &tableRoot, &storage)
	execSQL := fs.String("e", "", "run these statements and exit")
	force := fs.Bool("force", false, "continue a script or -e after a failing statement")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lakesql: unexpected argument %q\n\n%s", fs.Arg(0), usage)
		return 2
	}
	if err := storage.check(); err != nil {
		fmt.Fprintf(stderr, "lakesql: %v\n", err)
		return 2
	}
	opts := planner.Options{DataDir: *dataDir, AllowedRoots: roots, TableRoot: tableRoot, Storage: storage.opts}
	engine, err := planner.Open(ctx, opts)
	if err != nil {
		printError(stderr, err, 0)
		return 1
	}
	defer engine.Close()
	r := &repl{ctx: ctx, engine: engine, session: engine.NewSession(), stdout: stdout, stderr: stderr,
		force: *force, dataDir: *dataDir}
	defer r.session.Close()

	explicitE := false
	fs.Visit(func(f *flag.Flag) { explicitE = explicitE || f.Name == "e" })
	switch {
	case explicitE:
		return r.script(*execSQL, false)
	case isTerminal(stdin):
		r.interrupts = notifyInterrupt
		return r.interactive(stdin)
	default:
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "lakesql: reading stdin: %v\n", err)
			return 1
		}
		return r.script(string(b), true)
	}
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type repl struct {
	ctx     context.Context
	engine  *planner.Engine
	session *planner.Session
	stdout  io.Writer
	stderr  io.Writer
	force   bool
	timing  bool
	dataDir string
	history []string
	// interrupts, when set (interactive mode), is called around each
	// statement: a signal on the channel cancels the statement.
	interrupts func() (<-chan os.Signal, func())
}

// notifyInterrupt delivers SIGINT (Ctrl-C) while a statement runs; between
// statements Ctrl-C ends the REPL as usual.
func notifyInterrupt() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	return ch, func() { signal.Stop(ch) }
}

// script runs every statement of src; lines says errors name the line.
func (r *repl) script(src string, lines bool) int {
	stmts, rest := splitStatements(src)
	if rest.text != "" {
		stmts = append(stmts, rest)
	}
	code := 0
	for _, st := range stmts {
		line := 0
		if lines {
			line = st.line
		}
		if !r.run(st.text, line) {
			code = 1
			if !r.force {
				break
			}
		}
	}
	return code
}

// interactive reads statements from a terminal.
func (r *repl) interactive(stdin io.Reader) int {
	r.loadHistory()
	fmt.Fprintf(r.stdout, "lakesql %s; data directory %s. End statements with ';'. \\q leaves, \\timing toggles timing.\n\n", version, r.dataDir)
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var buf strings.Builder
	for {
		if buf.Len() == 0 {
			fmt.Fprint(r.stdout, "lakesql> ")
		} else {
			fmt.Fprint(r.stdout, "     -> ")
		}
		if !sc.Scan() {
			fmt.Fprintln(r.stdout)
			return 0
		}
		line := sc.Text()
		if buf.Len() == 0 {
			switch cmd := strings.TrimSuffix(strings.TrimSpace(line), ";"); strings.ToLower(cmd) {
			case "":
				continue
			case `\q`, "exit", "quit":
				return 0
			case `\timing`:
				r.timing = !r.timing
				if r.timing {
					fmt.Fprintln(r.stdout, "Timing is on.")
				} else {
					fmt.Fprintln(r.stdout, "Timing is off.")
				}
				continue
			case `\history`:
				for i, h := range r.history {
					// Masked again: a history file written before
					// lakesql masked it may hold secrets.
					fmt.Fprintf(r.stdout, "%5d  %s\n", i+1, secret.MaskSQL(h))
				}
				continue
			}
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		stmts, rest := splitStatements(buf.String())
		for _, st := range stmts {
			r.remember(st.raw)
			r.run(st.text, 0)
		}
		buf.Reset()
		if rest.text != "" || strings.Contains(rest.raw, "/*") {
			buf.WriteString(rest.raw)
		}
	}
}

// loadHistory reads the history file, if any.
func (r *repl) loadHistory() {
	b, err := os.ReadFile(filepath.Join(r.dataDir, historyFile))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			r.history = append(r.history, l)
		}
	}
}

// remember adds a statement to the history and the history file, its
// secrets masked (secret.MaskSQL): the file outlives the session, and
// \history prints it.
func (r *repl) remember(stmt string) {
	h := secret.MaskSQL(strings.Join(strings.Fields(stmt), " "))
	if h == "" {
		return
	}
	r.history = append(r.history, h)
	f, err := os.OpenFile(filepath.Join(r.dataDir, historyFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintln(f, h)
	f.Close()
}

// run runs one statement and prints its result; it reports success.
func (r *repl) run(stmt string, line int) bool {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	var interrupted atomic.Bool
	if r.interrupts != nil {
		sigs, stop := r.interrupts()
		done := make(chan struct{})
		defer func() { close(done); stop() }()
		label := keyword(stmt)
		go func() {
			for {
				select {
				case <-done:
					return
				case <-sigs:
					// A COMMIT in flight finishes: cancelling it halfway
					// would leave the outcome unclear.
					if label == "COMMIT" {
						fmt.Fprintln(r.stderr, "^C -- a COMMIT in progress is not interrupted; waiting for it")
						continue
					}
					interrupted.Store(true)
					cancel()
					return
				}
			}
		}()
	}
	start := time.Now()
	var res *planner.Result
	var err error
	withProgress(r.stderr, keyword(stmt), progressAfter, progressEvery, func() {
		res, err = r.engine.Exec(ctx, r.session, stmt)
	})
	elapsed := time.Since(start)
	if err != nil {
		if interrupted.Load() {
			fmt.Fprintln(r.stderr, "^C -- query aborted")
			err = mysql.NewSQLError(mysql.ERQueryInterrupted, "70100", "Query execution was interrupted")
		}
		printError(r.stderr, err, line)
		return false
	}
	printResult(r.stdout, res)
	if r.timing {
		fmt.Fprintf(r.stdout, "(%.3f sec)\n", elapsed.Seconds())
	}
	fmt.Fprintln(r.stdout)
	return true
}

// keyword is the first word of a statement, upper-cased, for messages.
func keyword(stmt string) string {
	f := strings.Fields(stmt)
	if len(f) == 0 {
		return ""
	}
	return strings.ToUpper(f[0])
}

// withProgress runs fn; if it is still running after `after`, it prints a
// progress line to w every `every` until fn returns.
func withProgress(w io.Writer, label string, after, every time.Duration, fn func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		timer := time.NewTimer(after)
		defer timer.Stop()
		select {
		case <-done:
			return
		case <-timer.C:
		}
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			fmt.Fprintf(w, "%s still running (%.0fs)...\n", label, time.Since(start).Seconds())
			select {
			case <-done:
				return
			case <-ticker.C:
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
}

// printError prints err the way the mysql client does.
func printError(w io.Writer, err error, line int) {
	se := planner.MySQLError(err)
	if line > 0 {
		fmt.Fprintf(w, "ERROR %d (%s) at line %d: %s\n", se.Num, se.State, line, se.Message)
		return
	}
	fmt.Fprintf(w, "ERROR %d (%s): %s\n", se.Num, se.State, se.Message)
}

// printResult prints a result table or the affected rows, then warnings.
func printResult(w io.Writer, res *planner.Result) {
	if len(res.Columns) > 0 {
		if len(res.Rows) == 0 {
			fmt.Fprintln(w, "Empty set")
		} else {
			fmt.Fprintln(w, renderTable(res.Columns, res.Types, res.Rows))
			fmt.Fprintf(w, "%d %s in set\n", len(res.Rows), plural(len(res.Rows), "row"))
		}
	} else {
		fmt.Fprintf(w, "Query OK, %d %s affected\n", res.RowsAffected, plural(int(res.RowsAffected), "row"))
	}
	for _, wn := range res.Warnings {
		fmt.Fprintf(w, "%s (Code %d): %s\n", wn.Level, wn.Code, wn.Message)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// renderTable renders rows as a go-pretty table; numeric columns align right.
func renderTable(cols []string, types []planner.ColumnType, rows [][]any) string {
	t := table.NewWriter()
	style := table.StyleDefault
	style.Format.Header = text.FormatDefault
	t.SetStyle(style)
	header := make(table.Row, len(cols))
	for i, c := range cols {
		header[i] = c
	}
	t.AppendHeader(header)
	numeric := make([]bool, len(cols))
	for i := range numeric {
		numeric[i] = true
	}
	for _, row := range rows {
		out := make(table.Row, len(cols))
		for i := range cols {
			var v any
			if i < len(row) {
				v = row[i]
			}
			if v != nil && !isNumber(v) {
				numeric[i] = false
			}
			out[i] = formatValue(v)
			if i < len(types) {
				if text, ok := types[i].Text(v); ok {
					out[i] = text
				}
			}
		}
		t.AppendRow(out)
	}
	var cfg []table.ColumnConfig
	for i, n := range numeric {
		if n {
			cfg = append(cfg, table.ColumnConfig{Number: i + 1, Align: text.AlignRight})
		}
	}
	t.SetColumnConfigs(cfg)
	return t.Render()
}

func isNumber(v any) bool {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, decimal.Decimal:
		return true
	}
	return false
}

// formatValue renders a value the way the mysql client shows it.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return v
	case []byte:
		return string(v)
	case bool:
		if v {
			return "1"
		}
		return "0"
	case float64:
		return formatFloat(v, 64)
	case float32:
		return formatFloat(float64(v), 32)
	case time.Time:
		if v.Nanosecond() == 0 {
			return v.Format("2006-01-02 15:04:05")
		}
		return v.Format("2006-01-02 15:04:05.999999")
	}
	return fmt.Sprint(v)
}

func formatFloat(f float64, bits int) string {
	if a := math.Abs(f); a != 0 && (a >= 1e15 || a < 1e-5) {
		return strconv.FormatFloat(f, 'g', -1, bits)
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

// statement is one statement of a script: its text without comments, its
// raw text and the line it starts on.
type statement struct {
	text string
	raw  string
	line int
}

// splitStatements splits src into the statements that end with ';'
// outside quotes and comments, and the rest after the last one (rest.raw
// is src's unfinished tail; rest.text its text without comments).
// Comment-only statements are dropped.
func splitStatements(src string) (stmts []statement, rest statement) {
	var text strings.Builder
	start, line, startLine := 0, 1, 0
	mark := func() {
		if startLine == 0 {
			startLine = line
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			line++
			text.WriteByte(c)
		case c == '\'' || c == '"' || c == '`':
			mark()
			j := i + 1
			for ; j < len(src); j++ {
				if src[j] == '\\' && c != '`' {
					j++
					continue
				}
				if src[j] == c {
					if j+1 < len(src) && src[j+1] == c {
						j++
						continue
					}
					break
				}
			}
			if j >= len(src) {
				j = len(src) - 1
			}
			seg := src[i : j+1]
			line += strings.Count(seg, "\n")
			text.WriteString(seg)
			i = j
		case c == '#' || (c == '-' && strings.HasPrefix(src[i:], "--") && (i+2 == len(src) || isBlank(src[i+2]))):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				i = len(src)
			} else {
				i += end - 1 // the newline is handled next
			}
			text.WriteByte(' ')
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			var seg string
			if end < 0 {
				seg = src[i:]
				i = len(src)
			} else {
				seg = src[i : i+2+end+2]
				i += 2 + end + 1
			}
			line += strings.Count(seg, "\n")
			text.WriteString(strings.Repeat("\n", strings.Count(seg, "\n")))
			text.WriteByte(' ')
		case c == ';':
			if t := strings.TrimSpace(text.String()); t != "" {
				stmts = append(stmts, statement{text: t, raw: strings.TrimSpace(src[start:i]), line: startLine})
			}
			text.Reset()
			start, startLine = i+1, 0
		default:
			if !isBlank(c) {
				mark()
			}
			text.WriteByte(c)
		}
	}
	if start < len(src) {
		rest = statement{text: strings.TrimSpace(text.String()), raw: src[start:], line: startLine}
		if strings.TrimSpace(rest.raw) == "" {
			rest.raw = ""
		}
	}
	return stmts, rest
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
