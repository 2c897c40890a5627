package wire

import (
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/lakesql/lakesql/planner"
)

// describe corrects a result's fields from the sinks' declarations and
// pads its DATETIME(p) and TIMESTAMP(p) values to p digits (see
// planner.Engine.DescribeFields), on the text and the binary protocol.
func (h *handler) describe(r *sqltypes.Result) {
	if r == nil || len(r.Fields) == 0 {
		return
	}
	h.describeFields(r.Fields)
	planner.PadFractions(r.Fields, r.Rows)
}

func (h *handler) describeFields(fields []*querypb.Field) {
	if len(fields) > 0 {
		h.s.engine.DescribeFields(fields)
	}
}
