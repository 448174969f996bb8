package levscript

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/script"
)

// Catalog is the Leviathan protocol's messages for scripted steps.
var Catalog script.Catalog = catalog{}

type catalog struct{}

// Messages implements script.Catalog.
func (catalog) Messages() []script.Message {
	out := make([]script.Message, len(entries))
	for i := range entries {
		out[i] = entries[i].msg
	}
	return out
}

// Session is one client's state across its messages: the MessageNumber
// its next message takes and the requests it was sent, which its
// responses answer by default.
type Session struct {
	// NextMessageNumber is the MessageNumber Encode gives the next message
	// sent without one (from 1). A driver whose connection numbers the
	// messages itself (levconn.Conn.NextMessageNumber) sets it first.
	NextMessageNumber uint32

	// last is the last request decoded of each type met (a few: a
	// server's own requests), not a table of every type: a client keeps
	// it as long as it lives.
	last  []received
	count uint64
}

// received is the last request of a type decoded: its MessageNumber and
// when (the order of decoding).
type received struct {
	typ    lv.RequestType
	number uint32
	seq    uint64
}

// NewSession implements script.Catalog. Leviathan has no protocol options:
// nothing in them changes a message (the ack-bit reading is the
// packets').
func (catalog) NewSession(any) any { return newSession() }

func newSession() *Session { return &Session{NextMessageNumber: lv.FirstMessageNumber} }

// take returns the next MessageNumber and moves on, skipping 0 as levconn
// does.
func (s *Session) take() uint32 {
	n := s.NextMessageNumber
	s.NextMessageNumber++
	if s.NextMessageNumber == 0 {
		s.NextMessageNumber = 1
	}
	return n
}

// answerTo is the MessageNumber of the last request decoded of the types a
// response answers, or 0.
func (s *Session) answerTo(types []lv.RequestType) uint32 {
	var best received
	for _, r := range s.last {
		if r.seq > best.seq && slices.Contains(types, r.typ) {
			best = r
		}
	}
	return best.number
}

// saw records a request decoded.
func (s *Session) saw(t lv.RequestType, number uint32) {
	s.count++
	for i := range s.last {
		if s.last[i].typ == t {
			s.last[i].number, s.last[i].seq = number, s.count
			return
		}
	}
	s.last = append(s.last, received{typ: t, number: number, seq: s.count})
}

// sessionOf is the session Encode and Decode were given; nil (or another
// type) is a fresh one, kept by no one.
func sessionOf(session any) *Session {
	if s, ok := session.(*Session); ok && s != nil {
		return s
	}
	return newSession()
}

// Encode implements script.Catalog: the message's bytes, header and
// payload, as they follow an Ln packet's MessageCount.
func (catalog) Encode(session any, name string, fields map[string]any) ([]byte, error) {
	e, ok := byName(name)
	if !ok {
		return nil, fmt.Errorf("leviathan: no message %q in leviathan.md §5", name)
	}
	if err := knownFields(e, fields); err != nil {
		return nil, err
	}
	s := sessionOf(session)
	v := values{m: fields}
	b := e.header(&v, s)
	b = e.encode(&v, b)
	if v.err != nil {
		return nil, v.err
	}
	if len(b) > maxMessage {
		return nil, &lv.Error{Rule: lv.RuleEncode, Offset: -1,
			Detail: fmt.Sprintf("%s of %d bytes: one Ln packet carries at most %d", name, len(b), maxMessage)}
	}
	if _, given := fields[fieldNumber]; !given {
		s.take()
	}
	return b, nil
}

// header appends the message header: the given MessageNumber and
// ResponseTo, or the session's.
func (e *entry) header(v *values, s *Session) []byte {
	number := v.u32(fieldNumber, s.NextMessageNumber)
	if e.kind == lv.KindRequest {
		return lv.AppendRequestHeader(nil, number, lv.RequestType(e.typ))
	}
	return lv.AppendResponseHeader(nil, number, lv.ResponseType(e.typ), v.u32(fieldResponseTo, s.answerTo(e.answers)))
}

// knownFields refuses a field the message does not have.
func knownFields(e *entry, fields map[string]any) error {
	for name := range fields {
		found := false
		for _, f := range e.msg.Fields {
			found = found || f.Name == name
		}
		if !found {
			return fmt.Errorf("leviathan: %s has no field %s", e.msg.Name, name)
		}
	}
	return nil
}

