package planner

// Group commit. A transaction that only appends to a sink does not take
// the sink's lock when it writes: it keeps its rows (as Arrow batches, up
// to the sink's small-epoch bound) and hands them to the sink's
// groupCommitter at COMMIT. The COMMITs that arrive while a commit of the
// sink is in flight wait, and the next of them to lead takes them all and
// commits them as one table version: n transactions are epochs last+1 …
// last+n, the version records last+n for the writer id, and each COMMIT
// returns once that version is durable, or fails with every other one of
// the group. A transaction is written alone (with the sink's lock, from
// its first write) when grouping could change what it means: an explicit
// epoch (a replay must be skipped alone), an upsert sink (UPDATE and
// DELETE read, then write), a table with row rules (a violation must fail
// its statement), an INSERT that evolves the schema, or more rows than
// the bound.

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/sqlsink"
)

// pendingRows are a transaction's rows for one sink, kept until COMMIT.
type pendingRows struct {
	recs  []arrow.RecordBatch
	rows  int64
	bytes int64
}

// fits says whether rec may join the pending rows within the sink's
// small-epoch bound.
func (p *pendingRows) fits(sink *sqlsink.Sink, rec arrow.RecordBatch) bool {
	return sink.KeepsSmall(p.rows+rec.NumRows(), p.bytes+sqlsink.RecordBytes(rec))
}

func (p *pendingRows) add(rec arrow.RecordBatch) {
	rec.Retain()
	p.recs = append(p.recs, rec)
	p.rows += rec.NumRows()
	p.bytes += sqlsink.RecordBytes(rec)
}

func (p *pendingRows) release() {
	for _, r := range p.recs {
		r.Release()
	}
	p.recs = nil
}

// groupMember is one transaction's COMMIT on a sink's groupCommitter.
type groupMember struct {
	rows *pendingRows
	// lead is closed when the member is to lead the next group; done when
	// its group has committed or failed.
	lead, done chan struct{}
	leader     bool // set under groupCommitter.mu when lead is closed

	// The outcome, set before done is closed.
	res sqlsink.CommitResult
	err error
}

// groupCommitter gathers the COMMITs of one sink's appending transactions
// into table versions. At most one member leads at a time: it takes the
// sink's lock, then every member waiting, commits them, and hands the
// lead to the first member that arrived meanwhile.
type groupCommitter struct {
	mu      sync.Mutex
	queue   []*groupMember
	leading bool
}

// commit commits m's rows with those of the COMMITs waiting beside it.
// run commits a group under the sink's lock, which lock takes. A member
// whose context ends while it waits leaves the queue, unless a leader
// took it already: then its outcome is the group's.
func (g *groupCommitter) commit(ctx context.Context, m *groupMember,
	lock func(context.Context) error, unlock func(), run func(context.Context, []*groupMember)) (sqlsink.CommitResult, error) {
	m.lead, m.done = make(chan struct{}), make(chan struct{})
	g.mu.Lock()
	g.queue = append(g.queue, m)
	if !g.leading {
		g.leading, m.leader = true, true
	}
	g.mu.Unlock()
	if !m.leader {
		select {
		case <-m.done:
			return m.res, m.err
		case <-m.lead:
		case <-ctx.Done():
			g.mu.Lock()
			if i := slices.Index(g.queue, m); i >= 0 && !m.leader {
				g.queue = slices.Delete(g.queue, i, i+1)
				g.mu.Unlock()
				return sqlsink.CommitResult{}, fmt.Errorf("%w while its COMMIT waited for the sink (%w)", errInterrupted, ctx.Err())
			}
			g.mu.Unlock()
			select {
			case <-m.done:
				return m.res, m.err
			case <-m.lead:
			}
		}
	}
	if err := lock(ctx); err != nil {
		g.mu.Lock()
		if i := slices.Index(g.queue, m); i >= 0 {
			g.queue = slices.Delete(g.queue, i, i+1)
		}
		g.handOff()
		g.mu.Unlock()
		return sqlsink.CommitResult{}, err
	}
	g.mu.Lock()
	group := g.queue
	g.queue = nil
	g.mu.Unlock()
	// The group commits whatever becomes of the leader's connection: the
	// others wait on it.
	run(context.WithoutCancel(ctx), group)
	unlock()
	for _, o := range group {
		if o != m {
			close(o.done)
		}
	}
	g.mu.Lock()
	g.handOff()
	g.mu.Unlock()
	return m.res, m.err
}

// handOff makes the first waiting member the next leader, or ends the
// lead when none waits. g.mu is held.
func (g *groupCommitter) handOff() {
	if len(g.queue) == 0 {
		g.leading = false
		return
	}
	next := g.queue[0]
	next.leader = true
	close(next.lead)
}

// commitGroup writes the group's rows into one epoch of the sink and
// commits it. A member whose rows the sink refuses fails alone: the epoch
// is rolled back and begun again without it. A failed commit fails every
// member, and nothing of the group is visible.
func (h *sinkHandle) commitGroup(ctx context.Context, group []*groupMember) {
	fail := func(ms []*groupMember, err error) {
		for _, m := range ms {
			m.err = err
		}
	}
	sink, err := h.open(ctx)
	if err != nil {
		fail(group, err)
		return
	}
	live := group
	for len(live) > 0 {
		e, err := sink.BeginNextEpochs(ctx, len(live))
		if err != nil {
			fail(live, fmt.Errorf("sink %s: %w", h.rec.Name, err))
			return
		}
		refused := -1
		for i, m := range live {
			for _, rec := range m.rows.recs {
				if err := sink.Write(ctx, rec); err != nil {
					m.err = fmt.Errorf("sink %s: %w", h.rec.Name, err)
					refused = i
					break
				}
			}
			if refused >= 0 {
				break
			}
		}
		if refused >= 0 {
			_ = sink.RollbackEpoch(ctx, e)
			live = slices.Delete(slices.Clone(live), refused, refused+1)
			continue
		}
		err = sink.PreCommit(ctx, e)
		var res sqlsink.CommitResult
		if err == nil {
			res, err = sink.CommitEpoch(ctx, e)
		}
		if err != nil {
			_ = sink.RollbackEpoch(ctx, e)
			fail(live, fmt.Errorf("sink %s: group commit of %d transactions: %w", h.rec.Name, len(live), err))
			return
		}
		// The group's epochs end at the one that landed, in COMMIT order.
		first := res.Epoch - int64(len(live)-1)
		for i, m := range live {
			m.res = res
			m.res.Epoch = first + int64(i)
		}
		return
	}
}
