package planner

// LOAD_FILE(name), in place of go-mysql-server's (which follows a symlink
// in its secure_file_priv folder wherever it points, and reads only the
// folder's own files, not its subfolders'): the file is opened through
// openFile (filefuncs.go). As in MySQL, a file that is refused, missing,
// unreadable, not a regular file or larger than max_allowed_packet gives
// NULL, not an error.

import (
	"fmt"
	"io"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Function implements gms.FunctionProvider: the functions lakesql has in
// place of go-mysql-server's built-ins of the same name.
func (p *provider) Function(_ *gms.Context, name string) (gms.Function, bool) {
	if strings.EqualFold(name, "load_file") {
		return gms.Function1{Name: "load_file", Fn: func(name gms.Expression) gms.Expression {
			return &fileGated{loadFile: newLoadFile(name).(*loadFile), engine: p.engine}
		}}, true
	}
	if n := strings.ToLower(name); n == "sum" || n == "avg" {
		return exactFunction(n), true
	}
	return packetBoundedFunction(name)
}

// loadFile is LOAD_FILE(name).
type loadFile struct{ name gms.Expression }

var _ gms.FunctionExpression = (*loadFile)(nil)
var _ gms.CollationCoercible = (*loadFile)(nil)

func newLoadFile(name gms.Expression) gms.Expression { return &loadFile{name: name} }

func (l *loadFile) FunctionName() string { return "load_file" }

func (l *loadFile) Description() string {
	return "returns the content of a file under DATA/files, or NULL."
}

func (l *loadFile) Resolved() bool { return l.name.Resolved() }

func (l *loadFile) String() string { return fmt.Sprintf("load_file(%s)", l.name) }

func (l *loadFile) Type() gms.Type { return types.LongBlob }

func (l *loadFile) IsNullable() bool { return true }

func (l *loadFile) Children() []gms.Expression { return []gms.Expression{l.name} }

func (l *loadFile) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(l, len(children), 1)
	}
	return newLoadFile(children[0]), nil
}

func (*loadFile) CollationCoercibility(*gms.Context) (gms.CollationID, byte) {
	return gms.Collation_binary, 5
}

func (l *loadFile) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := l.name.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	name, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	e, err := sessionEngine(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := ctx.Session.GetSessionVariable(ctx, "max_allowed_packet")
	if err != nil {
		return nil, err
	}
	n, _, err := types.Int64.Convert(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("max_allowed_packet: %w", err)
	}
	max := n.(int64)
	f, err := e.openFile(name.(string))
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > max {
		return nil, nil
	}
	// Read one byte past the limit: a file that grew since it was
	// checked is still too large.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || int64(len(b)) > max {
		return nil, nil
	}
	return b, nil
}
