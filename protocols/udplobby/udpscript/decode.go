package udpscript

import (
	"encoding/binary"
	"errors"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/script"
)

// ruleDecode is the rule of a datagram the codec rejects without a more
// specific rule (udp-lobby.md §3.4), and of a Decode given no session.
const ruleDecode = "U-DECODE"

// Decode reads datagram b received on channel ("lobby", "instance"; ""
// accepts both) as the built-in client reads a reply: udpwire.Decoder with
// the session's profile, expecting server → client. A datagram that
// breaks a rule has its Violation and, when its header could be read, its
// name and header fields, and its payload fields when the payload has its
// type's layout and is not compressed (a room with state 9, a bad CRC). An auto session settles
// its profile on the first datagram framed under one.
func (catalog) Decode(sess any, channel string, b []byte) script.Decoded {
	s, err := sessionOf(sess)
	if err != nil {
		return script.Decoded{Violations: []script.Violation{{Rule: ruleDecode, Detail: err.Error()}}}
	}
	ch, ok := channels[channel]
	if !ok {
		return script.Decoded{Violations: []script.Violation{{Rule: ruleDecode, Detail: "udpscript: no channel " + channel + " (want lobby or instance)"}}}
	}
	s.settle(b)
	var m udpwire.Message
	err = udpwire.Decoder{Profile: s.profile, Dir: udpwire.ServerToClient, Channel: ch}.Decode(b, &m)
	if err == nil {
		d := decoded(s.profile, m.Header, b, script.FieldsMap())
		s.judgeReply(&d, m.Header)
		return d
	}
	v := script.Violation{Rule: string(udpwire.RuleOf(err)), Detail: err.Error()}
	if v.Rule == "" {
		v.Rule = ruleDecode
	}
	d := script.Decoded{}
	var e *udpwire.Error
	if errors.As(err, &e) && e.HaveHeader && e.Header.Type.Known() {
		d = decoded(s.profile, e.Header, b, script.FieldsMap())
		d.Route = nil
	}
	d.Violations = []script.Violation{v}
	return d
}

var channels = map[string]udpwire.Channel{
	"":              udpwire.ChannelAny,
	ChannelLobby:    udpwire.ChannelLobby,
	ChannelInstance: udpwire.ChannelInstance,
}

// decoded is the message of header h in datagram b: its name, header
// fields, and payload fields when the payload has its type's layout, in
// fields, an empty map (script.FieldsMap).
func decoded(p udpwire.Profile, h udpwire.Header, b []byte, fields map[string]any) script.Decoded {
	fields[fSeq] = uint64(h.Seq)
	d := script.Decoded{Name: h.Type.String(), Fields: fields}
	if p == udpwire.ProfileRType17 {
		d.Fields[fTick] = uint64(h.TickID)
	}
	hl := p.HeaderLen()
	if h.Compressed || len(b) != p.PacketLen(int(h.PayloadSize)) {
		return d
	}
	if !readPayload(d.Fields, payloadFields[h.Type], b[hl:len(b)-udpwire.CRCLen]) {
		return d
	}
	if h.Type == udpwire.LobbyRoomCreated || h.Type == udpwire.LobbyJoinSuccess {
		d.Route = &script.Route{Channel: ChannelInstance, Port: uint16(d.Fields[fPort].(uint64))}
	}
	return d
}

// readPayload reads payload pl by fields, in wire order, into out; it
// reads nothing and returns false unless pl is exactly their size
// (payloadFits).
func readPayload(out map[string]any, fields []script.Field, pl []byte) bool {
	if !payloadFits(fields, pl) {
		return false
	}
	var last uint64
	for _, f := range fields {
		if f.Kind == script.List {
			n := int(last) * recordLen(f.Elem)
			if last == 0 {
				out[f.Name] = emptyList // boxed once: a list of no rooms costs no allocation
			} else {
				out[f.Name] = readList(f.Elem, int(last), pl[:n])
			}
			pl = pl[n:]
			continue
		}
		last = readUint(pl[:f.Bits/8])
		out[f.Name] = last
		pl = pl[f.Bits/8:]
	}
	return true
}

// emptyList is the value of a List field of no entries, shared: nothing
// changes a list read.
var emptyList any = []map[string]any{}

// payloadFits reports whether pl is exactly the size of fields, a List's
// entries numbering the value of the field before it (roomCount).
func payloadFits(fields []script.Field, pl []byte) bool {
	var last uint64
	for _, f := range fields {
		if f.Kind == script.List {
			n := int(last) * recordLen(f.Elem)
			if len(pl) < n {
				return false
			}
			pl = pl[n:]
			continue
		}
		if len(pl) < f.Bits/8 {
			return false
		}
		last = readUint(pl[:f.Bits/8])
		pl = pl[f.Bits/8:]
	}
	return len(pl) == 0
}

func recordLen(fields []script.Field) int {
	n := 0
	for _, f := range fields {
		n += f.Bits / 8
	}
	return n
}

// readList reads n records of fields from b, which holds exactly them.
func readList(fields []script.Field, n int, b []byte) []map[string]any {
	l := make([]map[string]any, n)
	for i := range l {
		l[i] = map[string]any{}
		for _, f := range fields {
			l[i][f.Name] = readUint(b[:f.Bits/8])
			b = b[f.Bits/8:]
		}
	}
	return l
}

// readUint reads a big-endian integer of 1, 2, 4 or 8 bytes.
func readUint(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}
