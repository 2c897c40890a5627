package planner

// The string functions that build a value larger than their arguments
// (REPEAT('x', 1<<30) is a gigabyte) honour max_allowed_packet as MySQL's
// do: a result that would be larger is NULL, with warning 1301, and is
// never built. The provider gives go-mysql-server these functions in place
// of its built-ins (the catalog asks the provider first): each wraps the
// built-in, works out the result's size from its evaluated arguments, and
// only then lets the built-in build it.

import (
	"fmt"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// DefaultMaxAllowedPacket is max_allowed_packet's default, MySQL's: 64 MiB.
const DefaultMaxAllowedPacket = 64 << 20

// erWarnAllowedPacketOverflowed is MySQL's ER_WARN_ALLOWED_PACKET_OVERFLOWED.
const erWarnAllowedPacketOverflowed = 1301

// resultSize returns an upper bound on the bytes of a function's result,
// from its evaluated arguments (and their types); ok is false when it
// cannot tell (the result is checked once built).
type resultSize func(ctx *gms.Context, args []any, ts []gms.Type) (n int64, ok bool)

// packetBounded are the bounded functions by name.
var packetBounded = map[string]resultSize{
	"repeat": func(ctx *gms.Context, a []any, _ []gms.Type) (int64, bool) {
		return mul(byteLen(a[0]), intArg(ctx, a[1])), true
	},
	"space": func(ctx *gms.Context, a []any, _ []gms.Type) (int64, bool) {
		return max(intArg(ctx, a[0]), 0), true
	},
	"lpad": padSize,
	"rpad": padSize,
	"concat": func(_ *gms.Context, a []any, _ []gms.Type) (int64, bool) {
		return sumLen(a)
	},
	"concat_ws": func(_ *gms.Context, a []any, _ []gms.Type) (int64, bool) {
		n, ok := sumLen(a[1:])
		return n + mul(byteLen(a[0]), int64(max(len(a)-2, 0))), ok
	},
	"replace": func(_ *gms.Context, a []any, _ []gms.Type) (int64, bool) {
		s, from, to, ok := str(a[0]), str(a[1]), str(a[2]), isStr(a[0]) && isStr(a[1]) && isStr(a[2])
		if !ok || from == "" || len(to) <= len(from) {
			return int64(len(s)), ok
		}
		return int64(len(s)) + mul(int64(strings.Count(s, from)), int64(len(to)-len(from))), true
	},
	"to_base64": func(_ *gms.Context, a []any, _ []gms.Type) (int64, bool) {
		n := byteLen(a[0])
		return (n+2)/3*4 + n/57 + 1, true // 76-character lines
	},
	"hex": func(_ *gms.Context, a []any, _ []gms.Type) (int64, bool) {
		return 2*byteLen(a[0]) + 32, true
	},
	"quote": func(_ *gms.Context, a []any, _ []gms.Type) (int64, bool) {
		return 2*byteLen(a[0]) + 2, true
	},
}

// padSize is LPAD's and RPAD's: the length asked for, in characters of
// the string's character set at their widest (MySQL's reckoning).
func padSize(ctx *gms.Context, a []any, ts []gms.Type) (int64, bool) {
	if len(a) < 2 {
		return 0, false
	}
	width := int64(1)
	if tc, ok := ts[0].(gms.TypeWithCollation); ok && !types.IsBinaryType(ts[0]) {
		width = int64(tc.Collation().CharacterSet().MaxLength())
	}
	return mul(max(intArg(ctx, a[1]), 0), width), true
}

// packetBoundedFunction returns the bounded function of a name, if it is
// one (the provider's Function gives go-mysql-server these).
func packetBoundedFunction(name string) (gms.Function, bool) {
	name = strings.ToLower(name)
	size, ok := packetBounded[name]
	if !ok {
		return nil, false
	}
	builtin, ok := builtinFunctions[name]
	if !ok {
		return nil, false
	}
	return gms.FunctionN{Name: name, Fn: func(args ...gms.Expression) (gms.Expression, error) {
		e, err := builtin.NewInstance(args)
		if err != nil {
			return nil, err
		}
		return &boundedBuilder{Expression: e, name: name, size: size}, nil
	}}, true
}

var builtinFunctions = func() map[string]gms.Function {
	m := map[string]gms.Function{}
	for _, f := range function.BuiltIns {
		if _, ok := packetBounded[f.FunctionName()]; ok {
			m[f.FunctionName()] = f
		}
	}
	return m
}()

// boundedBuilder is a built-in string function whose result is bounded by
// max_allowed_packet.
type boundedBuilder struct {
	gms.Expression // the built-in
	name           string
	size           resultSize
}

var (
	_ gms.FunctionExpression = (*boundedBuilder)(nil)
	_ gms.CollationCoercible = (*boundedBuilder)(nil)
)

func (b *boundedBuilder) FunctionName() string { return b.name }

func (b *boundedBuilder) Description() string {
	if f, ok := b.Expression.(gms.FunctionExpression); ok {
		return f.Description()
	}
	return b.name
}

func (b *boundedBuilder) CollationCoercibility(ctx *gms.Context) (gms.CollationID, byte) {
	if c, ok := b.Expression.(gms.CollationCoercible); ok {
		return c.CollationCoercibility(ctx)
	}
	return gms.Collation_binary, 5
}

// IsNullable is true: a result too large is NULL.
func (b *boundedBuilder) IsNullable() bool { return true }

func (b *boundedBuilder) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	e, err := b.Expression.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &boundedBuilder{Expression: e, name: b.name, size: b.size}, nil
}

