package tcpscript

import (
	"bytes"
	"fmt"
	"net/netip"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/script"
)

// Catalog is tcp-lobby's catalog of messages for scripts.
var Catalog script.Catalog = catalog{}

type catalog struct{}

// session is what one client keeps: the decoder of its replies.
type session struct {
	dec *tcpwire.Decoder
}

// Frame returns payload with its u32 little-endian length prefix, as
// tcpwire.FrameWriter writes it, for the transport that sends what Encode
// made.
func Frame(payload []byte) []byte {
	var b bytes.Buffer
	_ = tcpwire.NewFrameWriter(&b).WritePayload(payload) // a bytes.Buffer does not fail
	return b.Bytes()
}

// Messages implements script.Catalog: the 18 types in type-id order.
func (catalog) Messages() []script.Message {
	out := make([]script.Message, 0, len(tcpwire.Types))
	for _, t := range tcpwire.Types {
		out = append(out, script.Message{
			Name:        t.String(),
			FromClient:  codecs[t].fromClient,
			CreatesRoom: t == tcpwire.TypeCreateRoomReq,
			Fields:      codecs[t].fields,
		})
	}
	return out
}

// NewSession implements script.Catalog. options may be a tcpwire.Options
// (a pedantic decode); anything else decodes strictly.
func (catalog) NewSession(options any) any {
	o, _ := options.(tcpwire.Options)
	return &session{dec: tcpwire.NewDecoder(o)}
}

// Encode implements script.Catalog: the payload of the message named name.
func (catalog) Encode(_ any, name string, fields map[string]any) ([]byte, error) {
	t, ok := tcpwire.TypeNamed(name)
	if !ok {
		return nil, fmt.Errorf("tcp-lobby has no message %q", name)
	}
	c := codecs[t]
	if err := checkNames(name, c.fields, fields); err != nil {
		return nil, err
	}
	m := tcpwire.New(t)
	r := &in{f: fields}
	fix := c.put(m, r)
	if r.err != nil {
		return nil, fmt.Errorf("%s: %w", name, r.err)
	}
	p := tcpwire.Marshal(m)
	if fix != nil {
		fix(p)
	}
	return p, nil
}

// SessionOn returns a session that decodes with dec, a client's own
// decoder (simclient.ScriptSessioner): the client and its scripts then
// keep one decoded message of each type between them. dec must decode as
// NewSession's options would (the scenario's are nil: strict).
func SessionOn(dec *tcpwire.Decoder) any { return &session{dec: dec} }

// Decode implements script.Catalog: p is one frame's payload. The
// channel is not read: tcp-lobby has one.
func (catalog) Decode(sess any, _ string, p []byte) script.Decoded {
	s, ok := sess.(*session)
	if !ok || s == nil {
		s = &session{dec: tcpwire.NewDecoder(tcpwire.Options{})}
	}
	var d script.Decoded
	if len(p) > 0 && tcpwire.Type(p[0]).Known() {
		d.Name = tcpwire.Type(p[0]).String()
	}
	m, err := s.dec.Decode(p)
	if err != nil {
		d.Violations = []script.Violation{{Rule: tcpwire.RuleOf(err), Detail: err.Error()}}
		sm, note, ok := tcpwire.Salvage(p)
		if !ok {
			return d
		}
		m = sm
		d.Violations[0].Detail += "; " + note
	}
	d.Fields = codecs[m.Type()].get(m)
	d.Route = route(m)
	return d
}

// route is where GAME_START sends the client: the instance its ServerIP
// and UDPPort name, 0.0.0.0 meaning the target's host; nil for another
// message, or an address that names nowhere (port 0, no IP address).
func route(m tcpwire.Message) *script.Route {
	gs, ok := m.(*tcpwire.GameStart)
	if !ok || gs.UDPPort == 0 {
		return nil
	}
	ip, err := netip.ParseAddr(gs.ServerIP.String())
	if err != nil {
		return nil
	}
	r := &script.Route{Channel: "instance", Port: gs.UDPPort}
	if !ip.IsUnspecified() {
		r.Addr = netip.AddrPortFrom(ip, gs.UDPPort)
	}
	return r
}

// checkNames refuses a field the message does not have.
func checkNames(msg string, want []script.Field, got map[string]any) error {
	for k := range got {
		if fieldOf(want, k) == nil {
			return fmt.Errorf("%s has no field %q", msg, k)
		}
	}
	return nil
}

func fieldOf(fs []script.Field, name string) *script.Field {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}
