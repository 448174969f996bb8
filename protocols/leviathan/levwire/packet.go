package levwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Message is one request or response inside an Ln packet. Payload holds the
// exact payload bytes (a sub-slice of the datagram after Decode); decode it
// with the payload type's Decode method or DecodeRequestPayload /
// DecodeResponsePayload.
type Message struct {
	Kind       MessageKind
	Number     uint32 // MessageNumber, from 1, shared by requests and responses
	Type       uint16 // RequestType or ResponseType, per Kind
	ResponseTo uint32 // responses only: MessageNumber answered, or 0
	Payload    []byte
}

// RequestType returns m.Type as a RequestType (meaningful when Kind is KindRequest).
func (m *Message) RequestType() RequestType { return RequestType(m.Type) }

// ResponseType returns m.Type as a ResponseType (meaningful when Kind is KindResponse).
func (m *Message) ResponseType() ResponseType { return ResponseType(m.Type) }

// String implements fmt.Stringer ("Request Connect #1", "Response Connect #1 to 1").
func (m Message) String() string {
	if m.Kind == KindResponse {
		return fmt.Sprintf("Response %s #%d to %d", ResponseType(m.Type), m.Number, m.ResponseTo)
	}
	if m.Kind == KindRequest {
		return fmt.Sprintf("Request %s #%d", RequestType(m.Type), m.Number)
	}
	return fmt.Sprintf("%s #%d", m.Kind, m.Number)
}

// NewRequest builds a request message with p's bytes as payload (allocates;
// hot paths use AppendRequestHeader + p.Append).
func NewRequest(number uint32, p RequestPayload) Message {
	return Message{Kind: KindRequest, Number: number, Type: uint16(p.RequestType()), Payload: p.Append(nil)}
}

// NewResponse builds a response message with p's bytes as payload.
func NewResponse(number, responseTo uint32, p ResponsePayload) Message {
	return Message{Kind: KindResponse, Number: number, Type: uint16(p.ResponseType()), ResponseTo: responseTo, Payload: p.Append(nil)}
}

// Packet is one decoded datagram, Ln or La. Decode reuses its slices, so a
// Packet kept per connection makes the hot path allocation-free; after
// Decode its byte slices alias the datagram (Clone to keep them).
type Packet struct {
	Type PacketType

	// Ln fields.
	ID       uint32 // PKT_ID
	StartAck uint32 // 0: no ack field
	Acks     []byte // packed ack bytes; read them with AckedIDs / Acks
	// MessageCount is the count read from the wire. Encoding writes
	// len(Messages) instead.
	MessageCount uint8
	Messages     []Message

	// La field.
	AckIDs []uint32

	// Trailing holds bytes left after the last decoded message or La id;
	// the engine ignores them (lenient decoding does too). An engine's
	// ack-only datagram shows up as an Ln packet whose Trailing starts with
	// the La magic (see EmbeddedAckOnly).
	Trailing []byte
	// Stopped is set by lenient decoding when a message of unknown kind or
	// type ended decoding before MessageCount messages (the engine cannot
	// find the next message either); Messages holds those before it and
	// Trailing starts at it.
	Stopped *Error
}

// AckedIDs appends to dst the ids acked by an Ln packet's ack field, or by
// an La packet's ids, under r (which matters only for Ln).
func (p *Packet) AckedIDs(dst []uint32, r AckReading) []uint32 {
	if p.Type == TypeAckOnly {
		return append(dst, p.AckIDs...)
	}
	return AppendAckedIDs(dst, p.StartAck, p.Acks, r)
}

// HasAck reports whether the packet acks id under r.
func (p *Packet) HasAck(id uint32, r AckReading) bool {
	if p.Type == TypeAckOnly {
		for _, a := range p.AckIDs {
			if a == id {
				return true
			}
		}
		return false
	}
	return Acked(p.StartAck, p.Acks, id, r)
}

// EmbeddedAckOnly reports whether an Ln packet's trailing bytes start with an
// La packet type, the engine defect where its ack-only datagram carries the
// previous Ln packet in front of the La section.
func (p *Packet) EmbeddedAckOnly() bool {
	return p.Type == TypeNormal && len(p.Trailing) >= 2 &&
		PacketType(binary.BigEndian.Uint16(p.Trailing)) == TypeAckOnly
}

