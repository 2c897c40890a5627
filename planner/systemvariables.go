package planner

// The system variables lakesql adds to go-mysql-server's (lakesql_epoch,
// lakesql_vacuum_retention_check)
// and the server values it sets (version, isolation level, time zone).

import (
	"context"
	"fmt"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// EpochVariable is the session variable that sets the next transaction's epoch.
const EpochVariable = "lakesql_epoch"

// MaxNamedEpoch is the largest epoch SET lakesql_epoch accepts, 2^62. The
// epochs above it are left for the automatic epochs (last + 1) that follow
// a named one: an epoch at the top of the int64 range would leave none,
// and every later write of the sink would fail, across restarts too.
const MaxNamedEpoch = int64(1) << 62

var registerOnce sync.Once

// ServerVersion is the MySQL version lakesql reports: in the server's
// greeting, @@version and VERSION(), on every path.
const ServerVersion = "8.0.33-lakesql"

// VersionComment is @@version_comment, which clients print on connect.
const VersionComment = "lakesql"

// IsolationLevel is the one isolation level lakesql gives: a statement
// reads the sinks' last committed versions (README, Reading).
const IsolationLevel = "READ-COMMITTED"

// serverVariables are go-mysql-server's defaults that would describe
// Dolt rather than lakesql.
var serverVariables = map[string]any{
	"version":               ServerVersion,
	"version_comment":       VersionComment,
	"transaction_isolation": IsolationLevel,
	"tx_isolation":          IsolationLevel,
	// TIMESTAMP values go to the tables as UTC whatever the session's
	// time_zone (README, Limitations); under go-mysql-server's default,
	// SYSTEM, NOW() would give the machine's wall clock, stored as UTC
	// and off by the machine's offset. A session may still SET time_zone.
	"time_zone": "+00:00",
	// MySQL's default, not go-mysql-server's 1 GiB: the bound of the
	// values string functions build (packetbound.go) and of a row sent.
	"max_allowed_packet": int64(DefaultMaxAllowedPacket),
}

// registerSystemVariables adds lakesql_epoch to go-mysql-server's system
// variables (a process-wide registry) and sets serverVariables.
func registerSystemVariables() {
	registerOnce.Do(func() {
		gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{&gms.MysqlSystemVariable{
			Name:    EpochVariable,
			Scope:   gms.GetMysqlScope(gms.SystemVariableScope_Session),
			Dynamic: true,
			Type:    epochVariableType{types.NewSystemIntType(EpochVariable, -1, MaxNamedEpoch, false)},
			Default: int64(-1),
		}, &gms.MysqlSystemVariable{
			Name:    VacuumRetentionCheckVariable,
			Scope:   gms.GetMysqlScope(gms.SystemVariableScope_Session),
			Dynamic: true,
			Type:    types.NewSystemBoolType(VacuumRetentionCheckVariable),
			Default: int8(1),
		}})
		if err := gms.SystemVariables.AssignValues(serverVariables); err != nil {
			panic(fmt.Sprintf("set lakesql's server variables: %v", err))
		}
	})
}

// epochVariableType is lakesql_epoch's type: go-mysql-server's system
// integer, which converts a uint64 to int64 by wrapping, so that
// 18446744073709551615 would become -1 (unset) and 2^63 a negative epoch.
// Such values are refused (1231) like any other out of range.
type epochVariableType struct{ gms.SystemVariableType }

func (t epochVariableType) Convert(ctx context.Context, v any) (any, gms.ConvertInRange, error) {
	switch n := v.(type) {
	case uint64:
		if n > uint64(MaxNamedEpoch) {
			return nil, gms.OutOfRange, gms.ErrInvalidSystemVariableValue.New(EpochVariable, v)
		}
	case uint:
		if uint64(n) > uint64(MaxNamedEpoch) {
			return nil, gms.OutOfRange, gms.ErrInvalidSystemVariableValue.New(EpochVariable, v)
		}
	}
	return t.SystemVariableType.Convert(ctx, v)
}

// Equals implements gms.Type: the embedded type's Equals knows only itself.
func (t epochVariableType) Equals(other gms.Type) bool {
	o, ok := other.(epochVariableType)
	return ok && t.SystemVariableType.Equals(o.SystemVariableType)
}
