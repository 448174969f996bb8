package levcases

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// The Leviathan group (leviathan.md §1 framing, leviathan.md §2-4 behaviour): cases
// leviathan/<section>/<n>. Sections: 1 framing and sizes, 2 handshake, 3 lobby
// (join flow, ResponseTo), 4 reliability (acks, resends, duplicates),
// 6 malformed packets, Q the engine's known quirks (warnings).

// ProtoLeviathan is the --protocol name of the Leviathan group.
const ProtoLeviathan = string(lv.ProtocolName)

const (
	secLevFraming   = "leviathan.md §1 Packets"
	secLevHandshake = "leviathan.md §2 Handshake"
	secLevLobby     = "leviathan.md §3 Lobby"
	secLevAcks      = "leviathan.md §4 Acks and reliability"
	secLevMalformed = "leviathan.md §6 Malformed input"
	secLevQuirks    = "leviathan.md §Q Engine defects"
)

// Group is the protocol's group of the suite: the conformance half
// of its descriptor (package protocols), which registers it.
func Group() conformance.Group {
	return conformance.Group{Name: ProtoLeviathan, Transport: "udp", Reach: reachLeviathan,
		Cases: cases, Plausible: plausible, ScriptTransport: scriptTransport,
	}
}

// plausible reports whether b decodes as a Leviathan packet, leniently:
// a faulty one is still the target's to be judged (Group.Plausible).
func plausible(b []byte) bool {
	var p lv.Packet
	return lv.Decode(&p, b, lv.Lenient) == nil
}

// levClient is a conformance session: the shared connection engine over a
// socket bound to a paced source address, every datagram in the case's
// wire log, every received message kept.
type levClient struct {
	t     *conformance.T
	d     *levconn.Driver
	local string
	peer  string

	mu    sync.Mutex
	raw   [][]byte     // every datagram received, in order
	sent  [][]byte     // every datagram sent, in order
	msgs  []lv.Message // every new message received (payloads copied)
	dups  int          // duplicate deliveries
	sentT []time.Time  // send time of each sent datagram
	rawT  []time.Time  // receive time of each received datagram
	// reqs are the requests this client sent, by the MessageNumber each
	// actually got (answering the server's own Connect takes a number).
	reqs map[uint32]lv.RequestType
}

// describeLev summarises a datagram for the wire log.
func describeLev(b []byte) string {
	var p lv.Packet
	err := lv.Decode(&p, b, lv.Lenient)
	var sb strings.Builder
	switch p.Type {
	case lv.TypeAckOnly:
		fmt.Fprintf(&sb, "La acks %v", p.AckIDs)
	case lv.TypeNormal:
		fmt.Fprintf(&sb, "Ln #%d", p.ID)
		if p.StartAck != 0 {
			fmt.Fprintf(&sb, " acks %v", p.AckedIDs(nil, lv.AckEngine))
		}
		for _, m := range p.Messages {
			sb.WriteString(" [" + m.String() + "]")
		}
	default:
		sb.WriteString("?")
	}
	if err != nil {
		sb.WriteString(" (" + err.Error() + ")")
	}
	return sb.String()
}

// levDial opens a conformance session with engine config cfg (zero: the
// engine's defaults).
func levDial(t *conformance.T, cfg levconn.Config) (*levClient, error) {
	src, err := t.Env.Sources.Acquire(t.Ctx)
	if err != nil {
		return nil, err
	}
	c := &levClient{t: t, peer: t.Env.Addr.String(), reqs: map[uint32]lv.RequestType{}}
	d, err := levconn.Dial(t.Env.Addr, levconn.DriverOptions{
		Config: cfg,
		Local:  src,
		OnSend: func(b []byte) {
			cp := append([]byte(nil), b...)
			c.mu.Lock()
			c.sent = append(c.sent, cp)
			c.sentT = append(c.sentT, time.Now())
			c.mu.Unlock()
			t.LogSent(c.local, c.peer, cp, describeLev(cp))
		},
		OnRecv: func(b []byte) {
			cp := append([]byte(nil), b...)
			c.mu.Lock()
			c.raw = append(c.raw, cp)
			c.rawT = append(c.rawT, time.Now())
			c.mu.Unlock()
			t.LogRecv(c.local, c.peer, cp, describeLev(cp))
		},
	})
	if err != nil {
		return nil, fmt.Errorf("bind %v: %w", src, err)
	}
	c.d = d
	c.local = d.LocalAddr().String()
	return c, nil
}

