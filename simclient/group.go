package simclient

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"
)

// Room is a room a group's creator made, as the server described it.
type Room struct {
	ID   uint32
	Port uint16         // udp-lobby: the instance port ROOM_CREATED returned
	Addr netip.AddrPort // udp-lobby: the instance address (lobby IP, Port)
}

// Group is one group of a flow's sessions sharing a room (Shared.Join
// assigns the places). Places follow the sessions created on this process,
// not the scheduled arrivals, so groups stay whole when the engine drops
// starts: the next Size created sessions still form a group led by its
// first. The room its creator made is published with SetRoom; a join with
// room: created waits for it (WaitRoom) at most the join's whole request
// budget (Budget), and FailRoom wakes the waiters at once when a member
// that runs the create step failed or ended. Arrive is a barrier: wait
// until N members reached the step at this index. A group lives until all
// its members have closed.
type Group struct {
	Flow int   // index in Plan.Flows
	ID   int64 // n / GroupSize
	Size int

	mu       sync.Mutex
	joined   int // guarded by the flow's registry lock
	left     int
	room     Room
	roomErr  error
	roomDone chan struct{} // closed by SetRoom or FailRoom
	onRoom   []func()      // OnReady's, called once roomDone is closed
	barriers map[int]*barrier
	hashes   map[uint64]int // tcp: player hash → member index
	// roomAt is when SetRoom published the room; roomJoins counts the
	// members' joins of it (room fill time, lobby.go).
	roomAt    time.Time
	roomJoins int
}

type barrier struct {
	arrived int
	open    chan struct{}
}

// NewGroup returns a group of size members of no flow, outside any run's
// registry: for callers that drive sessions themselves (an executor's
// tests). A run's groups come from Shared.Join.
func NewGroup(size int) *Group { return newGroup(-1, -1, size) }

func newGroup(flow int, id int64, size int) *Group {
	return &Group{Flow: flow, ID: id, Size: size, roomDone: make(chan struct{})}
}

// SetRoom publishes the room the group created and wakes every WaitRoom.
// Only the first SetRoom or FailRoom counts.
func (g *Group) SetRoom(r Room) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.roomDone:
		return
	default:
	}
	g.room = r
	g.roomAt = time.Now()
	close(g.roomDone)
	g.roomKnown()
}

// roomKnown calls the OnReady functions, once roomDone is closed; g.mu is
// held, and is unlocked and locked again around the calls.
func (g *Group) roomKnown() {
	fs := g.onRoom
	g.onRoom = nil
	g.mu.Unlock()
	for _, f := range fs {
		f()
	}
	g.mu.Lock()
}

// OnReady calls f once the group's room is published or failed (SetRoom,
// FailRoom): at once, on this goroutine, if it already is; else on the
// goroutine that publishes it. A suspended session waiting for the room
// (Base.GroupRoom) is resumed that way, without a goroutine of its own
// (Notifier).
func (g *Group) OnReady(f func()) {
	g.mu.Lock()
	if g.RoomDone() {
		g.mu.Unlock()
		f()
		return
	}
	g.onRoom = append(g.onRoom, f)
	g.mu.Unlock()
}

// RoomDone reports whether the group's room is published or failed.
func (g *Group) RoomDone() bool {
	select {
	case <-g.roomDone:
		return true
	default:
		return false
	}
}

// FailRoom tells the group its room will not exist (the creator failed),
// waking every WaitRoom with err.
func (g *Group) FailRoom(err error) {
	if err == nil {
		err = errors.New("the group's creator failed")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.roomDone:
		return
	default:
	}
	g.roomErr = err
	close(g.roomDone)
	g.roomKnown()
}

// ErrNoRoom is returned by WaitRoom when the group's room was not created.
var ErrNoRoom = errors.New("the group's room was not created")

// WaitRoom waits until the group's room is known or ctx ends (the caller
// bounds it with the join's timeout).
func (g *Group) WaitRoom(ctx context.Context) (Room, error) {
	select {
	case <-g.roomDone:
	case <-ctx.Done():
		return Room{}, ctx.Err()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.roomErr != nil {
		return Room{}, errors.Join(ErrNoRoom, g.roomErr)
	}
	return g.room, nil
}

// RoomNow returns the group's room if it is already known.
func (g *Group) RoomNow() (Room, bool) {
	select {
	case <-g.roomDone:
	default:
		return Room{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.room, g.roomErr == nil
}

// Arrive records that one member reached the barrier at step index step
// and waits until n members have, or ctx ends.
func (g *Group) Arrive(ctx context.Context, step, n int) error {
	g.mu.Lock()
	b := g.barriers[step]
	if b == nil {
		if g.barriers == nil {
			g.barriers = map[int]*barrier{}
		}
		b = &barrier{open: make(chan struct{})}
		g.barriers[step] = b
	}
	b.arrived++
	if b.arrived == n {
		close(b.open)
	}
	g.mu.Unlock()
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SetHash records member idx's TCP player hash, so broadcasts can be checked
// against the group's members.
func (g *Group) SetHash(hash uint64, idx int) {
	g.mu.Lock()
	if g.hashes == nil {
		g.hashes = map[uint64]int{}
	}
	g.hashes[hash] = idx
	g.mu.Unlock()
}

// HashMember returns the member index that announced hash.
func (g *Group) HashMember(hash uint64) (int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i, ok := g.hashes[hash]
	return i, ok
}
