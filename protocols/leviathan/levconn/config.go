package levconn

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// Reliability is a message's receive guarantee (the engine's
// RECEIVE_GUARANTEE): how many times it is transmitted when its
// transmissions are lost.
type Reliability uint8

const (
	// None: sent once, never tracked.
	None Reliability = iota
	// ResendOnce: at most 2 transmissions.
	ResendOnce
	// Critical: at most Config.CriticalTransmissions (5) transmissions.
	Critical
)

// String returns "none", "resend-once" or "critical".
func (r Reliability) String() string {
	switch r {
	case None:
		return "none"
	case ResendOnce:
		return "resend-once"
	case Critical:
		return "critical"
	}
	return fmt.Sprintf("Reliability(%d)", int(r))
}

// Config holds a connection's timings and bounds. The zero value of a field
// means its default (the engine's behaviour); a negative duration disables
// the corresponding timer where noted.
type Config struct {
	// AckReading is how ack bits map to packet ids, both for acks this
	// side sends and for acks it reads (default leviathan.AckEngine).
	AckReading levwire.AckReading
	// FirstPacketID is the first PKT_ID sent (default 1001, the engine's;
	// the seed says 1).
	FirstPacketID uint32
	// AckDelay is how long received ids may wait for an outgoing Ln packet
	// to carry their acks before they go out in La packets (default 200ms).
	AckDelay time.Duration
	// LostAfter declares a transmission lost when it is not acked this
	// long after it was sent (default 1s).
	LostAfter time.Duration
	// LostIDGap declares a transmission lost when the peer acks an id more
	// than this many above it (default 4).
	LostIDGap uint32
	// CriticalTransmissions is how many times a Critical message is sent
	// at most (default 5).
	CriticalTransmissions int
	// CloseOnCriticalLoss closes the connection (EventClosed,
	// CloseCriticalLost) when a Critical message's last transmission is
	// lost. Default false: the engine (leviathan.md §4) logs and keeps the
	// connection.
	CloseOnCriticalLoss bool
	// KeepaliveAfter sends a Critical Keepalive response after this long
	// without sending anything (default 120s; negative disables).
	KeepaliveAfter time.Duration
	// IdleTimeout closes the connection after this long without an Ln
	// packet from the peer (default 180s; negative disables). La packets
	// do not count as life, as in the engine.
	IdleTimeout time.Duration
	// DuplicateWindow is how many received MessageNumbers are remembered
	// to suppress duplicates (default 50).
	DuplicateWindow int
	// MaxInFlight bounds the messages held for sending or resending
	// (default 64); Send beyond it fails with ErrInFlightFull.
	MaxInFlight int
	// MaxPendingAcks bounds the received ids waiting to be acked (default
	// 256); the oldest is forgotten beyond it (the peer resends).
	MaxPendingAcks int
	// MaxMessage bounds one encoded message (header and payload) this side
	// sends (default 4096, max leviathan.MaxDatagram minus the largest Ln
	// header).
	MaxMessage int
	// MaxEvents bounds the events queued between two Events calls
	// (default 1024); beyond it events are dropped and counted in
	// Stats.EventsDropped.
	MaxEvents int
}

// DefaultConfig returns the engine's timings: acks after 200ms, lost after
// 1s or 4 newer ids acked, Critical = 5 transmissions, keepalive after 120s,
// idle close after 180s, 50 remembered MessageNumbers.
func DefaultConfig() Config {
	return Config{
		AckReading:            levwire.AckEngine,
		FirstPacketID:         levwire.FirstPacketID,
		AckDelay:              200 * time.Millisecond,
		LostAfter:             time.Second,
		LostIDGap:             4,
		CriticalTransmissions: 5,
		KeepaliveAfter:        120 * time.Second,
		IdleTimeout:           180 * time.Second,
		DuplicateWindow:       50,
		MaxInFlight:           64,
		MaxPendingAcks:        256,
		MaxMessage:            4096,
		MaxEvents:             1024,
	}
}