// Decode implements script.Catalog: b is one message; channel is ignored
// (Leviathan has one).
func (catalog) Decode(session any, _ string, b []byte) script.Decoded {
	s := sessionOf(session)
	var d script.Decoded
	wrapped := wrap(b)
	var p lv.Packet
	if err := lv.Decode(&p, wrapped, lv.Lenient); err != nil {
		d.Name, d.Fields = peek(b)
		d.Violations = append(d.Violations, violation(err, b))
		return d
	}
	if p.Stopped != nil || len(p.Messages) != 1 {
		d.Violations = append(d.Violations, violation(stopped(p.Stopped), b))
		return d
	}
	m := &p.Messages[0]
	d = decodeMessage(m)
	if len(p.Trailing) > 0 {
		d.Violations = append(d.Violations, script.Violation{Rule: string(lv.RulePayload),
			Detail: fmt.Sprintf("%d bytes after the payload of %s", len(p.Trailing), d.Name)})
	}
	var strict lv.Packet // p's message stays as read
	if err := lv.Decode(&strict, wrapped, lv.Strict); err != nil && !errors.Is(err, &lv.Error{Rule: lv.RuleTrailing}) {
		d.Violations = append(d.Violations, violation(err, b))
	}
	if d.Name != "" && m.Kind == lv.KindRequest {
		s.saw(m.RequestType(), m.Number)
	}
	return d
}

// decodeMessage reads a message the codec shaped: its name and fields.
func decodeMessage(m *lv.Message) script.Decoded {
	e, ok := byType(m.Kind, m.Type)
	if !ok { // a shape the codec knows and the catalog does not
		return script.Decoded{Violations: []script.Violation{{Rule: string(lv.RuleMsgType),
			Detail: fmt.Sprintf("%s is no message of the catalog", m)}}}
	}
	f, err := e.decode(m.Payload)
	d := script.Decoded{Name: e.msg.Name, Fields: f}
	if err != nil {
		d.Violations = append(d.Violations, violation(err, nil))
	}
	d.Fields[fieldNumber] = uint64(m.Number)
	if m.Kind == lv.KindResponse {
		d.Fields[fieldResponseTo] = uint64(m.ResponseTo)
	}
	return d
}

// stopped is why lenient decoding read no message.
func stopped(err *lv.Error) error {
	if err != nil {
		return err
	}
	return &lv.Error{Rule: lv.RuleMsgTruncated, Offset: -1, Detail: "no message"}
}

// lnHeader is the Ln packet header Decode puts before a message to read
// it with the codec: PKT_ID 1, no acks, one message.
var lnHeader = lv.AppendNormalHeader(nil, 1, 0, nil, 1)

func wrap(b []byte) []byte {
	out := make([]byte, 0, len(lnHeader)+len(b))
	return append(append(out, lnHeader...), b...)
}

// violation is a codec error as a script sees it. Its offsets count from
// the start of the Ln packet the message was read in, which the detail
// says when the message came as a unit of its own (b).
func violation(err error, b []byte) script.Violation {
	var le *lv.Error
	if !errors.As(err, &le) {
		return script.Violation{Rule: string(lv.RulePayload), Detail: err.Error()}
	}
	if b == nil {
		return script.Violation{Rule: string(le.Rule), Detail: le.Detail}
	}
	return script.Violation{Rule: string(le.Rule), Detail: fmt.Sprintf("%s (read as the only message of an Ln packet: a %d-byte header, then this %d-byte message)",
		le.Detail, len(lnHeader), len(b))}
}

// peek names a message the codec could not read whole from its header,
// with the header's fields: enough for a script to see what came.
func peek(b []byte) (string, map[string]any) {
	if len(b) < 7 {
		return "", nil
	}
	e, ok := byType(lv.MessageKind(b[0]), binary.BigEndian.Uint16(b[5:]))
	if !ok {
		return "", nil
	}
	f := map[string]any{fieldNumber: uint64(binary.BigEndian.Uint32(b[1:]))}
	if e.kind == lv.KindResponse {
		if len(b) < 11 {
			return e.msg.Name, f
		}
		f[fieldResponseTo] = uint64(binary.BigEndian.Uint32(b[7:]))
	}
	return e.msg.Name, f
}
