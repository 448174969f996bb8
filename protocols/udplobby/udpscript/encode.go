package udpscript

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/script"
)

// Encode makes the datagram of message name in the session's header
// profile with udpwire.Append (header, payload, CRC computed). Fields not
// given are 0 (an empty room list), but sequenceId, which takes the
// session's next one; a given field is sent as given. The datagram is in
// the session's buffer, written over by its next Encode
// (script.Catalog).
func (catalog) Encode(sess any, name string, fields map[string]any) ([]byte, error) {
	s, err := sessionOf(sess)
	if err != nil {
		return nil, err
	}
	t, ok := byName[name]
	if !ok {
		return nil, fmt.Errorf("udpscript: no message %q in udp-lobby.md", name)
	}
	m := udpwire.Message{Header: udpwire.Header{Type: t}}
	var fr framing
	count, err := s.fill(&m, &fr, fields)
	if err != nil {
		return nil, fmt.Errorf("udpscript: %s: %v", name, err)
	}
	s.ping(&m, fields)
	var b []byte
	if count >= 0 && count != m.Rooms.Len() {
		b = appendListAsGiven(s.profile, &m, count)
	} else if b, err = udpwire.Append(s.buf[:0], s.profile, &m); err != nil {
		return nil, fmt.Errorf("udpscript: %s: %v", name, err)
	} else {
		s.buf = b
	}
	if fr.given != 0 {
		b = fr.apply(s.profile, &m, b)
	}
	if _, given := fields[fSeq]; !given {
		s.seq = m.Seq
	}
	s.track(m.Seq)
	return b, nil
}

// MalformedKinds implements script.Breaker: the malformed step's kinds.
func (catalog) MalformedKinds() []string {
	var out []string
	for _, k := range scenario.MalformedKinds(udpwire.ProtocolName) {
		out = append(out, string(k))
	}
	return out
}

// Break implements script.Breaker: the message as Encode makes it,
// broken as the built-in malformed step breaks its packets
// (udpclient.Break, the same draws from rng for the same bytes), a reply
// to its sequence id then judged as one to a malformed packet.
func (c catalog) Break(sess any, name string, fields map[string]any, kind string, rng *rand.Rand) ([]byte, error) {
	b, err := c.Encode(sess, name, fields)
	if err != nil {
		return nil, err
	}
	s, _ := sessionOf(sess) // Encode checked it
	inst := byName[name].Channel() == udpwire.ChannelInstance
	b = udpclient.Break(b, s.profile, scenario.MalformedKind(kind), inst, rng)
	s.noteMalformed(s.last, kind)
	return b, nil
}

var _ script.Breaker = catalog{}

// fill sets m's header and payload from fields, checked against m.Type's
// fields, and fr from the framing fields given; count is a given
// roomCount, or -1.
func (s *session) fill(m *udpwire.Message, fr *framing, fields map[string]any) (count int, err error) {
	count = -1
	m.Seq = s.seq + 1
	for k, v := range fields {
		f, ok := fieldOf(m.Type, k)
		if !ok {
			return 0, fmt.Errorf("no field %q", k)
		}
		if f.Kind == script.List {
			rooms, err := roomsOf(v)
			if err != nil {
				return 0, fmt.Errorf("%s: %v", k, err)
			}
			m.Rooms = udpwire.MakeRoomList(nil, rooms)
			continue
		}
		n, err := uintOf(v, f.Bits)
		if err != nil {
			return 0, fmt.Errorf("%s: %v", k, err)
		}
		if k == fRoomCount {
			count = int(n)
		}
		if fr.set(k, n) {
			continue
		}
		if err := s.set(m, k, n); err != nil {
			return 0, err
		}
	}
	return count, nil
}

// ping keeps the session's ping series: a CLIENT_PING (m) is in it, its
// clientTime the series' unless given; another message ends it.
func (s *session) ping(m *udpwire.Message, fields map[string]any) {
	if m.Type != udpwire.ClientPing {
		s.pings = time.Time{}
		return
	}
	ct := s.clientTime()
	if _, given := fields[fClientTime]; !given {
		m.Value = ct
	}
}

// set stores the integer field k of m.
func (s *session) set(m *udpwire.Message, k string, n uint64) error {
	switch k {
	case fSeq:
		m.Seq = uint16(n)
	case fTick:
		if s.profile != udpwire.ProfileRType17 {
			return fmt.Errorf("tickId: the %v header has none (header_profile rtype17 only)", s.profile)
		}
		m.TickID = uint32(n)
	case fRoomID:
		m.RoomID = uint32(n)
	case fPort:
		m.Port = uint16(n)
	case fRoomCount:
	default: // the one u8 or u32 value of an instance message
		m.Value = uint32(n)
	}
	return nil
}

// framing is what a send gave of its datagram's framing (§3.1, §3.3):
// each given field is written as given, the others computed.
type framing struct {
	given                     uint8 // a givenX bit per field given
	packetType, messageType   uint8
	payloadSize, originalSize uint16
	crc                       uint32
}

// Each framing field's bit in framing.given.
const (
	givenPacketType uint8 = 1 << iota
	givenMessageType
	givenPayloadSize
	givenOriginalSize
	givenCRC
)

