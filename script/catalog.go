// Package script is what scripted steps (send, expect, capture, if,
// repeat) need of a protocol, with no protocol named: a protocol's
// Catalog of messages, which a scenario names by the names and field
// names of its document, and which makes and reads them. The scenario
// loader checks a script against the catalog; a protocol's client and
// conformance runner play it through the same catalog, so that a
// scripted message is built, and a reply checked against the spec, by the
// same code whichever of them sends it.
package script

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"
)

// Kind is a field's type as a script sees it.
type Kind int

const (
	// Int is an unsigned integer of Field.Bits bits.
	Int Kind = iota
	// Text is a string of at most Field.Max bytes.
	Text
	// Bool is true or false.
	Bool
	// List is a list of at most Field.Max records of Field.Elem's fields
	// (a room list's rooms).
	List
	// Bytes is raw bytes, at most Field.Max, written in hex.
	Bytes
)

func (k Kind) String() string {
	switch k {
	case Int:
		return "integer"
	case Text:
		return "text"
	case Bool:
		return "bool"
	case List:
		return "list"
	case Bytes:
		return "bytes"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Field is one field of a message, named as the protocol's document
// names it (roomId, port, playerName).
type Field struct {
	Name string
	Kind Kind
	// Bits is an Int's width: 8, 16, 32 or 64.
	Bits int
	// Max bounds a Text's or Bytes' length in bytes, a List's entries.
	Max int
	// Elem are a List's entries' fields.
	Elem []Field
	// Auto is a field the protocol fills in when a send does not give it
	// (a sequence id, a length, a checksum, a message number): given, it
	// is sent as given, on purpose.
	Auto bool
	// SendOnly is framing a send may set on purpose (udp-lobby's CRC,
	// payloadSize, packetType) that a received message does not give a
	// script: what a reply's framing breaks is judged by the rules and
	// recorded as a violation, not read by an expect's where or capture.
	SendOnly bool
}

// Message is one message type of a protocol.
type Message struct {
	// Name is the type's name in the protocol's document
	// (LOBBY_CREATE_ROOM).
	Name string
	// FromClient says a client sends it; otherwise the server does.
	FromClient bool
	// Channel is where it travels when the protocol has more than one
	// (udp-lobby: "lobby" or "instance"); "" for a protocol with one.
	Channel string
	// Fields are its fields, in the document's order.
	Fields []Field
	// CreatesRoom: sending it creates the room a flow's group shares, as
	// a create_room step does (udp-lobby's LOBBY_CREATE_ROOM), so that a
	// built-in join: {room: created} after it is valid.
	CreatesRoom bool
}

// Route is where a reply tells the client to go next: udp-lobby's
// ROOM_CREATED and JOIN_SUCCESS name the instance's port on the lobby's
// host, tcp-lobby's GAME_START an instance's address.
type Route struct {
	// Channel is the channel it opens ("instance").
	Channel string
	// Addr is where; an invalid Addr with Port set means that port on
	// the target's host.
	Addr netip.AddrPort
	Port uint16
}

// Violation is a rule of the protocol a received message broke.
type Violation struct {
	Rule, Detail string
	// Packet is the unit received that broke it, set by Run before it
	// records the violation (a Recorder copies what it keeps: the
	// transport may read into the same bytes next).
	Packet []byte
}

// Decoded is a received message as a script sees it.
type Decoded struct {
	// Name is its type's name ("" when it could not be read at all).
	Name string
	// Fields are its fields by name: uint64 for Int, string for Text,
	// bool for Bool, []byte for Bytes, []map[string]any for List.
	Fields map[string]any
	// Violations are the rules it broke, checked against the spec as a
	// built-in step's reply is.
	Violations []Violation
	// Route is where it sends the client next, if anywhere.
	Route *Route
	// Stale says it answers an earlier request, not the last one sent (a
	// duplicate reply, a late answer to a request sent again): its
	// violations are recorded, and an expect waits on for the answer.
	Stale bool
	// Malformed, when set, is the kind of the malformed send it answers
	// (Breaker): a reply where the spec wants silence, counted as one.
	Malformed string
}

// Breaker is a catalog that breaks a message on purpose, as the
// protocol's built-in malformed step does (send: {malformed: kinds}).
type Breaker interface {
	// MalformedKinds are the kinds it knows, as scenarios name them.
	MalformedKinds() []string
	// Break makes message name of fields as Encode does (the session's
	// sequence id taken) and breaks it by kind, drawing from rng what
	// the kind needs (random bytes). A reply to it is decoded with
	// Decoded.Malformed set.
	Break(session any, name string, fields map[string]any, kind string, rng *rand.Rand) ([]byte, error)
}

// MalformedRecorder is a Recorder that counts malformed sends (Breaker)
// by kind, and the replies to them.
type MalformedRecorder interface {
	MalformedSent(kind string)
	MalformedReply(kind string)
}

// Scheduled is a catalog session that computes a field from the
// schedule (udp-lobby's clientTime, the time since its ping series was
// due): Run tells it each send's intended time (Env.Intended) before it
// encodes the message.
type Scheduled interface {
	Intend(t time.Time)
}

// Renewer is a catalog session that starts again in place, as the
// catalog's NewSession made it with the same options, keeping what it
// allocated: a client's next session on the same connection (a closed
// loop's) then costs no new one.
type Renewer interface {
	Renew()
}

// Catalog is a protocol's messages for scripts.
type Catalog interface {
	// Messages are every message type of the protocol.
	Messages() []Message
	// NewSession is the state one client keeps across its messages
	// (sequence counters, the header profile of options, the scenario's
	// protocol options or nil): opaque to everything but Encode and
	// Decode.
	NewSession(options any) any
	// Encode makes the message named name of fields, which the loader
	// checked against Messages (names, kinds, ranges); the fields not
	// given take the protocol's defaults or, for Auto ones, the session's
	// values. It does not keep fields (a pool's map, Run's). The bytes
	// may be the session's buffer, written over by its next Encode: the
	// caller sends them (or copies them) first.
	Encode(session any, name string, fields map[string]any) ([]byte, error)
	// Decode reads one received unit (a datagram, a frame's payload, a
	// message) that came on channel, and checks it against the spec. The
	// Decoded's Fields map is Run's once returned: it is emptied and used
	// again after the message is read (FieldsMap), so the catalog keeps
	// no reference to it.
	Decode(session any, channel string, b []byte) Decoded
}
