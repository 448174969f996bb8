package tcpserver

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// Config configures a Server. Start from DefaultConfig; a zero duration or
// size field is replaced by its default by Listen, except where noted.
type Config struct {
	// Addr is the TCP listen address (default ":7777"; "127.0.0.1:0" picks a
	// free loopback port, read it back with Server.Addr).
	Addr string
	// MaxConns caps simultaneous connections (default 10000). A connection
	// accepted beyond the cap gets one ERROR_MSG (0x06 "server full") and is
	// closed; it is counted in Stats.ConnsRejected.
	MaxConns int
	// MaxConnsPerIP caps simultaneous connections from one source IP
	// (default 1000; negative disables). One beyond it gets one ERROR_MSG
	// (0x06 "too many connections from your address") and is closed;
	// counted in Stats.ConnsRejectedPerIP. The default is a tenth of
	// MaxConns, so one address cannot fill the table, and ten times the
	// 100 clients `run` puts on each default source address.
	MaxConnsPerIP int
	// IdleTimeout closes a connection that has not sent one complete frame
	// for this long (default 2m; negative disables). A half-sent frame does
	// not count as activity. The check runs on a periodic sweep, not a read
	// deadline per frame.
	IdleTimeout time.Duration
	// WriteTimeout bounds every socket write (default 5s). A client whose
	// socket accepts nothing for this long is disconnected.
	WriteTimeout time.Duration
	// MaxQueue is the number of outgoing frames queued per connection
	// (default 64). A client whose queue overflows is disconnected: frames
	// are never buffered without bound for a client that stops reading.
	MaxQueue int
	// MaxFrame is the largest accepted payload (default 4096, tcp-lobby.md §2.2).
	MaxFrame int
	// MaxRooms is the number of rooms (default and maximum 16, MAX_ROOMS).
	MaxRooms int
	// MaxRoomsPerIP caps the live rooms created by connections from one
	// source IP (default 4; negative disables); a CREATE_ROOM_REQ beyond it
	// gets CREATE_ROOM_ACK with RoomID 0 (Stats.Errors["rooms-per-ip"]), and
	// the quota is given back when the room is removed. The default is a
	// quarter of MAX_ROOMS: with 16 rooms in all, a cap that stopped one
	// address from taking every room yet let one address fill them is
	// impossible, and a load test from one machine with more than 4 rooms
	// of players at once must spread its clients over several addresses
	// (run does: one per 100 clients) or disable the cap.
	MaxRoomsPerIP int
	// MaxPlayers is the number of players a room holds (default and maximum
	// 4, MAX_PLAYERS).
	MaxPlayers int
	// CountdownFrom is the first COUNTDOWN value (default 3: 3, 2, 1).
	CountdownFrom int
	// CountdownInterval is the time between COUNTDOWN ticks and from the
	// last tick to GAME_START (default 1s).
	CountdownInterval time.Duration
	// Linger bounds how long a connection the server closes after an
	// ERROR_MSG keeps being read (and discarded) after its write side is
	// shut, so that the peer receives the ERROR_MSG rather than a reset
	// (default 1s).
	Linger time.Duration
	// SendBuffer, when positive, sets SO_SNDBUF on accepted connections
	// (default 0: the operating system's). A small value makes a stuck
	// client hit WriteTimeout sooner.
	SendBuffer int
	// Pool hands out the UDP game instance announced in GAME_START. Required.
	Pool InstancePool
	// Logger receives structured logs; nil discards them. Per-connection
	// events are logged at Debug, listening and pool failures at Info/Warn.
	Logger *slog.Logger
}

// DefaultConfig returns the documented defaults with no Pool set.
func DefaultConfig() Config {
	return Config{
		Addr:              ":7777",
		MaxConns:          10000,
		MaxConnsPerIP:     1000,
		IdleTimeout:       2 * time.Minute,
		WriteTimeout:      5 * time.Second,
		MaxQueue:          64,
		MaxFrame:          tcpwire.DefaultMaxFrame,
		MaxRooms:          tcpwire.MaxRooms,
		MaxRoomsPerIP:     4,
		MaxPlayers:        tcpwire.MaxPlayers,
		CountdownFrom:     3,
		CountdownInterval: time.Second,
		Linger:            time.Second,
	}
}

// withDefaults fills zero fields and validates. It reports every problem at once.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	c.Addr = cmp.Or(c.Addr, d.Addr)
	c.MaxConns = cmp.Or(c.MaxConns, d.MaxConns)
	c.MaxConnsPerIP = cmp.Or(c.MaxConnsPerIP, d.MaxConnsPerIP)
	c.MaxRoomsPerIP = cmp.Or(c.MaxRoomsPerIP, d.MaxRoomsPerIP)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, d.IdleTimeout)
	c.WriteTimeout = cmp.Or(c.WriteTimeout, d.WriteTimeout)
	c.MaxQueue = cmp.Or(c.MaxQueue, d.MaxQueue)
	c.MaxFrame = cmp.Or(c.MaxFrame, d.MaxFrame)
	c.MaxRooms = cmp.Or(c.MaxRooms, d.MaxRooms)
	c.MaxPlayers = cmp.Or(c.MaxPlayers, d.MaxPlayers)
	c.CountdownFrom = cmp.Or(c.CountdownFrom, d.CountdownFrom)
	c.CountdownInterval = cmp.Or(c.CountdownInterval, d.CountdownInterval)
	c.Linger = cmp.Or(c.Linger, d.Linger)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("tcp: "+format, args...)) }
	if c.MaxConns < 0 {
		bad("MaxConns %d is negative", c.MaxConns)
	}
	if c.WriteTimeout < 0 {
		bad("WriteTimeout %v is negative", c.WriteTimeout)
	}
	if c.MaxQueue < 1 {
		bad("MaxQueue %d must be at least 1", c.MaxQueue)
	}
	// The largest frame the server sends is LIST_ROOMS_ACK (626 bytes); a
	// smaller MaxFrame would still be legal but 220 (GAME_START) is the
	// largest fixed client-side need, and a client never sends more than 65.
	if c.MaxFrame < tcpwire.SizeCreateRoomReq || c.MaxFrame > 1<<24 {
		bad("MaxFrame %d outside %d-%d", c.MaxFrame, tcpwire.SizeCreateRoomReq, 1<<24)
	}
	if c.MaxRooms < 1 || c.MaxRooms > tcpwire.MaxRooms {
		bad("MaxRooms %d outside 1-%d", c.MaxRooms, tcpwire.MaxRooms)
	}
	if c.MaxPlayers < 1 || c.MaxPlayers > tcpwire.MaxPlayers {
		bad("MaxPlayers %d outside 1-%d", c.MaxPlayers, tcpwire.MaxPlayers)
	}
	if c.CountdownFrom < 0 || c.CountdownFrom > 255 {
		bad("CountdownFrom %d outside 0-255", c.CountdownFrom)
	}
	if c.CountdownInterval < 0 {
		bad("CountdownInterval %v is negative", c.CountdownInterval)
	}
	if c.Linger < 0 {
		bad("Linger %v is negative", c.Linger)
	}
	if c.SendBuffer < 0 {
		bad("SendBuffer %d is negative", c.SendBuffer)
	}
	if c.Pool == nil {
		bad("Pool is nil: GAME_START needs a UDP game instance")
	}
	return c, errors.Join(errs...)
}
