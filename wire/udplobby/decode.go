package udplobby

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

var errProfile = errors.New("udplobby: invalid header profile")

// DecodeHeader checks the framing of datagram b under profile p (size,
// magic and version, exact length, CRC, compression flag, originalSize,
// packetType) and returns its header. It does not look at the message type
// or the payload. Errors are *Error, except for an invalid profile.
func DecodeHeader(b []byte, p Profile) (Header, error) {
	var h Header
	hl := p.HeaderLen()
	if hl == 0 {
		return h, errProfile
	}
	if len(b) < hl+CRCLen {
		return h, newError(RuleShort, -1, int64(len(b)), int64(hl+CRCLen))
	}
	o := 0
	var version byte
	if p == ProfileRType17 {
		if [4]byte(b[0:4]) != Magic {
			return h, newError(RuleMagic, 0, int64(binary.BigEndian.Uint32(b)), int64(binary.BigEndian.Uint32(Magic[:])))
		}
		version = b[4]
		if version&^FlagCompressed != Version {
			return h, newError(RuleVersion, 4, int64(version&^FlagCompressed), Version)
		}
		h.Compressed = version&FlagCompressed != 0
		o = 5
	}
	h.PacketType = PacketType(b[o])
	h.Type = MsgType(b[o+1])
	h.Seq = binary.BigEndian.Uint16(b[o+2:])
	o += 4
	if p == ProfileRType17 {
		h.TickID = binary.BigEndian.Uint32(b[o:])
		o += 4
	}
	h.PayloadSize = binary.BigEndian.Uint16(b[o:])
	h.OriginalSize = binary.BigEndian.Uint16(b[o+2:])
	if want := hl + int(h.PayloadSize) + CRCLen; len(b) != want {
		return h, withHeader(newError(RuleLength, -1, int64(len(b)), int64(want)), h)
	}
	end := len(b) - CRCLen
	if got, want := binary.BigEndian.Uint32(b[end:]), crc32.ChecksumIEEE(b[:end]); got != want {
		return h, withHeader(newError(RuleCRC, end, int64(got), int64(want)), h)
	}
	if h.Compressed {
		return h, withHeader(newError(RuleCompressed, 4, int64(version), Version), h)
	}
	if h.OriginalSize != h.PayloadSize {
		return h, withHeader(newError(RuleOriginalSize, o+2, int64(h.OriginalSize), int64(h.PayloadSize)), h)
	}
	if h.PacketType != ClientToServer && h.PacketType != ServerToClient {
		return h, withHeader(newError(RulePacketType, p.typeOff()-1, int64(h.PacketType), -1), h)
	}
	return h, nil
}

func withHeader(e *Error, h Header) *Error {
	e.Header, e.HaveHeader = h, true
	return e
}

// typeOff returns the offset of the messageType byte; packetType precedes it.
func (p Profile) typeOff() int {
	if p == ProfileRType17 {
		return 6
	}
	return 1
}

// Decoder decodes datagrams strictly. Its zero value decodes the spec
// profile, accepts either direction and both lobby and instance messages; a
// server sets Dir to ClientToServer, a client to ServerToClient, and both set
// Channel to the socket's family. A Decoder is a plain value, safe to share
// between goroutines.
type Decoder struct {
	Profile Profile
	// Dir is the packetType the receiver expects (RuleDirection); 0 accepts
	// either, though the message type must still agree with the packetType
	// it is carried with (RuleTypeDirection, RuleInstDirection).
	Dir PacketType
	// Channel restricts the message types accepted (RuleTypeUnknown,
	// RuleInstTypeUnknown).
	Channel Channel
}