// Clone returns a deep copy of p that does not alias the datagram.
func (p *Packet) Clone() *Packet {
	c := *p
	c.Acks = clone(p.Acks)
	c.Trailing = clone(p.Trailing)
	if p.AckIDs != nil {
		c.AckIDs = append([]uint32(nil), p.AckIDs...)
	}
	if p.Messages != nil {
		c.Messages = make([]Message, len(p.Messages))
		for i, m := range p.Messages {
			m.Payload = clone(m.Payload)
			c.Messages[i] = m
		}
	}
	return &c
}

// Mode selects how much Decode checks.
type Mode uint8

const (
	// Lenient accepts what the engine accepts (the default).
	Lenient Mode = iota
	// Strict also enforces the StrictOnly rules of Rules.
	Strict
)

// Decode decodes datagram b into dst, reusing dst's slices. Errors are
// *Error. In Lenient mode a message of unknown kind or type stops decoding
// and is reported in dst.Stopped, not as an error; trailing bytes are kept
// in dst.Trailing. String lengths are bounded by the bytes left; nothing is
// allocated from a length read off the wire. On error dst keeps what was
// decoded before the failing field (header, acks, earlier messages), which
// is what the engine would already have acted on.
func Decode(dst *Packet, b []byte, mode Mode) error {
	strict := mode == Strict
	*dst = Packet{Messages: dst.Messages[:0], AckIDs: dst.AckIDs[:0]}
	if len(b) > MaxDatagram {
		return errf(RuleDatagramSize, -1, "datagram of %d bytes", len(b))
	}
	if len(b) < 2 {
		return errf(RuleShortHeader, 0, "datagram of %d bytes has no packet type", len(b))
	}
	dst.Type = PacketType(binary.BigEndian.Uint16(b))
	switch dst.Type {
	case TypeNormal:
		return decodeNormal(dst, b, strict)
	case TypeAckOnly:
		return decodeAckOnly(dst, b, strict)
	}
	return errf(RuleBadType, 0, "packet type 0x%04x", uint16(dst.Type))
}

func decodeAckOnly(dst *Packet, b []byte, strict bool) error {
	if len(b) < 3 {
		return errf(RuleShortHeader, 2, "La packet has no Count byte")
	}
	n := int(b[2])
	if strict && (n == 0 || n > MaxAckOnlyIDs) {
		return errf(RuleAckOnlyCount, 2, "La Count %d", n)
	}
	if 3+4*n > len(b) {
		return errf(RuleAckOnlyTrunc, len(b), "La Count %d needs %d bytes, datagram has %d", n, 3+4*n, len(b))
	}
	for i := 0; i < n; i++ {
		id := binary.BigEndian.Uint32(b[3+4*i:])
		if strict && id == 0 {
			return errf(RuleAckOnlyIDZero, 3+4*i, "La acks PKT_ID 0")
		}
		dst.AckIDs = append(dst.AckIDs, id)
	}
	if end := 3 + 4*n; end < len(b) {
		dst.Trailing = b[end:]
		if strict {
			return errf(RuleTrailing, end, "%d bytes after the La ids", len(b)-end)
		}
	}
	return nil
}

func decodeNormal(dst *Packet, b []byte, strict bool) error {
	if len(b) < lnHeaderLen {
		return errf(RuleShortHeader, len(b), "Ln header needs %d bytes, datagram has %d", lnHeaderLen, len(b))
	}
	dst.ID = binary.BigEndian.Uint32(b[2:])
	if dst.ID == 0 {
		return errf(RulePacketIDZero, 2, "PKT_ID is 0")
	}
	dst.StartAck = binary.BigEndian.Uint32(b[6:])
	off := lnHeaderLen
	if dst.StartAck != 0 {
		if off >= len(b) {
			return errf(RuleAckTruncated, off, "StartAck %d but no ack byte count", dst.StartAck)
		}
		n := int(b[off])
		if strict && (n == 0 || n > MaxAckBytes) {
			return errf(RuleAckCount, off, "%d ack bytes", n)
		}
		off++
		if off+n > len(b) {
			return errf(RuleAckTruncated, len(b), "%d ack bytes announced, %d present", n, len(b)-off)
		}
		dst.Acks = b[off : off+n : off+n]
		if strict && n > 0 && dst.Acks[n-1] == 0 {
			return errf(RuleAckZeroTail, off+n-1, "last ack byte is zero")
		}
		off += n
	}
	if off >= len(b) {
		return errf(RuleShortHeader, off, "no MessageCount byte")
	}
	dst.MessageCount = b[off]
	off++
	for i := 0; i < int(dst.MessageCount); i++ {
		var m Message
		n, err := decodeMessage(&m, b, off, strict)
		if err != nil {
			if !strict && (err.Rule == RuleMsgKind || err.Rule == RuleMsgType) {
				dst.Stopped = err
				break
			}
			return err
		}
		dst.Messages = append(dst.Messages, m)
		off += n
	}
	if off < len(b) {
		dst.Trailing = b[off:]
		if strict {
			return errf(RuleTrailing, off, "%d bytes after the last message", len(b)-off)
		}
	}
	return nil
}

