package delta

// Column views over the Arrow arrays of a checkpoint batch, for the
// decoders of checkpoint_decode.go.
//
// Each view wraps one Arrow child array (nil when the file lacks the field,
// which reads as all-null) and checks its type once per batch, so the per-row
// work is plain slice indexing.

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// cpqChild returns the child named name, or nil.
func cpqChild(st *array.Struct, name string) arrow.Array {
	if st == nil {
		return nil
	}
	idx, ok := st.DataType().(*arrow.StructType).FieldIdx(name)
	if !ok {
		return nil
	}
	return st.Field(idx)
}

func cpqValid(a arrow.Array, i int) bool { return a != nil && a.IsValid(i) }

// cpqStrCol reads a string or binary column. The value bytes of the batch are
// copied to one Go string once, and values are substrings of it: no
// allocation per value, and nothing aliases Arrow buffers.
type cpqStrCol struct {
	name  string
	arr   arrow.Array
	off32 []int32
	off64 []int64
	data  string
}

func newCPQStrCol(name string, a arrow.Array) (cpqStrCol, error) {
	c := cpqStrCol{name: name, arr: a}
	switch a := a.(type) {
	case nil:
	case *array.String:
		c.off32, c.data = a.ValueOffsets(), string(a.ValueBytes())
	case *array.Binary:
		c.off32, c.data = a.ValueOffsets(), string(a.ValueBytes())
	case *array.LargeString:
		c.off64, c.data = a.ValueOffsets(), string(a.ValueBytes())
	case *array.LargeBinary:
		c.off64, c.data = a.ValueOffsets(), string(a.ValueBytes())
	case *array.Null:
	default:
		return c, corrupt("checkpoint parquet: %s has type %s, want string", name, a.DataType())
	}
	return c, nil
}

// get returns value i and whether it is non-null.
func (c *cpqStrCol) get(i int) (string, bool) {
	if !cpqValid(c.arr, i) {
		return "", false
	}
	if c.off32 != nil {
		base := c.off32[0]
		return c.data[c.off32[i]-base : c.off32[i+1]-base], true
	}
	if c.off64 != nil {
		base := c.off64[0]
		return c.data[c.off64[i]-base : c.off64[i+1]-base], true
	}
	return "", false // a Null-typed column
}

func (c *cpqStrCol) req(i, row int) (string, error) {
	s, ok := c.get(i)
	if !ok {
		return "", corrupt("checkpoint row %d: %s is null", row, c.name)
	}
	return s, nil
}

func (c *cpqStrCol) opt(i int) *string {
	s, ok := c.get(i)
	if !ok {
		return nil
	}
	return &s
}

// cpqIntCol reads any integer column as int64: Spark writes int where the
// protocol says long in some versions (and other writers the reverse).
type cpqIntCol struct {
	name string
	arr  arrow.Array
	v    []int64
}

func newCPQIntCol(name string, a arrow.Array) (cpqIntCol, error) {
	c := cpqIntCol{name: name, arr: a}
	widen := func(n int, at func(int) int64) {
		c.v = make([]int64, n)
		for i := range c.v {
			c.v[i] = at(i)
		}
	}
	switch a := a.(type) {
	case nil, *array.Null:
		c.arr = nil
	case *array.Int64:
		c.v = a.Int64Values()
	case *array.Int32:
		vs := a.Int32Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Int16:
		vs := a.Int16Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Int8:
		vs := a.Int8Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Uint32:
		vs := a.Uint32Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Uint16:
		vs := a.Uint16Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Uint8:
		vs := a.Uint8Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Uint64:
		vs := a.Uint64Values()
		for i, v := range vs {
			if v > math.MaxInt64 && a.IsValid(i) {
				return c, corrupt("checkpoint parquet: %s value %d overflows a long", name, v)
			}
		}
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	default:
		return c, corrupt("checkpoint parquet: %s has type %s, want an integer", name, a.DataType())
	}
	return c, nil
}

func (c *cpqIntCol) get(i int) (int64, bool) {
	if !cpqValid(c.arr, i) {
		return 0, false
	}
	return c.v[i], true
}

func (c *cpqIntCol) req(i, row int) (int64, error) {
	v, ok := c.get(i)
	if !ok {
		return 0, corrupt("checkpoint row %d: %s is null", row, c.name)
	}
	return v, nil
}

func (c *cpqIntCol) opt(i int) *int64 {
	v, ok := c.get(i)
	if !ok {
		return nil
	}
	return &v
}

// req32 is req for fields the protocol types as int.
func (c *cpqIntCol) req32(i, row int) (int32, error) {
	v, err := c.req(i, row)
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, corrupt("checkpoint row %d: %s value %d overflows an int", row, c.name, v)
	}
	return int32(v), nil
}

type cpqBoolCol struct {
	name string
	arr  *array.Boolean
}

func newCPQBoolCol(name string, a arrow.Array) (cpqBoolCol, error) {
	switch a := a.(type) {
	case nil, *array.Null:
		return cpqBoolCol{name: name}, nil
	case *array.Boolean:
		return cpqBoolCol{name: name, arr: a}, nil
	default:
		return cpqBoolCol{}, corrupt("checkpoint parquet: %s has type %s, want boolean", name, a.DataType())
	}
}

func (c *cpqBoolCol) get(i int) (bool, bool) {
	if c.arr == nil || c.arr.IsNull(i) {
		return false, false
	}
	return c.arr.Value(i), true
}