// maxLnHeader is the largest Ln header this package writes: type, PKT_ID,
// StartAck, ack count, 4 ack bytes, MessageCount.
const maxLnHeader = 2 + 4 + 4 + 1 + levwire.MaxAckBytes + 1

// WithDefaults returns c with zero fields replaced by their defaults, and an
// error naming every invalid field.
func (c Config) WithDefaults() (Config, error) {
	d := DefaultConfig()
	c.FirstPacketID = cmp.Or(c.FirstPacketID, d.FirstPacketID)
	c.AckDelay = cmp.Or(c.AckDelay, d.AckDelay)
	c.LostAfter = cmp.Or(c.LostAfter, d.LostAfter)
	c.LostIDGap = cmp.Or(c.LostIDGap, d.LostIDGap)
	c.CriticalTransmissions = cmp.Or(c.CriticalTransmissions, d.CriticalTransmissions)
	c.KeepaliveAfter = cmp.Or(c.KeepaliveAfter, d.KeepaliveAfter)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, d.IdleTimeout)
	c.DuplicateWindow = cmp.Or(c.DuplicateWindow, d.DuplicateWindow)
	c.MaxInFlight = cmp.Or(c.MaxInFlight, d.MaxInFlight)
	c.MaxPendingAcks = cmp.Or(c.MaxPendingAcks, d.MaxPendingAcks)
	c.MaxMessage = cmp.Or(c.MaxMessage, d.MaxMessage)
	c.MaxEvents = cmp.Or(c.MaxEvents, d.MaxEvents)
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("levconn: "+format, a...)) }
	if c.AckReading != levwire.AckEngine && c.AckReading != levwire.AckSeedPlusOne {
		bad("AckReading %d unknown", c.AckReading)
	}
	if c.AckDelay < 0 {
		bad("AckDelay %v is negative", c.AckDelay)
	}
	if c.LostAfter < 0 {
		bad("LostAfter %v is negative", c.LostAfter)
	}
	if c.CriticalTransmissions < 1 || c.CriticalTransmissions > maxTransmissions {
		bad("CriticalTransmissions %d not in 1..%d", c.CriticalTransmissions, maxTransmissions)
	}
	if c.DuplicateWindow < 1 || c.DuplicateWindow > 4096 {
		bad("DuplicateWindow %d not in 1..4096", c.DuplicateWindow)
	}
	if c.MaxInFlight < 1 || c.MaxInFlight > 4096 {
		bad("MaxInFlight %d not in 1..4096", c.MaxInFlight)
	}
	if c.MaxPendingAcks < 1 || c.MaxPendingAcks > 65536 {
		bad("MaxPendingAcks %d not in 1..65536", c.MaxPendingAcks)
	}
	if c.MaxMessage < 11 || c.MaxMessage > levwire.MaxDatagram-maxLnHeader {
		bad("MaxMessage %d not in 11..%d", c.MaxMessage, levwire.MaxDatagram-maxLnHeader)
	}
	if c.MaxEvents < 16 {
		bad("MaxEvents %d below 16", c.MaxEvents)
	}
	return c, errors.Join(errs...)
}

// transmissions returns how many times a message of class r may be sent.
func (c *Config) transmissions(r Reliability) int {
	switch r {
	case ResendOnce:
		return 2
	case Critical:
		return c.CriticalTransmissions
	}
	return 1
}

// ParseAckReading parses an ack-bit reading name for flags: "engine" (no
// +1, the default) or "seed+1" (the packet format page's reading, leviathan.md §4).
func ParseAckReading(s string) (levwire.AckReading, error) {
	switch s {
	case "engine", "":
		return levwire.AckEngine, nil
	case "seed+1", "seed":
		return levwire.AckSeedPlusOne, nil
	}
	return 0, fmt.Errorf("unknown ack reading %q (want engine or seed+1)", s)
}
