package udpserver

import (
	"fmt"
	"io"
	"sort"
	"sync/atomic"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// Drop reasons the server adds to the wire package's rule ids (which name
// malformed datagrams: U-CRC, U-SHORT, I-TYPE-UNKNOWN, …).
const (
	DropRateLimited   = "rate-limited"  // lobby request over its key's rate
	DropAmplification = "amplification" // lobby reply or instance message beyond what its IP may get back (Config.AmplifyAllowance)
	DropNotJoined     = "not-joined"    // READY or DISCONNECT from an endpoint that is not a player
	DropOther         = "other"         // a decode error without a rule id (cannot happen with a valid profile)
)

// Lobby JOIN_FAILED reasons (Stats.Failures).
const (
	FailRoomZero     = "room-id-0"     // JOIN with roomId 0
	FailMissing      = "missing"       // JOIN of a room that does not exist
	FailFull         = "full"          // JOIN of a full room (players + held seats)
	FailState        = "not-joinable"  // JOIN of a room that is Playing or Finished
	FailMaxInstances = "max-instances" // CREATE at the instance limit
	FailBind         = "bind"          // CREATE when no pool port could be bound
	FailDeny         = "instance-deny" // instance JOIN_REQUEST answered JOIN_DENY
	FailRoomsPerIP   = "rooms-per-ip"  // CREATE from a source IP with MaxRoomsPerIP live rooms
	FailHoldsPerIP   = "holds-per-ip"  // JOIN from a source IP with MaxHoldsPerIP seats held
)

var dropNames = func() []string {
	n := []string{DropRateLimited, DropAmplification, DropNotJoined, DropOther}
	for _, r := range udpwire.Rules {
		n = append(n, string(r.ID))
	}
	return n
}()

var failNames = []string{FailRoomZero, FailMissing, FailFull, FailState, FailMaxInstances, FailBind, FailDeny,
	FailRoomsPerIP, FailHoldsPerIP}

func indexOf(names []string, s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	return -1
}

// dropIndex maps a rule id to its counter; a map lookup is fine on the drop
// path, which is never the fast path.
var dropIndex = func() map[udpwire.RuleID]int {
	m := make(map[udpwire.RuleID]int, len(udpwire.Rules))
	for _, r := range udpwire.Rules {
		m[r.ID] = indexOf(dropNames, string(r.ID))
	}
	return m
}()

var (
	dropRateLimited   = indexOf(dropNames, DropRateLimited)
	dropAmplification = indexOf(dropNames, DropAmplification)
	dropNotJoined     = indexOf(dropNames, DropNotJoined)
	dropOther         = indexOf(dropNames, DropOther)
)

// counters are updated lock-free from the read loops.
type counters struct {
	requests  [256]atomic.Uint64 // well-formed datagrams received, by message type
	replies   [256]atomic.Uint64 // datagrams sent, by message type
	drops     [64]atomic.Uint64  // by dropNames index
	failures  [16]atomic.Uint64  // by failNames index
	replayed  atomic.Uint64
	resent    atomic.Uint64
	created   atomic.Uint64
	destroyed atomic.Uint64
	games     atomic.Uint64
	sendErrs  atomic.Uint64
}

func (c *counters) drop(rule udpwire.RuleID) {
	i, ok := dropIndex[rule]
	if !ok {
		i = dropOther
	}
	c.drops[i].Add(1)
}

func (c *counters) fail(reason string) { c.failures[indexOf(failNames, reason)].Add(1) }

// Stats is a snapshot of the server's counters and gauges. Maps hold only
// non-zero counters and are keyed by protocol message name, drop reason
// (a wire rule id like "U-CRC", or DropRateLimited, DropNotJoined) and
// failure reason (FailMissing, …).
type Stats struct {
	Requests map[string]uint64 `json:"requests"`
	Replies  map[string]uint64 `json:"replies"`
	Drops    map[string]uint64 `json:"drops"`
	Failures map[string]uint64 `json:"failures"`
	// RateLimited is Drops[DropRateLimited], repeated for convenience.
	RateLimited uint64 `json:"rate_limited"`
	// Replayed counts retried CREATE/JOIN requests answered from the
	// session's cached reply instead of acting twice.
	Replayed uint64 `json:"replayed"`
	// StateResent counts state messages (COUNTDOWN_TICK, GAME_START,
	// GAME_END) sent again to a player who sent CLIENT_READY once the
	// countdown had started.
	StateResent uint64 `json:"state_resent"`
	// InstancesCreated and InstancesClosed are totals since start;
	// GamesStarted counts GAME_STARTs.
	InstancesCreated uint64 `json:"instances_created"`
	InstancesClosed  uint64 `json:"instances_closed"`
	GamesStarted     uint64 `json:"games_started"`
	SendErrors       uint64 `json:"send_errors"`
	// Gauges at snapshot time. Every room is one instance, so Rooms ==
	// Instances; both are kept because the TCP lobby's rooms are not.
	Rooms     int `json:"rooms"`
	Instances int `json:"instances"`
	Players   int `json:"players"`    // players joined in instances
	HeldSeats int `json:"held_seats"` // seats reserved by JOIN_SUCCESS, not yet taken
	Sessions  int `json:"sessions"`
	RateKeys  int `json:"rate_keys"`
	// RoomOwners and SeatHolders are how many source IPs hold lobby-created
	// rooms and seats now (the per-IP quota tables).
	RoomOwners  int `json:"room_owners"`
	SeatHolders int `json:"seat_holders"`
	// RateKeysEvicted counts rate-limit buckets still in use that were
	// forgotten because the table was full (MaxRateKeys): non-zero means
	// the bound is too small for the number of sources.
	RateKeysEvicted uint64 `json:"rate_keys_evicted"`
}

func (c *counters) snapshot(st *Stats) {
	st.Requests = map[string]uint64{}
	st.Replies = map[string]uint64{}
	st.Drops = map[string]uint64{}
	st.Failures = map[string]uint64{}
	for t := range c.requests {
		if v := c.requests[t].Load(); v > 0 {
			st.Requests[udpwire.MsgType(t).String()] = v
		}
		if v := c.replies[t].Load(); v > 0 {
			st.Replies[udpwire.MsgType(t).String()] = v
		}
	}
	for i, n := range dropNames {
		if v := c.drops[i].Load(); v > 0 {
			st.Drops[n] = v
		}
	}
	for i, n := range failNames {
		if v := c.failures[i].Load(); v > 0 {
			st.Failures[n] = v
		}
	}
	st.RateLimited = c.drops[dropRateLimited].Load()
	st.Replayed = c.replayed.Load()
	st.StateResent = c.resent.Load()
	st.InstancesCreated = c.created.Load()
	st.InstancesClosed = c.destroyed.Load()
	st.GamesStarted = c.games.Load()
	st.SendErrors = c.sendErrs.Load()
}

// WriteText writes the stats as sorted "name value" lines, each prefixed
// with prefix (e.g. "udp."), for a shutdown summary.
func (st *Stats) WriteText(w io.Writer, prefix string) error {
	var lines []string
	add := func(k string, v any) { lines = append(lines, fmt.Sprintf("%s%s %v", prefix, k, v)) }
	for _, m := range []struct {
		name string
		m    map[string]uint64
	}{{"requests", st.Requests}, {"replies", st.Replies}, {"drops", st.Drops}, {"failures", st.Failures}} {
		for k, v := range m.m {
			add(m.name+"."+k, v)
		}
	}
	sort.Strings(lines)
	head := len(lines)
	add("rate_limited", st.RateLimited)
	add("replayed", st.Replayed)
	add("state_resent", st.StateResent)
	add("instances_created", st.InstancesCreated)
	add("instances_closed", st.InstancesClosed)
	add("games_started", st.GamesStarted)
	add("send_errors", st.SendErrors)
	add("rooms", st.Rooms)
	add("instances", st.Instances)
	add("players", st.Players)
	add("held_seats", st.HeldSeats)
	add("sessions", st.Sessions)
	add("rate_keys", st.RateKeys)
	add("room_owners", st.RoomOwners)
	add("seat_holders", st.SeatHolders)
	add("rate_keys_evicted", st.RateKeysEvicted)
	sort.Strings(lines[head:])
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