// decodeMessage decodes the message starting at off and returns its length.
func decodeMessage(m *Message, b []byte, off int, strict bool) (int, *Error) {
	if off >= len(b) {
		return 0, errf(RuleMsgTruncated, off, "message missing: datagram ends")
	}
	m.Kind = MessageKind(b[off])
	var shape []field
	var ok bool
	var h int
	switch m.Kind {
	case KindRequest:
		if off+reqHeaderLen > len(b) {
			return 0, errf(RuleMsgTruncated, off, "request header needs %d bytes, %d left", reqHeaderLen, len(b)-off)
		}
		m.Number = binary.BigEndian.Uint32(b[off+1:])
		m.Type = binary.BigEndian.Uint16(b[off+5:])
		h = reqHeaderLen
		shape, ok = requestShape(RequestType(m.Type))
		if !ok {
			return 0, errf(RuleMsgType, off, "request type %s has no known payload", RequestType(m.Type))
		}
	case KindResponse:
		if off+resHeaderLen > len(b) {
			return 0, errf(RuleMsgTruncated, off, "response header needs %d bytes, %d left", resHeaderLen, len(b)-off)
		}
		m.Number = binary.BigEndian.Uint32(b[off+1:])
		m.Type = binary.BigEndian.Uint16(b[off+5:])
		m.ResponseTo = binary.BigEndian.Uint32(b[off+7:])
		h = resHeaderLen
		shape, ok = responseShape(ResponseType(m.Type))
		if !ok {
			return 0, errf(RuleMsgType, off, "response type %s has no known payload", ResponseType(m.Type))
		}
	default:
		return 0, errf(RuleMsgKind, off, "message kind 0x%02x", b[off])
	}
	if strict && m.Number == 0 {
		return 0, errf(RuleMsgNumberZero, off+1, "MessageNumber is 0")
	}
	n, err := payloadLen(b, off+h, shape, strict)
	if err != nil {
		return 0, err
	}
	m.Payload = b[off+h : off+h+n : off+h+n]
	if strict && m.Type == 0 { // Connect, request or response
		if v := int32(binary.BigEndian.Uint32(m.Payload)); v != CheckValue {
			return 0, errf(RuleCheckValue, off+h, "CheckValue %d", v)
		}
	}
	return h + n, nil
}

// AppendNormalHeader appends an Ln header: type, PKT_ID, StartAck, the ack
// byte count and bytes when startAck != 0, and MessageCount. It writes what
// it is given (id 0, empty acks, any count), so conformance tests can build
// bad packets; messages follow with AppendRequestHeader/AppendResponseHeader
// and a payload's Append.
func AppendNormalHeader(b []byte, id, startAck uint32, acks []byte, messageCount uint8) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(TypeNormal))
	b = appendU32(b, id)
	b = appendU32(b, startAck)
	if startAck != 0 {
		b = append(b, byte(len(acks)))
		b = append(b, acks...)
	}
	return append(b, messageCount)
}

// AppendRequestHeader appends a request message header; the payload follows.
func AppendRequestHeader(b []byte, number uint32, t RequestType) []byte {
	b = append(b, byte(KindRequest))
	b = appendU32(b, number)
	return binary.BigEndian.AppendUint16(b, uint16(t))
}

// AppendResponseHeader appends a response message header; the payload follows.
func AppendResponseHeader(b []byte, number uint32, t ResponseType, responseTo uint32) []byte {
	b = append(b, byte(KindResponse))
	b = appendU32(b, number)
	b = binary.BigEndian.AppendUint16(b, uint16(t))
	return appendU32(b, responseTo)
}

