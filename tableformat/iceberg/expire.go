package iceberg

import (
	"context"
	"fmt"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ExpiryPlan is what one snapshot expiry removes from a table's metadata.
type ExpiryPlan struct {
	// Expired are the snapshots removed, Kept the ones that stay.
	Expired, Kept []table.Snapshot
	// Properties are the exactly-once records the same commit keeps in the
	// table's properties (ExpiryEpochProperties).
	Properties map[string]string
}

// PlanExpiry chooses the snapshots of meta to expire, by the spec's rules
// as iceberg-go's Transaction.ExpireSnapshots applies them, but against a
// clock of the caller's (nowMs): a branch keeps its newest minKeep
// snapshots and every ancestor younger than maxAgeMs (a ref's own
// min-snapshots-to-keep and max-snapshot-age-ms take precedence), every
// ref's snapshot stays, and a snapshot on no branch's line stays while
// younger than maxAgeMs. Unlike iceberg-go it never removes a branch or
// tag: a ref stays until its owner drops it.
func PlanExpiry(meta table.Metadata, nowMs, maxAgeMs int64, minKeep int) (ExpiryPlan, error) {
	if minKeep < 1 {
		minKeep = 1
	}
	keep := map[int64]bool{}
	onLine := map[int64]bool{}
	for _, ref := range meta.Refs() {
		keep[ref.SnapshotID] = true
		if ref.SnapshotRefType != table.BranchRef {
			onLine[ref.SnapshotID] = true
			continue
		}
		n, age := minKeep, maxAgeMs
		if ref.MinSnapshotsToKeep != nil {
			n = *ref.MinSnapshotsToKeep
		}
		if ref.MaxSnapshotAgeMs != nil {
			age = *ref.MaxSnapshotAgeMs
		}
		i, young := 0, true
		for _, s := range table.AncestorsOf(ref.SnapshotID, meta.SnapshotByID) {
			onLine[s.SnapshotID] = true
			if young && i >= n && nowMs-s.TimestampMs > age {
				young = false // from here on the line's snapshots are too old
			}
			if young {
				keep[s.SnapshotID] = true
			}
			i++
		}
	}
	var plan ExpiryPlan
	expired := map[int64]bool{}
	for _, s := range meta.Snapshots() {
		if !onLine[s.SnapshotID] && nowMs-s.TimestampMs <= maxAgeMs {
			keep[s.SnapshotID] = true
		}
		if keep[s.SnapshotID] {
			plan.Kept = append(plan.Kept, s)
		} else {
			plan.Expired = append(plan.Expired, s)
			expired[s.SnapshotID] = true
		}
	}
	props, err := ExpiryEpochProperties(meta, expired)
	if err != nil {
		return ExpiryPlan{}, err
	}
	plan.Properties = props
	return plan, nil
}

// Expire commits plan on tbl: one metadata commit that removes the expired
// snapshots and sets the epoch properties, pinned to the main branch's
// head tbl was loaded with, so that a snapshot landing meanwhile (which
// may make another record the newest) fails it with ErrConflict and the
// caller plans again. It deletes no file; the caller does, knowing which
// only expired snapshots referenced.
func (c *Catalog) Expire(ctx context.Context, tbl *table.Table, plan ExpiryPlan) (*table.Table, error) {
	if len(plan.Expired) == 0 {
		return tbl, nil
	}
	meta := tbl.Metadata()
	reqs := []table.Requirement{table.AssertTableUUID(meta.TableUUID())}
	var head *int64
	if s := meta.SnapshotByName(table.MainBranch); s != nil {
		id := s.SnapshotID
		head = &id
	}
	reqs = append(reqs, table.AssertRefSnapshotID(table.MainBranch, head))
	var updates []table.Update
	if len(plan.Properties) > 0 {
		updates = append(updates, table.NewSetPropertiesUpdate(ice.Properties(plan.Properties)))
	}
	ids := make([]int64, len(plan.Expired))
	for i, s := range plan.Expired {
		ids[i] = s.SnapshotID
	}
	// postCommit false: iceberg-go deletes nothing; files are ours to remove.
	updates = append(updates, table.NewRemoveSnapshotsUpdate(ids, false))
	ident := tbl.Identifier()
	ctx = c.WithIO(ctx)
	call, cancel := c.Bound(ctx)
	defer cancel()
	_, _, err := c.cat.CommitTable(call, ident, reqs, updates)
	if err = c.Timed(call, ctx, err); err != nil {
		if IsConflict(err) {
			return nil, fmt.Errorf("expire snapshots of %s: %w: %w", strings.Join(ident, "."), ErrConflict, err)
		}
		return nil, c.Scrub(fmt.Errorf("expire snapshots of %s: %w", strings.Join(ident, "."), err))
	}
	return c.LoadTable(ctx, ident)
}