func (c *levClient) Close() { c.d.Close() }

// pump runs the connection until within passes, keeping what arrives.
func (c *levClient) pump(within time.Duration) error {
	_, err := c.await(func(*lv.Message) bool { return false }, within)
	if errors.Is(err, conformance.ErrSilence) {
		return nil
	}
	return err
}

// await runs the connection until a new message satisfying match arrives
// (returned, payload copied), within the given time (a conformance.Wait:
// the harness's stalls extend it, and what is queued is read before it
// gives up); ErrSilence otherwise, or a *conformance.StallError when it
// cannot tell. The server's own Connect request is answered, as the
// engine's client does.
func (c *levClient) await(match func(*lv.Message) bool, within time.Duration) (*lv.Message, error) {
	w := c.t.NewWait(within)
	c.mu.Lock()
	first := len(c.msgs)
	c.mu.Unlock()
	for {
		e, err := c.d.Next(c.t.Ctx, w.Deadline())
		if err != nil {
			switch {
			case errors.Is(err, levconn.ErrTimeout) && !w.TimedOut():
				continue
			case errors.Is(err, levconn.ErrTimeout):
				// Say what came instead, if anything: never "no reply"
				// when the server sent something.
				c.mu.Lock()
				var names []string
				var raw [][]byte
				for _, m := range c.msgs[min(first, len(c.msgs)):] {
					names, raw = append(names, m.String()), append(raw, m.Payload)
				}
				c.mu.Unlock()
				return nil, w.Err(conformance.Instead("matching message", names, raw))
			case levconn.IsRefused(err):
				return nil, fmt.Errorf("%w: port closed (ICMP unreachable)", conformance.ErrUnreachable)
			}
			return nil, err
		}
		switch e.Kind {
		case levconn.EventDuplicate:
			c.mu.Lock()
			c.dups++
			c.mu.Unlock()
		case levconn.EventMessage:
			m := e.Msg
			m.Payload = append([]byte(nil), m.Payload...)
			c.mu.Lock()
			c.msgs = append(c.msgs, m)
			c.mu.Unlock()
			if m.Kind == lv.KindRequest && m.RequestType() == lv.ReqConnect {
				c.d.SendResponse(levconn.Critical, lv.ResConnect, m.Number, lv.Connect{CheckValue: lv.CheckValue}.Append(nil))
			}
			if match(&m) {
				return &m, nil
			}
		}
	}
}

// request sends a Critical request and waits Env.Timeout for a response
// answering it (ResponseTo its number) or, when anyType is set, any
// response of one of the types in want.
func (c *levClient) request(t lv.RequestType, payload []byte, want ...lv.ResponseType) (uint32, *lv.Message, error) {
	num, err := c.send(t, payload)
	if err != nil {
		return 0, nil, err
	}
	m, err := c.await(func(m *lv.Message) bool {
		if m.Kind != lv.KindResponse {
			return false
		}
		if m.ResponseTo == num {
			return true
		}
		for _, w := range want {
			if m.ResponseType() == w {
				return true
			}
		}
		return false
	}, c.t.Env.Timeout)
	return num, m, err
}

// send sends a Critical request and records the number it got.
func (c *levClient) send(t lv.RequestType, payload []byte) (uint32, error) {
	num, err := c.d.SendRequest(levconn.Critical, t, payload)
	if err == nil {
		c.mu.Lock()
		c.reqs[num] = t
		c.mu.Unlock()
	}
	return num, err
}