// AppendRequest appends a complete request message. Passing p as an
// interface boxes it (one allocation for payloads with strings); the hot
// path is AppendRequestHeader followed by p.Append.
func AppendRequest(b []byte, number uint32, p RequestPayload) []byte {
	return p.Append(AppendRequestHeader(b, number, p.RequestType()))
}

// AppendResponse appends a complete response message. Like AppendRequest it
// boxes p; the hot path is AppendResponseHeader followed by p.Append.
func AppendResponse(b []byte, number, responseTo uint32, p ResponsePayload) []byte {
	return p.Append(AppendResponseHeader(b, number, p.ResponseType(), responseTo))
}

// AppendMessage appends m (header and raw payload). A Kind other than
// KindResponse gets a request-shaped header with m.Kind as its first byte,
// so bad kinds can be produced for conformance tests.
func AppendMessage(b []byte, m *Message) []byte {
	if m.Kind == KindResponse {
		b = AppendResponseHeader(b, m.Number, ResponseType(m.Type), m.ResponseTo)
	} else {
		b = append(b, byte(m.Kind))
		b = appendU32(b, m.Number)
		b = binary.BigEndian.AppendUint16(b, m.Type)
	}
	return append(b, m.Payload...)
}

// AppendAckOnly appends an La packet acking ids. It refuses more than 255
// ids (the Count is a byte); the engine's peers expect 1 to 4.
func AppendAckOnly(b []byte, ids []uint32) ([]byte, error) {
	if len(ids) > 255 {
		return b, errf(RuleEncode, -1, "%d ids in one La packet (max 255)", len(ids))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(TypeAckOnly))
	b = append(b, byte(len(ids)))
	for _, id := range ids {
		b = appendU32(b, id)
	}
	return b, nil
}

// AppendPacket appends the wire form of p: an La packet from p.AckIDs, or an
// Ln packet from ID, StartAck, Acks and Messages (MessageCount is written as
// len(Messages); Trailing is not written). It refuses what the format
// cannot carry: PKT_ID 0, ack bytes with StartAck 0, more than 255 ack bytes
// or messages, a result over MaxDatagram. b is returned unchanged on error.
func AppendPacket(b []byte, p *Packet) ([]byte, error) {
	start := len(b)
	switch p.Type {
	case TypeAckOnly:
		out, err := AppendAckOnly(b, p.AckIDs)
		if err != nil {
			return b, err
		}
		b = out
	case TypeNormal:
		switch {
		case p.ID == 0:
			return b, errf(RuleEncode, -1, "PKT_ID 0")
		case p.StartAck == 0 && len(p.Acks) > 0:
			return b, errf(RuleEncode, -1, "%d ack bytes with StartAck 0", len(p.Acks))
		case len(p.Acks) > 255:
			return b, errf(RuleEncode, -1, "%d ack bytes (max 255)", len(p.Acks))
		case len(p.Messages) > 255:
			return b, errf(RuleEncode, -1, "%d messages (max 255)", len(p.Messages))
		}
		b = AppendNormalHeader(b, p.ID, p.StartAck, p.Acks, uint8(len(p.Messages)))
		for i := range p.Messages {
			b = AppendMessage(b, &p.Messages[i])
		}
	default:
		return b, errf(RuleEncode, -1, "packet type %s", p.Type)
	}
	if n := len(b) - start; n > MaxDatagram {
		return b[:start], errf(RuleEncode, -1, "packet of %d bytes exceeds %d", n, MaxDatagram)
	}
	return b, nil
}

// Equal reports whether two decoded packets carry the same values (nil and
// empty slices are equal).
func (p *Packet) Equal(q *Packet) bool {
	if p.Type != q.Type || p.ID != q.ID || p.StartAck != q.StartAck ||
		p.MessageCount != q.MessageCount || !bytes.Equal(p.Acks, q.Acks) ||
		!bytes.Equal(p.Trailing, q.Trailing) || len(p.Messages) != len(q.Messages) ||
		len(p.AckIDs) != len(q.AckIDs) || (p.Stopped == nil) != (q.Stopped == nil) {
		return false
	}
	for i := range p.AckIDs {
		if p.AckIDs[i] != q.AckIDs[i] {
			return false
		}
	}
	for i := range p.Messages {
		a, c := &p.Messages[i], &q.Messages[i]
		if a.Kind != c.Kind || a.Number != c.Number || a.Type != c.Type ||
			a.ResponseTo != c.ResponseTo || !bytes.Equal(a.Payload, c.Payload) {
			return false
		}
	}
	return true
}
