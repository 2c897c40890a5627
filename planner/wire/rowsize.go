package wire

// A result row larger than max_allowed_packet is refused as MySQL refuses
// it, with 1153 (08S01), before it is written: a client would refuse a
// packet that large anyway, and the values built by functions are bounded
// by the same variable (planner/packetbound.go).

import (
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/lakesql/lakesql/planner"
)

var errPacketTooLarge = mysql.NewSQLError(mysql.ERNetPacketTooLarge, mysql.SSNetError,
	"Got a packet bigger than 'max_allowed_packet' bytes")

// checkRowSizes refuses r when one of its rows, as a text protocol row
// packet, is larger than the connection's max_allowed_packet.
func (h *handler) checkRowSizes(c *mysql.Conn, r *sqltypes.Result) error {
	if r == nil || len(r.Rows) == 0 {
		return nil
	}
	limit := h.maxAllowedPacket(c)
	for _, row := range r.Rows {
		n := int64(0)
		for _, v := range row {
			n += lenEncSize(v.Len())
		}
		if n > limit {
			return errPacketTooLarge
		}
	}
	return nil
}

// lenEncSize is the bytes of a length-encoded value of n bytes.
func lenEncSize(n int) int64 {
	switch {
	case n < 251:
		return int64(n) + 1
	case n < 1<<16:
		return int64(n) + 3
	case n < 1<<24:
		return int64(n) + 4
	}
	return int64(n) + 9
}

func (h *handler) maxAllowedPacket(c *mysql.Conn) int64 {
	if sess := h.session(c); sess != nil {
		v, err := sess.GetSessionVariable(gms.NewEmptyContext(), "max_allowed_packet")
		if err == nil {
			if n, _, err := types.Int64.Convert(gms.NewEmptyContext(), v); err == nil {
				if n, ok := n.(int64); ok && n > 0 {
					return n
				}
			}
		}
	}
	return planner.DefaultMaxAllowedPacket
}
