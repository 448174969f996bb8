package udpwire

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
	h, f := decodeHeader(b, p)
	if f.rule != "" {
		return h, f.err()
	}
	return h, nil
}

// ruleBadProfile is what DecodeRule returns for a Decoder whose Profile is
// invalid; Decode and DecodeHeader return a plain error then.
const ruleBadProfile RuleID = "invalid-profile"

// fault is a decode failure as a plain value: everything an *Error carries,
// built without allocating. Decode turns it into an *Error; DecodeRule only
// returns its rule, so a server's drop path costs no allocation.
type fault struct {
	rule       RuleID
	diag       string
	h          Header
	haveHeader bool
	off, index int
	got, want  int64
}

func mkFault(rule RuleID, off int, got, want int64) fault {
	return fault{rule: rule, off: off, index: -1, got: got, want: want}
}

func (f fault) withHeader(h Header) fault {
	f.h, f.haveHeader = h, true
	return f
}

// err returns the failure as an *Error (errProfile for an invalid profile).
func (f *fault) err() error {
	if f.rule == ruleBadProfile {
		return errProfile
	}
	return &Error{Rule: f.rule, Diagnosis: f.diag, Header: f.h, HaveHeader: f.haveHeader,
		Offset: f.off, Index: f.index, Got: f.got, Want: f.want}
}