// set keeps framing field k's value n, and reports whether k is one.
func (fr *framing) set(k string, n uint64) bool {
	switch k {
	case fPacketType:
		fr.packetType, fr.given = uint8(n), fr.given|givenPacketType
	case fMessageType:
		fr.messageType, fr.given = uint8(n), fr.given|givenMessageType
	case fPayloadSize:
		fr.payloadSize, fr.given = uint16(n), fr.given|givenPayloadSize
	case fOriginalSize:
		fr.originalSize, fr.given = uint16(n), fr.given|givenOriginalSize
	case fCRC:
		fr.crc, fr.given = uint32(n), fr.given|givenCRC
	default:
		return false
	}
	return true
}

// apply writes datagram b of m again with the framing given: the header
// as m's but for the fields given, the same payload, and the CRC of what
// precedes it unless crc was given.
func (fr *framing) apply(p udpwire.Profile, m *udpwire.Message, b []byte) []byte {
	payload := b[p.HeaderLen() : len(b)-udpwire.CRCLen]
	n := uint16(len(payload))
	h := udpwire.Header{PacketType: m.Type.Dir(), Type: m.Type, Seq: m.Seq, TickID: m.TickID, PayloadSize: n, OriginalSize: n}
	if fr.given&givenPacketType != 0 {
		h.PacketType = udpwire.PacketType(fr.packetType)
	}
	if fr.given&givenMessageType != 0 {
		h.Type = udpwire.MsgType(fr.messageType)
	}
	if fr.given&givenPayloadSize != 0 {
		h.PayloadSize = fr.payloadSize
	}
	if fr.given&givenOriginalSize != 0 {
		h.OriginalSize = fr.originalSize
	}
	out := udpwire.AppendRaw(make([]byte, 0, len(b)), p, h, payload)
	if fr.given&givenCRC != 0 {
		binary.BigEndian.PutUint32(out[len(out)-udpwire.CRCLen:], fr.crc)
	}
	return out
}

// fieldOf finds field k among t's header and payload fields.
func fieldOf(t udpwire.MsgType, k string) (script.Field, bool) {
	if f, ok := findField(headerFields, k); ok {
		return f, true
	}
	return findField(payloadFields[t], k)
}

func findField(fs []script.Field, k string) (script.Field, bool) {
	for _, f := range fs {
		if f.Name == k {
			return f, true
		}
	}
	return script.Field{}, false
}

// roomsOf reads a rooms list: []map[string]any or []any of them.
func roomsOf(v any) ([]udpwire.Room, error) {
	var list []map[string]any
	switch l := v.(type) {
	case []map[string]any:
		list = l
	case []any:
		for i, e := range l {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("entry %d is %T, not a room", i, e)
			}
			list = append(list, m)
		}
	default:
		return nil, fmt.Errorf("%T is not a list of rooms", v)
	}
	if len(list) > udpwire.MaxRooms {
		return nil, fmt.Errorf("%d rooms, at most %d fit", len(list), udpwire.MaxRooms)
	}
	rooms := make([]udpwire.Room, len(list))
	for i, e := range list {
		if err := roomOf(&rooms[i], e); err != nil {
			return nil, fmt.Errorf("room #%d: %v", i, err)
		}
	}
	return rooms, nil
}

func roomOf(r *udpwire.Room, e map[string]any) error {
	for k, v := range e {
		f, ok := findField(roomFields, k)
		if !ok {
			return fmt.Errorf("no field %q", k)
		}
		n, err := uintOf(v, f.Bits)
		if err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
		switch k {
		case fRoomID:
			r.ID = uint32(n)
		case fPlayerCount:
			r.Players = uint16(n)
		case fMaxPlayers:
			r.MaxPlayers = uint16(n)
		case fPort:
			r.Port = uint16(n)
		case fState:
			r.State = udpwire.RoomState(n)
		}
	}
	return nil
}

// uintOf reads an integer of at most bits bits, whatever Go integer type
// the script's value has.
func uintOf(v any, bits int) (uint64, error) {
	var n uint64
	switch x := v.(type) {
	case uint64:
		n = x
	case uint:
		n = uint64(x)
	case uint32:
		n = uint64(x)
	case uint16:
		n = uint64(x)
	case uint8:
		n = uint64(x)
	case int, int64, int32, int16, int8:
		i := signed(x)
		if i < 0 {
			return 0, fmt.Errorf("%d is negative", i)
		}
		n = uint64(i)
	default:
		return 0, fmt.Errorf("%v (%T) is not an integer", v, v)
	}
	if bits < 64 && n > math.MaxUint64>>(64-bits) {
		return 0, fmt.Errorf("%d does not fit %d bits", n, bits)
	}
	return n, nil
}

func signed(x any) int64 {
	switch i := x.(type) {
	case int:
		return int64(i)
	case int64:
		return i
	case int32:
		return int64(i)
	case int16:
		return int64(i)
	case int8:
		return int64(i)
	}
	return 0
}

// appendListAsGiven writes a LOBBY_ROOM_LIST whose roomCount was given
// and disagrees with its rooms: well framed (sizes and CRC right), the
// count as given.
func appendListAsGiven(p udpwire.Profile, m *udpwire.Message, count int) []byte {
	pl := binary.BigEndian.AppendUint16(nil, uint16(count))
	pl = append(pl, m.Rooms.Bytes()...)
	n := uint16(len(pl))
	h := m.Header
	h.PacketType, h.PayloadSize, h.OriginalSize = m.Type.Dir(), n, n
	return udpwire.AppendRaw(nil, p, h, pl)
}