// expectReply checks m answers request num with type want.
func expectReply(what string, num uint32, m *lv.Message, err error, want lv.ResponseType) error {
	if errors.Is(err, conformance.ErrSilence) {
		var s *conformance.Silence
		if errors.As(err, &s) {
			s.Want = fmt.Sprintf("Response %v to #%d", want, num)
		}
		return conformance.Owned(ProtoLeviathan, what, conformance.Failf(fmt.Sprintf("Response %v to #%d", want, num), "%s", conformance.ReplyWords(err, "no reply to "+what)))
	}
	if err != nil {
		return err
	}
	if m.ResponseType() != want || m.ResponseTo != num {
		return conformance.Owned(ProtoLeviathan, what, conformance.Failf(fmt.Sprintf("Response %v to #%d", want, num), "%v", m))
	}
	return nil
}

// handshake runs Connect, Security, Authenticate, failing with the first
// broken stage.
func (c *levClient) handshake() error {
	n, m, err := c.request(lv.ReqConnect, lv.Connect{CheckValue: lv.CheckValue}.Append(nil), lv.ResConnect)
	if err := expectReply("Connect(42)", n, m, err, lv.ResConnect); err != nil {
		return err
	}
	n, m, err = c.request(lv.ReqSecurity, lv.SecurityRequest{SecureType: lv.SecureTypeNone}.Append(nil), lv.ResSecurity)
	if err := expectReply("Security(None)", n, m, err, lv.ResSecurity); err != nil {
		return err
	}
	n, m, err = c.request(lv.ReqAuthenticate, lv.AuthenticateRequest{UserName: []byte("conform")}.Append(nil), lv.ResAuthenticate)
	return expectReply("Authenticate", n, m, err, lv.ResAuthenticate)
}

// levAuthed opens a session and completes the handshake; a failed handshake
// is a precondition (leviathan/2/… own it).
func levAuthed(t *conformance.T) (*levClient, error) {
	c, err := levDial(t, levconn.Config{})
	if err != nil {
		return nil, err
	}
	if err := c.handshake(); err != nil {
		c.Close()
		return nil, conformance.Precondition("handshake", err)
	}
	return c, nil
}

// levFlow is the shared full session of the group: handshake, JoinServer,
// JoinGame, Echo, Serverstatus and a quiet second for the acks, with the
// request numbers and everything received.
type levFlow struct {
	num map[lv.RequestType]uint32
	// reqs: every request of the session (handshake included) by the
	// number it was actually sent with.
	reqs map[uint32]lv.RequestType
	raw  [][]byte
	sent [][]byte
	msgs []lv.Message
	errs map[lv.RequestType]error
}

