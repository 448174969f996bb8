package tcpserver

import (
	"sync/atomic"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// reason is why a request was refused or a frame rejected (Stats.Errors).
type reason uint8

const (
	errFrameEmpty     reason = iota // length prefix 0 (T-FRAME-EMPTY)
	errFrameTooLarge                // length prefix > MaxFrame (T-FRAME-TOO-LARGE)
	errFrameTruncated               // stream ended inside a frame (T-FRAME-TRUNCATED)
	errTypeUnknown                  // type byte not in tcp-lobby.md §2.3 (T-TYPE-UNKNOWN)
	errWrongDirection               // a server→client type sent by a client
	errWrongSize                    // payload size differs from the type's (T-SIZE-*)
	errNotInRoom                    // READY_REQ / START_REQ outside a room: ERROR_MSG 0x02
	errNotHost                      // START_REQ from a non-host: ERROR_MSG 0x03
	errNotAllReady                  // START_REQ with someone not ready: ERROR_MSG 0x04
	errInvalidName                  // empty player name: ERROR_MSG 0x05 / CONNECT_ACK failure
	errRoomFull                     // JOIN_ROOM_ACK ROOM_FULL
	errRoomNotFound                 // JOIN_ROOM_ACK ROOM_NOT_FOUND
	errRoomInGame                   // JOIN_ROOM_ACK ROOM_IN_GAME (countdown or playing)
	errRoomsExhausted               // CREATE_ROOM_ACK RoomID 0 (MaxRooms rooms exist)
	errIgnored                      // READY_REQ in game, START_REQ during countdown or game
	errPool                         // the InstancePool failed: ERROR_MSG 0x06 to the room
	errRoomsPerIP                   // CREATE_ROOM_ACK RoomID 0: MaxRoomsPerIP rooms from this IP exist
	numReasons
)

var reasonNames = [numReasons]string{
	"frame-empty", "frame-too-large", "frame-truncated", "type-unknown", "wrong-direction",
	"wrong-size", "not-in-room", "not-host", "not-all-ready", "invalid-name", "room-full",
	"room-not-found", "room-in-game", "rooms-exhausted", "ignored", "pool-error",
	"rooms-per-ip",
}

// closeReason is why a connection ended (Stats.Closes).
type closeReason uint8

const (
	closeEOF           closeReason = iota // the peer closed its side between frames
	closeDisconnect                       // DISCONNECT received
	closeBadFrame                         // ERROR_MSG sent for a malformed frame
	closeIdle                             // no complete frame for IdleTimeout
	closeWriteTimeout                     // a write blocked past WriteTimeout
	closeWriteError                       // a write failed (reset, …)
	closeQueueOverflow                    // MaxQueue frames already queued
	closeReadError                        // a read failed (reset, …)
	closeShutdown                         // Server.Close
	numCloseReasons
)

var closeNames = [numCloseReasons]string{
	"eof", "disconnect", "bad-frame", "idle-timeout", "write-timeout", "write-error",
	"queue-overflow", "read-error", "shutdown",
}

// counters are the server's live statistics; all atomic so the hot path
// never takes a lock for them.
type counters struct {
	framesIn           [256]atomic.Uint64
	framesOut          [256]atomic.Uint64
	errors             [numReasons]atomic.Uint64
	closes             [numCloseReasons]atomic.Uint64
	connsAccepted      atomic.Uint64
	connsRejected      atomic.Uint64
	connsRejectedPerIP atomic.Uint64
	connsActive        atomic.Int64
	roomsCreated       atomic.Uint64
	roomsRemoved       atomic.Uint64
	countdowns         atomic.Uint64
	cancelled          atomic.Uint64
	games              atomic.Uint64
}

// Stats is a snapshot of a Server's counters. Maps hold only non-zero
// entries.
type Stats struct {
	ConnsAccepted uint64 // connections accepted and served
	ConnsRejected uint64 // connections closed at once because MaxConns were open
	// ConnsRejectedPerIP counts connections closed at once because their
	// source IP had MaxConnsPerIP open.
	ConnsRejectedPerIP uint64
	// ConnIPs and RoomOwners are the sizes of the per-IP quota tables now:
	// source IPs with a connection, and with a room they created.
	ConnIPs      int
	RoomOwners   int
	ConnsActive  int64 // connections being served now
	RoomsCreated uint64
	RoomsRemoved uint64
	RoomsActive  int    // rooms existing now
	Countdowns   uint64 // START_REQs accepted
	Cancelled    uint64 // countdowns cancelled (a player left or un-readied, or the pool failed)
	GamesStarted uint64 // rooms that reached GAME_START
	// FramesIn counts frames received by type name ("CREATE_ROOM_REQ", or
	// "0xNN" for unknown types); rejected frames are counted too.
	FramesIn map[string]uint64
	// FramesOut counts frames written to sockets by type name.
	FramesOut map[string]uint64
	// Errors counts refused requests and rejected frames by reason:
	// frame-empty, frame-too-large, frame-truncated, type-unknown,
	// wrong-direction, wrong-size, not-in-room, not-host, not-all-ready,
	// invalid-name, room-full, room-not-found, room-in-game,
	// rooms-exhausted, ignored, pool-error, rooms-per-ip.
	Errors map[string]uint64
	// Closes counts ended connections by reason: eof, disconnect,
	// bad-frame, idle-timeout, write-timeout, write-error, queue-overflow,
	// read-error, shutdown.
	Closes map[string]uint64
}

func (c *counters) snapshot() Stats {
	st := Stats{
		ConnsAccepted:      c.connsAccepted.Load(),
		ConnsRejected:      c.connsRejected.Load(),
		ConnsRejectedPerIP: c.connsRejectedPerIP.Load(),
		ConnsActive:        c.connsActive.Load(),
		RoomsCreated:       c.roomsCreated.Load(),
		RoomsRemoved:       c.roomsRemoved.Load(),
		Countdowns:         c.countdowns.Load(),
		Cancelled:          c.cancelled.Load(),
		GamesStarted:       c.games.Load(),
		FramesIn:           map[string]uint64{},
		FramesOut:          map[string]uint64{},
		Errors:             map[string]uint64{},
		Closes:             map[string]uint64{},
	}
	for i := range c.framesIn {
		if n := c.framesIn[i].Load(); n > 0 {
			st.FramesIn[tcpwire.Type(i).String()] = n
		}
		if n := c.framesOut[i].Load(); n > 0 {
			st.FramesOut[tcpwire.Type(i).String()] = n
		}
	}
	for i := range c.errors {
		if n := c.errors[i].Load(); n > 0 {
			st.Errors[reasonNames[i]] = n
		}
	}
	for i := range c.closes {
		if n := c.closes[i].Load(); n > 0 {
			st.Closes[closeNames[i]] = n
		}
	}
	return st
}

// Flat returns every counter under one dotted name, e.g.
// "conns.accepted", "frames_in.CREATE_ROOM_REQ", "errors.not-host",
// "closes.idle-timeout", for printing on shutdown or merging into a report.
func (st Stats) Flat() map[string]uint64 {
	m := map[string]uint64{
		"conns.accepted":        st.ConnsAccepted,
		"conns.rejected":        st.ConnsRejected,
		"conns.rejected_per_ip": st.ConnsRejectedPerIP,
		"conns.source_ips":      uint64(max(st.ConnIPs, 0)),
		"rooms.owner_ips":       uint64(max(st.RoomOwners, 0)),
		"conns.active":          uint64(max(st.ConnsActive, 0)),
		"rooms.created":         st.RoomsCreated,
		"rooms.removed":         st.RoomsRemoved,
		"rooms.active":          uint64(max(st.RoomsActive, 0)),
		"games.countdowns":      st.Countdowns,
		"games.cancelled":       st.Cancelled,
		"games.started":         st.GamesStarted,
	}
	for k, v := range st.FramesIn {
		m["frames_in."+k] = v
	}
	for k, v := range st.FramesOut {
		m["frames_out."+k] = v
	}
	for k, v := range st.Errors {
		m["errors."+k] = v
	}
	for k, v := range st.Closes {
		m["closes."+k] = v
	}
	return m
}
