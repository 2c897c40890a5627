package wire

import (
	"github.com/dolthub/vitess/go/mysql"
)

// Replication and oversized statements, refused before vitess or
// go-mysql-server can crash on them.

// ComRegisterReplica implements mysql.BinlogReplicaHandler: lakesql has no
// binary log. commandGuard answers it on a plaintext connection; this is
// the answer over TLS.
func (h *handler) ComRegisterReplica(*mysql.Conn, string, uint16, string, string) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSClientError, "%s", replicationMessage(mysql.ComRegisterReplica))
}

// ComBinlogDumpGTID implements mysql.BinlogReplicaHandler, as ComRegisterReplica.
func (h *handler) ComBinlogDumpGTID(*mysql.Conn, string, uint64, mysql.GTIDSet) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSClientError, "%s", replicationMessage(mysql.ComBinlogDumpGTID))
}

var _ mysql.BinlogReplicaHandler = (*handler)(nil)

// maxParams is the most placeholders a prepared statement may have. MySQL
// allows 65535; vitess sizes COM_STMT_EXECUTE's NULL bitmap with a 16-bit
// sum that wraps above 65528 (and then panics reading it).
const maxParams = 65528

// checkParamCount refuses a statement with more placeholders than
// maxParams, with MySQL's error for too many.
func checkParamCount(p *mysql.PrepareData) error {
	if p != nil && p.ParamsCount > maxParams {
		return mysql.NewSQLError(erPSManyParam, mysql.SSUnknownSQLState,
			"Prepared statement contains too many placeholders (%d; lakesql allows %d)", p.ParamsCount, maxParams)
	}
	return nil
}
