package sqlsink

import (
	"container/list"
	"sync"
	"time"
)

// BufferPool bounds the write buffers that the sinks sharing it keep open.
// A buffer is an embedded DuckDB database (a few MB of memory each, most
// of a sink's cost), opened when the sink opens or begins an epoch. The
// pool closes the buffers used least recently beyond Max, and those unused
// for IdleAfter; the sink opens its buffer again when it next begins an
// epoch. Nothing else of the sink is closed: its last committed epoch,
// counters and health stay, so a sink whose buffer was released keeps
// every guarantee and answers SHOW SINK STATUS without I/O. A buffer that
// is in an epoch (begun, not yet committed or rolled back) or holds rows
// is never released: sinks in use can hold the pool above Max for as long
// as they are.
type BufferPool struct {
	max      int
	idle     time.Duration
	onChange func(delta int)
	now      func() time.Time

	mu  sync.Mutex
	lru list.List // of *pooled, most recently used at the front
	at  map[*Sink]*list.Element
}

type pooled struct {
	s    *Sink
	used time.Time
}

// NewBufferPool returns a pool keeping at most max buffers open (0: no
// bound) and releasing those unused for idle (0: never by age). onChange,
// when not nil, is told every change of the number of open buffers.
func NewBufferPool(max int, idle time.Duration, onChange func(delta int)) *BufferPool {
	return &BufferPool{max: max, idle: idle, onChange: onChange, now: time.Now, at: map[*Sink]*list.Element{}}
}

// Open returns the number of open buffers.
func (p *BufferPool) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lru.Len()
}

// IdleAfter is the age past which an unused buffer is released (0: never).
func (p *BufferPool) IdleAfter() time.Duration { return p.idle }

// used records that s uses its buffer now, then releases the buffers of
// other sinks beyond the bound, least recently used first. s.mu is held:
// other sinks are only tried (TryLock), never waited for, so two sinks
// evicting each other cannot deadlock.
func (p *BufferPool) used(s *Sink) {
	p.mu.Lock()
	if el, ok := p.at[s]; ok {
		el.Value.(*pooled).used = p.now()
		p.lru.MoveToFront(el)
		p.mu.Unlock()
		return
	}
	p.at[s] = p.lru.PushFront(&pooled{s: s, used: p.now()})
	var victims []*Sink
	if p.max > 0 && p.lru.Len() > p.max {
		for el := p.lru.Back(); el != nil; el = el.Prev() {
			if v := el.Value.(*pooled).s; v != s {
				victims = append(victims, v)
			}
		}
	}
	p.mu.Unlock()
	p.changed(1)
	for _, v := range victims {
		if p.Open() <= p.max {
			return
		}
		v.releaseBuffer()
	}
}

// touch records a use of s's buffer without evicting anything.
func (p *BufferPool) touch(s *Sink) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if el, ok := p.at[s]; ok {
		el.Value.(*pooled).used = p.now()
		p.lru.MoveToFront(el)
	}
}

// forget removes s, whose buffer is closed.
func (p *BufferPool) forget(s *Sink) {
	p.mu.Lock()
	el, ok := p.at[s]
	if ok {
		p.lru.Remove(el)
		delete(p.at, s)
	}
	p.mu.Unlock()
	if ok {
		p.changed(-1)
	}
}

func (p *BufferPool) changed(delta int) {
	if p.onChange != nil {
		p.onChange(delta)
	}
}

// ReleaseIdle releases the buffers unused for IdleAfter, except those in
// use; it returns how many it released. The engine calls it periodically.
func (p *BufferPool) ReleaseIdle() int {
	if p.idle <= 0 {
		return 0
	}
	cutoff := p.now().Add(-p.idle)
	p.mu.Lock()
	var victims []*Sink
	for el := p.lru.Back(); el != nil; el = el.Prev() {
		if e := el.Value.(*pooled); e.used.Before(cutoff) {
			victims = append(victims, e.s)
		} else {
			break // the rest were used later
		}
	}
	p.mu.Unlock()
	n := 0
	for _, v := range victims {
		if v.releaseBuffer() {
			n++
		}
	}
	return n
}

// releaseBuffer closes the sink's buffer when it is not in use: no epoch
// open, no rows buffered, and no call on the sink running (s.mu is only
// tried). It reports whether the buffer is closed now.
func (s *Sink) releaseBuffer() bool {
	if !s.mu.TryLock() {
		return false
	}
	defer s.mu.Unlock()
	if s.buf == nil {
		return true
	}
	if _, open := s.m.OpenEpoch(); open || s.buf.rows > 0 || len(s.buf.pending) > 0 {
		return false
	}
	s.closeBuffer()
	return true
}

// closeBuffer closes and forgets the buffer; s.mu is held. A buffer that
// fails to close is still gone: the next epoch opens a new one.
func (s *Sink) closeBuffer() error {
	if s.buf == nil {
		return nil
	}
	err := s.buf.close()
	s.buf = nil
	if s.cfg.Buffers != nil {
		s.cfg.Buffers.forget(s)
	}
	return err
}