func (c *cpqBoolCol) req(i, row int) (bool, error) {
	v, ok := c.get(i)
	if !ok {
		return false, corrupt("checkpoint row %d: %s is null", row, c.name)
	}
	return v, nil
}

func (c *cpqBoolCol) opt(i int) *bool {
	v, ok := c.get(i)
	if !ok {
		return nil
	}
	return &v
}

// cpqMapCol reads a map<string,string> column.
type cpqMapCol struct {
	name  string
	arr   *array.Map
	keys  cpqStrCol
	items cpqStrCol
	// slab backs the *string values of all maps in the batch: one allocation
	// per batch instead of one per value.
	slab []string
}

func newCPQMapCol(name string, a arrow.Array) (cpqMapCol, error) {
	c := cpqMapCol{name: name}
	switch a := a.(type) {
	case nil, *array.Null:
		return c, nil
	case *array.Map:
		c.arr = a
	default:
		return c, corrupt("checkpoint parquet: %s has type %s, want map<string,string>", name, a.DataType())
	}
	var err error
	if c.keys, err = newCPQStrCol(name+".key", c.arr.Keys()); err != nil {
		return c, err
	}
	if c.items, err = newCPQStrCol(name+".value", c.arr.Items()); err != nil {
		return c, err
	}
	return c, nil
}

// entries returns the [start,end) item range of row i, or ok=false when null.
func (c *cpqMapCol) entries(i int) (start, end int, ok bool) {
	if c.arr == nil || c.arr.IsNull(i) {
		return 0, 0, false
	}
	s, e := c.arr.ValueOffsets(i)
	return int(s), int(e), true
}

// get returns the map of row i with nil values for null entries; nil when null.
func (c *cpqMapCol) get(i, row int) (map[string]*string, error) {
	start, end, ok := c.entries(i)
	if !ok {
		return nil, nil
	}
	m := make(map[string]*string, end-start)
	for j := start; j < end; j++ {
		k, ok := c.keys.get(j)
		if !ok {
			return nil, corrupt("checkpoint row %d: %s has a null key", row, c.name)
		}
		v, ok := c.items.get(j)
		if !ok {
			m[k] = nil
			continue
		}
		if c.slab == nil {
			c.slab = make([]string, c.items.arr.Len())
		}
		c.slab[j] = v
		m[k] = &c.slab[j]
	}
	return m, nil
}

// getNonNil is get for maps the protocol requires: null reads as empty.
func (c *cpqMapCol) getNonNil(i, row int) (map[string]*string, error) {
	m, err := c.get(i, row)
	if m == nil && err == nil {
		m = map[string]*string{}
	}
	return m, err
}

// getPlain returns the map of row i for map[string]string fields; a null value
// reads as "", as it does from a JSON commit.
func (c *cpqMapCol) getPlain(i, row int) (map[string]string, bool, error) {
	start, end, ok := c.entries(i)
	if !ok {
		return nil, false, nil
	}
	m := make(map[string]string, end-start)
	for j := start; j < end; j++ {
		k, ok := c.keys.get(j)
		if !ok {
			return nil, false, corrupt("checkpoint row %d: %s has a null key", row, c.name)
		}
		v, _ := c.items.get(j)
		m[k] = v
	}
	return m, true, nil
}

// cpqListCol reads an array<string> column.
type cpqListCol struct {
	name  string
	arr   array.ListLike
	elems cpqStrCol
}

func newCPQListCol(name string, a arrow.Array) (cpqListCol, error) {
	c := cpqListCol{name: name}
	switch a := a.(type) {
	case nil, *array.Null:
		return c, nil
	case *array.List:
		c.arr = a
	case *array.LargeList:
		c.arr = a
	default:
		return c, corrupt("checkpoint parquet: %s has type %s, want array<string>", name, a.DataType())
	}
	var err error
	c.elems, err = newCPQStrCol(name+".element", c.arr.ListValues())
	return c, err
}

// get returns the list of row i, nil when null; a null element is corrupt.
func (c *cpqListCol) get(i, row int) ([]string, error) {
	if c.arr == nil || c.arr.IsNull(i) {
		return nil, nil
	}
	s, e := c.arr.ValueOffsets(i)
	out := make([]string, 0, e-s)
	for j := int(s); j < int(e); j++ {
		v, ok := c.elems.get(j)
		if !ok {
			return nil, corrupt("checkpoint row %d: %s has a null element", row, c.name)
		}
		out = append(out, v)
	}
	return out, nil
}

// cpqStruct is a nested struct column (add.deletionVector, metaData.format).
func cpqStruct(name string, a arrow.Array) (*array.Struct, error) {
	switch a := a.(type) {
	case nil, *array.Null:
		return nil, nil
	case *array.Struct:
		return a, nil
	default:
		return nil, corrupt("checkpoint parquet: %s has type %s, want a struct", name, a.DataType())
	}
}

// cpqCols collects the first type error while a decoder is being built, so
// the constructors stay one line per field.
type cpqCols struct {
	st     *array.Struct
	prefix string
	err    error
}

func (e *cpqCols) str(name string) cpqStrCol {
	c, err := newCPQStrCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) int(name string) cpqIntCol {
	c, err := newCPQIntCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) bool(name string) cpqBoolCol {
	c, err := newCPQBoolCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) mapc(name string) cpqMapCol {
	c, err := newCPQMapCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) list(name string) cpqListCol {
	c, err := newCPQListCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) strct(name string) *array.Struct {
	c, err := cpqStruct(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) keep(err error) {
	if e.err == nil {
		e.err = err
	}
}
