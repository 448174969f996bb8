package udpwire

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a decode failure: the datagram breaks Rule. Use errors.As to get
// it. The decoder fills as much of Header as it could read before the
// failure (HaveHeader), so a client can still attribute a bad reply to its
// request by Header.Seq.
type Error struct {
	Rule RuleID
	// Diagnosis names the likely cause when the decoder recognises one
	// (DiagLobbySystem, DiagPadded13), "" otherwise.
	Diagnosis string
	// Header holds the header fields; meaningful only when HaveHeader.
	Header     Header
	HaveHeader bool
	// Offset is the byte offset in the datagram of the offending field, or
	// -1 when the whole datagram is at fault.
	Offset int
	// Index is the room list entry at fault (room rules), or -1.
	Index int
	// Got and Want are the offending value and the expected one; Want is -1
	// when there is no single expected value.
	Got, Want int64
}

// Error returns "udplobby: RULE: summary (details)".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "udplobby: %s: %s", e.Rule, e.Rule.Describe())
	var d []string
	switch e.Rule {
	case RuleCRC:
		d = append(d, fmt.Sprintf("got %08x, want %08x", e.Got, e.Want))
	case RuleShort, RuleLength:
		d = append(d, fmt.Sprintf("length %d, want %d", e.Got, e.Want))
	case RulePayloadSize, RuleInstPayload:
		if e.Want >= 0 {
			d = append(d, fmt.Sprintf("payloadSize %d, want %d", e.Got, e.Want))
		} else {
			d = append(d, fmt.Sprintf("payloadSize %d", e.Got))
		}
	case RuleRoomListCount:
		d = append(d, fmt.Sprintf("roomCount %d needs payloadSize %d, got %d", e.Got, 2+RoomEntryLen*e.Got, e.Header.PayloadSize))
	case RuleRoomPlayers:
		d = append(d, fmt.Sprintf("playerCount %d, maxPlayers %d", e.Got, e.Want))
	case RuleMagic:
		d = append(d, fmt.Sprintf("got %08x", e.Got))
	case RulePacketType, RuleDirection, RuleTypeUnknown, RuleInstTypeUnknown, RuleTypeDirection, RuleInstDirection:
		d = append(d, fmt.Sprintf("got 0x%02x", e.Got))
		if e.Want >= 0 {
			d = append(d, fmt.Sprintf("want 0x%02x", e.Want))
		}
	default:
		if e.Want >= 0 {
			d = append(d, fmt.Sprintf("got %d, want %d", e.Got, e.Want))
		} else {
			d = append(d, fmt.Sprintf("got %d", e.Got))
		}
	}
	if e.Index >= 0 {
		d = append(d, fmt.Sprintf("room #%d", e.Index))
	}
	if e.Offset >= 0 {
		d = append(d, fmt.Sprintf("offset %d", e.Offset))
	}
	if e.HaveHeader {
		d = append(d, fmt.Sprintf("%s %v seq %d", e.Header.PacketType, e.Header.Type, e.Header.Seq))
	}
	switch e.Diagnosis {
	case DiagLobbySystem:
		d = append(d, "payload fits the layout of the Lobby System page (u32 roomCount, 15-byte entries), not the layout of udp-lobby.md §5")
	case DiagPadded13:
		d = append(d, "payload fits 13-byte padded entries (2 + 13n), entries are 11 bytes")
	case "":
	default:
		d = append(d, e.Diagnosis)
	}
	b.WriteString(" (")
	b.WriteString(strings.Join(d, "; "))
	b.WriteString(")")
	return b.String()
}

// RuleOf returns the rule a decode error names, or "" when err is nil or
// not an *Error (e.g. an invalid profile). It lets a caller count
// violations by id without errors.As boilerplate.
func RuleOf(err error) RuleID {
	var e *Error
	if errors.As(err, &e) {
		return e.Rule
	}
	return ""
}