// Decode decodes datagram b into m, overwriting all of m. On success m.Rooms
// aliases b. On failure it returns an *Error naming the broken rule (or a
// plain error for an invalid profile) and m's contents are unspecified.
// Decode does not allocate on success.
//
// LOBBY_JOIN_ROOM with roomId 0 decodes: the request is well formed and the
// server answers it with JOIN_FAILED (PROTOCOLS.md §1.2). roomId 0 and port
// 0 are violations only in what a lobby sends (ROOM_CREATED, JOIN_SUCCESS,
// room list entries).
func (d Decoder) Decode(b []byte, m *Message) error {
	*m = Message{}
	h, err := DecodeHeader(b, d.Profile)
	if err != nil {
		return err
	}
	m.Header = h
	hl := d.Profile.HeaderLen()
	typeOff := d.Profile.typeOff()
	if d.Dir != 0 && h.PacketType != d.Dir {
		return withHeader(newError(RuleDirection, typeOff-1, int64(h.PacketType), int64(d.Dir)), h)
	}
	info := &msgTable[h.Type]
	if info.kind == 0 || (d.Channel != ChannelAny && info.channel != d.Channel) {
		rule := RuleTypeUnknown
		if d.Channel == ChannelInstance {
			rule = RuleInstTypeUnknown
		}
		return withHeader(newError(rule, typeOff, int64(h.Type), -1), h)
	}
	lobby := info.channel == ChannelLobby
	if info.dir != h.PacketType {
		rule := RuleTypeDirection
		if !lobby {
			rule = RuleInstDirection
		}
		return withHeader(newError(rule, typeOff-1, int64(h.PacketType), int64(info.dir)), h)
	}
	pl := b[hl : len(b)-CRCLen]
	sizeRule := RulePayloadSize
	if !lobby {
		sizeRule = RuleInstPayload
	}
	if n, fixed := h.Type.PayloadLen(); fixed && len(pl) != n {
		return withHeader(newError(sizeRule, hl-4, int64(len(pl)), int64(n)), h)
	}
	switch info.kind {
	case kindRoomID:
		m.RoomID = binary.BigEndian.Uint32(pl)
	case kindRoomRef:
		m.RoomID = binary.BigEndian.Uint32(pl)
		m.Port = binary.BigEndian.Uint16(pl[4:])
		if m.RoomID == 0 {
			return withHeader(newError(RuleRoomID, hl, 0, -1), h)
		}
		if m.Port == 0 {
			return withHeader(newError(RuleRoomPort, hl+4, 0, -1), h)
		}
	case kindU32:
		m.Value = binary.BigEndian.Uint32(pl)
	case kindU8:
		m.Value = uint32(pl[0])
	case kindList:
		return decodeList(h, hl, pl, m, sizeRule)
	}
	return nil
}

func decodeList(h Header, hl int, pl []byte, m *Message, sizeRule RuleID) error {
	if len(pl) < 2 {
		return withHeader(newError(sizeRule, hl-4, int64(len(pl)), -1), h)
	}
	count := int(binary.BigEndian.Uint16(pl))
	if want := 2 + RoomEntryLen*count; len(pl) != want {
		e := newError(RuleRoomListCount, hl, int64(count), int64((len(pl)-2)/RoomEntryLen))
		if (len(pl)-2)%RoomEntryLen != 0 {
			e.Want = -1
		}
		e.Diagnosis = diagnoseList(pl)
		return withHeader(e, h)
	}
	entries := pl[2:len(pl):len(pl)]
	for i := 0; len(entries)-i*RoomEntryLen >= RoomEntryLen; i++ {
		e := entries[i*RoomEntryLen : (i+1)*RoomEntryLen]
		off := hl + 2 + i*RoomEntryLen
		var err *Error
		switch {
		case e[0]|e[1]|e[2]|e[3] == 0:
			err = newError(RuleRoomID, off, 0, -1)
		case e[8]|e[9] == 0:
			err = newError(RuleRoomPort, off+8, 0, -1)
		case !RoomState(e[10]).Valid():
			err = newError(RuleRoomState, off+10, int64(e[10]), -1)
		case binary.BigEndian.Uint16(e[4:]) > binary.BigEndian.Uint16(e[6:]):
			err = newError(RuleRoomPlayers, off+4, int64(binary.BigEndian.Uint16(e[4:])), int64(binary.BigEndian.Uint16(e[6:])))
		}
		if err != nil {
			err.Index = i
			return withHeader(err, h)
		}
	}
	m.Rooms = RoomList{raw: entries}
	return nil
}

// diagnoseList names the layout a ROOM_LIST payload that fails the
// canonical one fits, or "" if none.
func diagnoseList(pl []byte) string {
	if len(pl) >= 4 {
		if n := uint64(binary.BigEndian.Uint32(pl)); uint64(len(pl)) == 4+15*n {
			return DiagSeed001
		}
	}
	if n := int(binary.BigEndian.Uint16(pl)); len(pl) == 2+13*n {
		return DiagPadded13
	}
	return ""
}

// GuessProfile guesses the header profile of one received datagram: it
// returns the first profile (rtype17, then spec) under which b has the right
// magic and version, the exact length its payloadSize announces and a
// matching CRC. ok is false when no profile fits.
func GuessProfile(b []byte) (p Profile, ok bool) {
	for _, p := range Profiles {
		if framed(b, p) {
			return p, true
		}
	}
	return ProfileSpec, false
}

func framed(b []byte, p Profile) bool {
	hl := p.HeaderLen()
	if len(b) < hl+CRCLen {
		return false
	}
	if p == ProfileRType17 && ([4]byte(b[0:4]) != Magic || b[4]&^FlagCompressed != Version) {
		return false
	}
	if hl+int(binary.BigEndian.Uint16(b[hl-4:]))+CRCLen != len(b) {
		return false
	}
	end := len(b) - CRCLen
	return binary.BigEndian.Uint32(b[end:]) == crc32.ChecksumIEEE(b[:end])
}
