package simclient

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// Canceler is a member of a CancelSet: what its context's end interrupts
// (a client's socket, whose blocked read returns).
type Canceler interface{ Cancel() }

// CancelSet cancels its members once its context ends: one
// context.AfterFunc for every client of a run, where one for each kept
// about 150 bytes a client (the callback, its closure and the context's
// child entry) and took the context's lock, which every client shares,
// at each client's start.
//
// A member keeps its place in the set in an int32 of its own (Add's
// slot), so that Remove takes it out without a search: -1 when it is in
// none.
type CancelSet struct {
	ctx  context.Context
	stop func() bool // the AfterFunc's

	mu      sync.Mutex
	members []cancelMember
	// fired: the context ended and the members were cancelled; set
	// under mu, read without it too (Shared.Cancels).
	fired atomic.Bool
}

type cancelMember struct {
	c    Canceler
	slot *int32
}

// NewCancelSet returns a set whose members ctx's end cancels; Close
// releases ctx's hold on it.
func NewCancelSet(ctx context.Context) *CancelSet {
	s := &CancelSet{ctx: ctx}
	s.stop = context.AfterFunc(ctx, s.fire)
	return s
}

// Context returns the context whose end cancels the members.
func (s *CancelSet) Context() context.Context { return s.ctx }

// Add makes c a member, its place kept in *slot; c is cancelled at once,
// on this goroutine, when the context has ended (then *slot is -1).
func (s *CancelSet) Add(c Canceler, slot *int32) {
	s.mu.Lock()
	if s.fired.Load() {
		*slot = -1
		s.mu.Unlock()
		c.Cancel()
		return
	}
	*slot = int32(len(s.members))
	s.members = append(s.members, cancelMember{c: c, slot: slot})
	s.mu.Unlock()
}

// Remove takes the member whose place *slot keeps out of the set (nothing
// when it is -1: in none, or cancelled already).
func (s *CancelSet) Remove(slot *int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := *slot
	if i < 0 {
		return
	}
	last := int32(len(s.members) - 1)
	if i != last {
		s.members[i] = s.members[last]
		*s.members[i].slot = i
	}
	s.members[last] = cancelMember{}
	s.members = s.members[:last]
	*slot = -1
}

// Len returns how many members the set has.
func (s *CancelSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.members)
}

// fire cancels every member, outside the lock (a Cancel may take its
// member's own locks), and makes later Adds cancel at once.
func (s *CancelSet) fire() {
	s.mu.Lock()
	s.fired.Store(true)
	ms := s.members
	s.members = nil
	for _, m := range ms {
		*m.slot = -1
	}
	s.mu.Unlock()
	for _, m := range ms {
		m.c.Cancel()
	}
}

// Close releases the context's hold on the set; members are no longer
// cancelled by it.
func (s *CancelSet) Close() { s.stop() }

// cancelSets are a Shared's CancelSets, one per context its clients ran
// under (a run's phases each have theirs).
type cancelSets struct {
	mu   sync.Mutex
	sets []*CancelSet
}

// Cancels returns the set that ctx's end cancels, made at the first call
// for ctx. Sets that have fired are let go (their members' Removes still
// work); that reads their flag, not their contexts, whose Err takes the
// lock every client shares.
func (sh *Shared) Cancels(ctx context.Context) *CancelSet {
	cs := &sh.cancels
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var found *CancelSet
	cs.sets = slices.DeleteFunc(cs.sets, func(s *CancelSet) bool {
		if s.ctx == ctx {
			found = s
			return false
		}
		return s.fired.Load()
	})
	if found == nil {
		found = NewCancelSet(ctx)
		cs.sets = append(cs.sets, found)
	}
	return found
}

// closeCancels releases every set's context (Shared.Close).
func (sh *Shared) closeCancels() {
	cs := &sh.cancels
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, s := range cs.sets {
		s.Close()
	}
	cs.sets = nil
}