// Eval evaluates the arguments once, refuses a result too large before
// it is built, and has the built-in build it from the values.
func (b *boundedBuilder) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	children := b.Children()
	args := make([]any, len(children))
	ts := make([]gms.Type, len(children))
	lits := make([]gms.Expression, len(children))
	for i, c := range children {
		v, err := c.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		args[i], ts[i] = v, c.Type()
		lits[i] = expression.NewLiteral(v, ts[i])
	}
	limit := maxAllowedPacket(ctx)
	if n, ok := b.size(ctx, args, ts); ok && n > limit {
		return b.overflow(ctx, limit), nil
	}
	e, err := b.Expression.WithChildren(lits...)
	if err != nil {
		return nil, err
	}
	v, err := e.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if byteLen(v) > limit {
		return b.overflow(ctx, limit), nil
	}
	return v, nil
}

func (b *boundedBuilder) overflow(ctx *gms.Context, limit int64) any {
	ctx.Session.Warn(&gms.Warning{Level: "Warning", Code: erWarnAllowedPacketOverflowed,
		Message: fmt.Sprintf("Result of %s() was larger than max_allowed_packet (%d) - truncated", b.name, limit)})
	return nil
}

// maxAllowedPacket is the session's max_allowed_packet.
func maxAllowedPacket(ctx *gms.Context) int64 {
	v, err := ctx.Session.GetSessionVariable(ctx, "max_allowed_packet")
	if err == nil {
		if n, _, err := types.Int64.Convert(ctx, v); err == nil {
			if n, ok := n.(int64); ok && n > 0 {
				return n
			}
		}
	}
	return DefaultMaxAllowedPacket
}

func isStr(v any) bool {
	switch v.(type) {
	case string, []byte:
		return true
	}
	return false
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// byteLen is the length of a string or bytes value; other values (numbers,
// dates) are short.
func byteLen(v any) int64 {
	switch v := v.(type) {
	case string:
		return int64(len(v))
	case []byte:
		return int64(len(v))
	case nil:
		return 0
	}
	return 64
}

func sumLen(a []any) (int64, bool) {
	var n int64
	for _, v := range a {
		n += byteLen(v)
	}
	return n, true
}

// intArg is an integer argument (0 when it is not one).
func intArg(ctx *gms.Context, v any) int64 {
	if v == nil {
		return 0
	}
	n, _, err := types.Int64.Convert(ctx, v)
	if err != nil {
		return 0
	}
	i, _ := n.(int64)
	return i
}

// mul multiplies two sizes, saturating instead of overflowing.
func mul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}
