package simclient

import "sync"

const roomShards = 64

// RoomTable is the run-wide map of room id → instance port learned from
// ROOM_CREATED and JOIN_SUCCESS replies, so a join returning another port
// than the room's creation is caught (udp-lobby.md §5). It is sharded to
// keep thousands of clients from contending on one lock.
type RoomTable struct {
	shards [roomShards]struct {
		mu sync.Mutex
		m  map[uint32]uint16
	}
}

// NewRoomTable returns an empty table.
func NewRoomTable() *RoomTable {
	t := &RoomTable{}
	for i := range t.shards {
		t.shards[i].m = map[uint32]uint16{}
	}
	return t
}

// Observe records that room id is on port. It returns the port recorded
// before (known is false when the room was new, in which case port is now
// recorded); a known room with another port is the caller's violation and
// the table keeps the first port.
func (t *RoomTable) Observe(id uint32, port uint16) (prev uint16, known bool) {
	s := &t.shards[id%roomShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.m[id]; ok {
		return p, true
	}
	s.m[id] = port
	return port, false
}

// Replace records room id on port, forgetting any earlier port (a server
// that reuses room ids after a room ended is allowed to).
func (t *RoomTable) Replace(id uint32, port uint16) {
	s := &t.shards[id%roomShards]
	s.mu.Lock()
	s.m[id] = port
	s.mu.Unlock()
}

// Port returns the recorded port of room id.
func (t *RoomTable) Port(id uint32) (uint16, bool) {
	s := &t.shards[id%roomShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	return p, ok
}

// Len returns the number of rooms recorded.
func (t *RoomTable) Len() int {
	n := 0
	for i := range t.shards {
		t.shards[i].mu.Lock()
		n += len(t.shards[i].m)
		t.shards[i].mu.Unlock()
	}
	return n
}