func decodeHeader(b []byte, p Profile) (Header, fault) {
	var h Header
	hl := p.HeaderLen()
	if hl == 0 {
		return h, fault{rule: ruleBadProfile}
	}
	if len(b) < hl+CRCLen {
		return h, mkFault(RuleShort, -1, int64(len(b)), int64(hl+CRCLen))
	}
	o := 0
	var version byte
	if p == ProfileRType17 {
		if [4]byte(b[0:4]) != Magic {
			return h, mkFault(RuleMagic, 0, int64(binary.BigEndian.Uint32(b)), int64(binary.BigEndian.Uint32(Magic[:])))
		}
		version = b[4]
		if version&^FlagCompressed != Version {
			return h, mkFault(RuleVersion, 4, int64(version&^FlagCompressed), Version)
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
		return h, mkFault(RuleLength, -1, int64(len(b)), int64(want)).withHeader(h)
	}
	end := len(b) - CRCLen
	if got, want := binary.BigEndian.Uint32(b[end:]), crc32.ChecksumIEEE(b[:end]); got != want {
		return h, mkFault(RuleCRC, end, int64(got), int64(want)).withHeader(h)
	}
	if h.Compressed {
		return h, mkFault(RuleCompressed, 4, int64(version), Version).withHeader(h)
	}
	if h.OriginalSize != h.PayloadSize {
		return h, mkFault(RuleOriginalSize, o+2, int64(h.OriginalSize), int64(h.PayloadSize)).withHeader(h)
	}
	if h.PacketType != ClientToServer && h.PacketType != ServerToClient {
		return h, mkFault(RulePacketType, p.typeOff()-1, int64(h.PacketType), -1).withHeader(h)
	}
	return h, fault{}
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
// server answers it with JOIN_FAILED (udp-lobby.md §10). roomId 0 and port
// 0 are violations only in what a lobby sends (ROOM_CREATED, JOIN_SUCCESS,
// room list entries). Instance payload values (reasons, seconds left,
// player ids) are not range-checked: the documents give no ranges.
func (d Decoder) Decode(b []byte, m *Message) error {
	if f := d.decode(b, m); f.rule != "" {
		return f.err()
	}
	return nil
}

// DecodeRule is Decode for a receiver that only counts failures: it applies
// exactly the same checks in the same order but returns the broken rule's
// id ("" when b decodes) instead of an *Error, and never allocates, even
// on failure. A server drops malformed datagrams through it, so a flood of
// garbage costs no garbage collection. For a Decoder with an invalid
// Profile it returns the non-rule id "invalid-profile".
func (d Decoder) DecodeRule(b []byte, m *Message) RuleID {
	f := d.decode(b, m)
	return f.rule
}

func (d Decoder) decode(b []byte, m *Message) fault {
	*m = Message{}
	h, f := decodeHeader(b, d.Profile)
	if f.rule != "" {
		return f
	}
	m.Header = h
	hl := d.Profile.HeaderLen()
	typeOff := d.Profile.typeOff()
	if d.Dir != 0 && h.PacketType != d.Dir {
		return mkFault(RuleDirection, typeOff-1, int64(h.PacketType), int64(d.Dir)).withHeader(h)
	}
	info := &msgTable[h.Type]
	if info.kind == 0 || (d.Channel != ChannelAny && info.channel != d.Channel) {
		rule := RuleTypeUnknown
		if d.Channel == ChannelInstance {
			rule = RuleInstTypeUnknown
		}
		return mkFault(rule, typeOff, int64(h.Type), -1).withHeader(h)
	}
	lobby := info.channel == ChannelLobby
	if info.dir != h.PacketType {
		rule := RuleTypeDirection
		if !lobby {
			rule = RuleInstDirection
		}
		return mkFault(rule, typeOff-1, int64(h.PacketType), int64(info.dir)).withHeader(h)
	}
	pl := b[hl : len(b)-CRCLen]
	sizeRule := RulePayloadSize
	if !lobby {
		sizeRule = RuleInstPayload
	}
	if n, fixed := h.Type.PayloadLen(); fixed && len(pl) != n {
		return mkFault(sizeRule, hl-4, int64(len(pl)), int64(n)).withHeader(h)
	}
	switch info.kind {
	case kindRoomID:
		m.RoomID = binary.BigEndian.Uint32(pl)
	case kindRoomRef:
		m.RoomID = binary.BigEndian.Uint32(pl)
		m.Port = binary.BigEndian.Uint16(pl[4:])
		if m.RoomID == 0 {
			return mkFault(RuleRoomID, hl, 0, -1).withHeader(h)
		}
		if m.Port == 0 {
			return mkFault(RuleRoomPort, hl+4, 0, -1).withHeader(h)
		}
	case kindU32:
		m.Value = binary.BigEndian.Uint32(pl)
	case kindU8:
		m.Value = uint32(pl[0])
	case kindList:
		return decodeList(h, hl, pl, m, sizeRule)
	}
	return fault{}
}

func decodeList(h Header, hl int, pl []byte, m *Message, sizeRule RuleID) fault {
	if len(pl) < 2 {
		return mkFault(sizeRule, hl-4, int64(len(pl)), -1).withHeader(h)
	}
	count := int(binary.BigEndian.Uint16(pl))
	if want := 2 + RoomEntryLen*count; len(pl) != want {
		f := mkFault(RuleRoomListCount, hl, int64(count), int64((len(pl)-2)/RoomEntryLen))
		if (len(pl)-2)%RoomEntryLen != 0 {
			f.want = -1
		}
		f.diag = diagnoseList(pl)
		return f.withHeader(h)
	}
	entries := pl[2:len(pl):len(pl)]
	for i := 0; len(entries)-i*RoomEntryLen >= RoomEntryLen; i++ {
		e := entries[i*RoomEntryLen : (i+1)*RoomEntryLen]
		off := hl + 2 + i*RoomEntryLen
		var f fault
		switch {
		case e[0]|e[1]|e[2]|e[3] == 0:
			f = mkFault(RuleRoomID, off, 0, -1)
		case e[8]|e[9] == 0:
			f = mkFault(RuleRoomPort, off+8, 0, -1)
		case !RoomState(e[10]).Valid():
			f = mkFault(RuleRoomState, off+10, int64(e[10]), -1)
		case binary.BigEndian.Uint16(e[4:]) > binary.BigEndian.Uint16(e[6:]):
			f = mkFault(RuleRoomPlayers, off+4, int64(binary.BigEndian.Uint16(e[4:])), int64(binary.BigEndian.Uint16(e[6:])))
		}
		if f.rule != "" {
			f.index = i
			return f.withHeader(h)
		}
	}
	m.Rooms = RoomList{raw: entries}
	return fault{}
}

// diagnoseList names the layout a ROOM_LIST payload that fails the
// canonical one fits, or "" if none.
func diagnoseList(pl []byte) string {
	if len(pl) >= 4 {
		if n := uint64(binary.BigEndian.Uint32(pl)); uint64(len(pl)) == 4+15*n {
			return DiagLobbySystem
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

// LengthFits reports whether b's length field agrees with its size under
// a header profile, whatever its CRC and content: a lobby's datagram,
// perhaps a faulty one, not bytes of another protocol. GuessProfile's
// datagrams all fit.
func LengthFits(b []byte) bool {
	for _, p := range Profiles {
		if hl := p.HeaderLen(); len(b) >= hl+CRCLen && hl+int(binary.BigEndian.Uint16(b[hl-4:]))+CRCLen == len(b) {
			return true
		}
	}
	return false
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
