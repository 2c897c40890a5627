package deltalake

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// TestBounds: bounds come back typed as the key the sink compares them
// with: a float column's as the float32 its text stands for, a double's
// and an integer's as float64, strings as strings; nulls, nested values
// and columns not in the schema have none.
func TestBounds(t *testing.T) {
	logical := map[string]*delta.StructField{
		"f":     {Name: "f", Type: delta.TypeFloat},
		"d":     {Name: "d", Type: delta.TypeDouble},
		"col-1": {Name: "n", Type: delta.TypeLong},
		"s":     {Name: "s", Type: delta.TypeString},
		"st":    {Name: "st", Type: &delta.StructType{}},
		"z":     {Name: "z", Type: delta.TypeLong},
	}
	minV, maxV := bounds(`{"numRecords":2,
		"minValues":{"f":1.1,"d":0.30000000000000004,"col-1":-7,"s":"a","st":{"x":1},"z":null,"gone":1},
		"maxValues":{"f":3.4028235e+38,"d":1e308,"col-1":9007199254740993,"s":"b"}}`, logical)
	wantMin := map[string]any{"f": float32(1.1), "d": 0.30000000000000004, "n": float64(-7), "s": "a"}
	wantMax := map[string]any{"f": float32(3.4028235e+38), "d": 1e308, "n": float64(9007199254740993), "s": "b"}
	if diff := cmp.Diff(wantMin, minV); diff != "" {
		t.Errorf("min (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantMax, maxV); diff != "" {
		t.Errorf("max (-want +got):\n%s", diff)
	}
	if minV, maxV := bounds(`not json`, logical); minV != nil || maxV != nil {
		t.Errorf("bounds of bad stats: %v %v", minV, maxV)
	}
}