func levFlowFixture(t *conformance.T) (*levFlow, error) {
	v, err := t.Fixture("lev-flow", func(ft *conformance.T) (any, error) {
		c, err := levDial(ft, levconn.Config{})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		if err := c.handshake(); err != nil {
			return nil, err
		}
		f := &levFlow{num: map[lv.RequestType]uint32{}, errs: map[lv.RequestType]error{}}
		steps := []struct {
			t  lv.RequestType
			p  []byte
			rt lv.ResponseType
		}{
			{lv.ReqJoinServer, lv.JoinServer{MasterServerToken: lv.ClientMasterServerToken}.Append(nil), lv.ResServerAllow},
			{lv.ReqJoinGame, lv.JoinGame{}.Append(nil), lv.ResServerAllow},
			{lv.ReqEcho, nil, lv.ResNone},
			{lv.ReqServerstatus, nil, lv.ResServerStatus},
		}
		for _, st := range steps {
			n, _, err := c.request(st.t, st.p, st.rt)
			f.num[st.t] = n
			f.errs[st.t] = err
		}
		if err := c.pump(time.Second); err != nil {
			return nil, err
		}
		c.d.SendResponse(levconn.Critical, lv.ResCloseConnection, 0, nil)
		c.pump(300 * time.Millisecond)
		c.mu.Lock()
		f.raw, f.sent, f.msgs, f.reqs = c.raw, c.sent, c.msgs, c.reqs
		c.mu.Unlock()
		return f, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*levFlow), nil
}

// reply returns the first message of f answering request type rt (by
// ResponseTo), or of type alt with any ResponseTo.
func (f *levFlow) reply(rt lv.RequestType, types ...lv.ResponseType) (*lv.Message, bool) {
	num := f.num[rt]
	for i := range f.msgs {
		m := &f.msgs[i]
		if m.Kind != lv.KindResponse {
			continue
		}
		for _, ty := range types {
			if m.ResponseType() == ty && (m.ResponseTo == num || ty == lv.ResNone || ty == lv.ResStartWorldReceive) {
				return m, true
			}
		}
	}
	return nil, false
}

// missing says that rt's request drew none of the responses a case
// wanted (want, in words), and names what answered it instead: never "no
// reply" when something replied.
func (f *levFlow) missing(rt lv.RequestType, want string) string {
	var got []string
	for i := range f.msgs {
		if m := &f.msgs[i]; m.Kind == lv.KindResponse && m.ResponseTo == f.num[rt] {
			got = append(got, fmt.Sprintf("%v (payload % x)", m, m.Payload))
		}
	}
	if len(got) == 0 {
		return fmt.Sprintf("no %s answering %v: nothing answered it (no response naming #%d)", want, rt, f.num[rt])
	}
	return fmt.Sprintf("no %s answering %v; it was answered by %s", want, rt, strings.Join(got, ", "))
}

// reachLeviathan sends Connect(42) and waits for a datagram back that
// decodes as Leviathan; one that does not is named (conformance.Garbled),
// not taken for the endpoint's answer.
func reachLeviathan(ctx context.Context, env *conformance.Env) (string, error) {
	var garbled []byte
	for attempt := 0; attempt < 2; attempt++ {
		src, err := env.Sources.Acquire(ctx)
		if err != nil {
			return "", err
		}
		conn, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)), net.UDPAddrFromAddrPort(env.Addr))
		if err != nil {
			return "", err
		}
		b := lv.AppendNormalHeader(nil, lv.FirstPacketID, 0, nil, 1)
		b = lv.AppendRequestHeader(b, 1, lv.ReqConnect)
		b = lv.Connect{CheckValue: lv.CheckValue}.Append(b)
		conn.Write(b)
		conn.SetReadDeadline(time.Now().Add(env.Timeout))
		buf := make([]byte, 2048)
		n, err := conn.Read(buf)
		var p lv.Packet
		for err == nil && lv.Decode(&p, buf[:n], lv.Lenient) != nil {
			garbled = append(garbled[:0], buf[:n]...) // not Leviathan: read on
			n, err = conn.Read(buf)
		}
		// Tell the target we are gone, so the check holds nothing.
		if err == nil {
			if p.Type == lv.TypeNormal {
				bye := lv.AppendNormalHeader(nil, lv.FirstPacketID+1, p.ID, []byte{1}, 1)
				bye = lv.AppendResponseHeader(bye, 2, lv.ResCloseConnection, 0)
				conn.Write(bye)
			}
		}
		conn.Close()
		if err == nil {
			return fmt.Sprintf("answered Connect(42) with %s", describeLev(buf[:n])), nil
		}
		if levconn.IsRefused(err) {
			return "", fmt.Errorf("%w: %s: port closed (%w)", conformance.ErrUnreachable, env.Target, err)
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
	if garbled != nil {
		return "", conformance.Garbled(env.Target, "Connect(42)", garbled)
	}
	return "", fmt.Errorf("%w: %s did not answer Connect(42) within %v, twice", conformance.ErrUnreachable, env.Target, env.Timeout)
}
