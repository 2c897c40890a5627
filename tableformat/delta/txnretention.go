package delta

import (
	"fmt"
	"time"
)

// TxnRetention is delta.setTransactionRetentionDuration: how long a txn
// record (an application's last version) stays in the table once its
// application stops writing. ok is false when the table sets none, and
// records are kept forever.
func (m *Metadata) TxnRetention() (d time.Duration, ok bool, err error) {
	v, ok := m.Configuration["delta.setTransactionRetentionDuration"]
	if !ok {
		return 0, false, nil
	}
	d, err = parseInterval(v)
	if err != nil {
		return 0, true, fmt.Errorf("delta.setTransactionRetentionDuration: %w", err)
	}
	return d, true, nil
}
