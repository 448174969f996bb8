package levconn

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func newConn(t testing.TB, cfg Config) *Conn {
	t.Helper()
	c, err := New(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func decode(t testing.TB, b []byte) *levwire.Packet {
	t.Helper()
	var p levwire.Packet
	if err := levwire.Decode(&p, b, levwire.Strict); err != nil {
		t.Fatalf("own datagram % x does not decode strictly: %v", b, err)
	}
	return p.Clone()
}

// pollAll drains c's datagrams at now, decoded.
func pollAll(t testing.TB, c *Conn, now time.Time) []*levwire.Packet {
	t.Helper()
	var out []*levwire.Packet
	for b := c.Poll(now); b != nil; b = c.Poll(now) {
		out = append(out, decode(t, b))
		if len(out) > 1000 {
			t.Fatal("Poll never returns nil")
		}
	}
	return out
}

func raw(t testing.TB, p *levwire.Packet) []byte {
	t.Helper()
	b, err := levwire.AppendPacket(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func kinds(ev []Event) []EventKind {
	var k []EventKind
	for _, e := range ev {
		k = append(k, e.Kind)
	}
	return k
}

func connect() []byte { return levwire.Connect{CheckValue: levwire.CheckValue}.Append(nil) }

func TestIDsAndMessageNumbers(t *testing.T) {
	c := newConn(t, Config{})
	for i := 0; i < 3; i++ {
		if _, err := c.SendRequest(t0, Critical, levwire.ReqConnect, connect()); err != nil {
			t.Fatal(err)
		}
	}
	n, _ := c.SendResponse(t0, None, levwire.ResNone, 0, nil)
	if n != 4 {
		t.Fatalf("4th MessageNumber = %d, want 4 (shared by requests and responses)", n)
	}
	ps := pollAll(t, c, t0)
	if len(ps) != 4 {
		t.Fatalf("%d datagrams, want 4", len(ps))
	}
	for i, p := range ps {
		if p.Type != levwire.TypeNormal || p.ID != 1001+uint32(i) || p.StartAck != 0 || len(p.Messages) != 1 {
			t.Fatalf("datagram %d: %+v", i, p)
		}
		if p.Messages[0].Number != uint32(i+1) {
			t.Fatalf("datagram %d MessageNumber %d, want %d", i, p.Messages[0].Number, i+1)
		}
	}
	// A resend takes a new PKT_ID and keeps its MessageNumber.
	c.Tick(t0.Add(time.Second))
	ps = pollAll(t, c, t0.Add(time.Second))
	if len(ps) != 3 {
		t.Fatalf("%d resends, want 3 (the None message is not resent)", len(ps))
	}
	for i, p := range ps {
		if p.ID != 1005+uint32(i) || p.Messages[0].Number != uint32(i+1) {
			t.Fatalf("resend %d: id %d number %d", i, p.ID, p.Messages[0].Number)
		}
	}
	if st := c.Stats(); st.Resends != 3 || st.LnSent != 7 || st.MessagesSent != 4 {
		t.Fatalf("stats %+v", st)
	}
}

func TestPiggybackedAck(t *testing.T) {
	a, b := newConn(t, Config{}), newConn(t, Config{})
	a.SendRequest(t0, Critical, levwire.ReqConnect, connect())
	for _, dg := range [][]byte{a.Poll(t0)} {
		if err := b.Receive(t0, dg); err != nil {
			t.Fatal(err)
		}
	}
	ev := b.Events()
	if len(ev) != 1 || ev[0].Kind != EventMessage || ev[0].Msg.Number != 1 {
		t.Fatalf("events %v", kinds(ev))
	}
	b.SendResponse(t0, Critical, levwire.ResConnect, ev[0].Msg.Number, connect())
	p := decode(t, b.Poll(t0))
	if p.StartAck != 1001 || !bytes.Equal(p.Acks, []byte{1}) {
		t.Fatalf("reply acks StartAck %d % x, want 1001 01", p.StartAck, p.Acks)
	}
	if p.Messages[0].ResponseTo != 1 {
		t.Fatalf("ResponseTo %d", p.Messages[0].ResponseTo)
	}
	if b.Poll(t0.Add(time.Hour)) != nil {
		t.Fatal("acks sent twice")
	}
	// The piggybacked ack confirms a's request.
	a.Receive(t0.Add(ms(3)), raw(t, p))
	ev = a.Events()
	if len(ev) != 2 || ev[0].Kind != EventConfirmed || ev[0].Number != 1 || ev[0].ByResponse || ev[0].AckRTT != ms(3) {
		t.Fatalf("events %+v", ev)
	}
	if a.InFlight() != 0 {
		t.Fatalf("in flight %d after confirmation", a.InFlight())
	}
}

func TestAckOnlyAfterDelay(t *testing.T) {
	a, b := newConn(t, Config{}), newConn(t, Config{})
	for i := 0; i < 6; i++ {
		a.SendResponse(t0, None, levwire.ResNone, 0, nil)
	}
	at := t0.Add(ms(50))
	for _, p := range pollAll(t, a, t0) {
		b.Receive(at, raw(t, p))
	}
	if got := b.Deadline(); !got.Equal(at.Add(ms(200))) {
		t.Fatalf("deadline %v, want arrival+200ms", got.Sub(t0))
	}
	if p := b.Poll(at.Add(ms(199))); p != nil {
		t.Fatalf("ack-only sent early: % x", p)
	}
	ps := pollAll(t, b, at.Add(ms(200)))
	if len(ps) != 2 {
		t.Fatalf("%d La packets for 6 ids, want 2 (at most 4 ids each)", len(ps))
	}
	var ids []uint32
	for _, p := range ps {
		if p.Type != levwire.TypeAckOnly {
			t.Fatalf("not La: %+v", p)
		}
		ids = append(ids, p.AckIDs...)
	}
	if len(ids) != 6 || ids[0] != 1001 || ids[5] != 1006 {
		t.Fatalf("acked %v", ids)
	}
	if b.PendingAcks() != 0 {
		t.Fatal("acks left pending")
	}
}

func TestResendClasses(t *testing.T) {
	for _, tc := range []struct {
		rel  Reliability
		want int // transmissions
	}{
		{None, 1},
		{ResendOnce, 2},
		{Critical, 5},
	} {
		t.Run(tc.rel.String(), func(t *testing.T) {
			c := newConn(t, Config{})
			c.SendRequest(t0, tc.rel, levwire.ReqEcho, nil)
			now := t0
			var sent []*levwire.Packet
			var ev []Event
			for i := 0; i < 10; i++ {
				c.Tick(now)
				sent = append(sent, pollAll(t, c, now)...)
				ev = append(ev, c.Events()...)
				if c.Poll(now.Add(ms(999))) != nil {
					t.Fatal("resent before LostAfter")
				}
				now = now.Add(time.Second)
			}
			if len(sent) != tc.want {
				t.Fatalf("%d transmissions, want %d", len(sent), tc.want)
			}
			for i, p := range sent {
				if p.ID != 1001+uint32(i) || p.Messages[0].Number != 1 {
					t.Fatalf("transmission %d: id %d number %d", i, p.ID, p.Messages[0].Number)
				}
			}
			var resent, lost int
			for _, e := range ev {
				switch e.Kind {
				case EventResent:
					resent++
				case EventLost:
					lost++
					if e.Transmissions != tc.want {
						t.Fatalf("lost after %d transmissions", e.Transmissions)
					}
				}
			}
			wantLost := 0
			if tc.rel != None {
				wantLost = 1
			}
			if resent != tc.want-1 || lost != wantLost {
				t.Fatalf("resent %d lost %d", resent, lost)
			}
			if c.Closed() || c.InFlight() != 0 {
				t.Fatalf("closed %v in flight %d", c.Closed(), c.InFlight())
			}
		})
	}
}

func TestCloseOnCriticalLoss(t *testing.T) {
	c := newConn(t, Config{CloseOnCriticalLoss: true, CriticalTransmissions: 2})
	c.SendRequest(t0, Critical, levwire.ReqEcho, nil)
	for i := 0; i < 3; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		c.Tick(now)
		pollAll(t, c, now)
	}
	ev := c.Events()
	if !c.Closed() || ev[len(ev)-1].Kind != EventClosed || ev[len(ev)-1].Reason != CloseCriticalLost {
		t.Fatalf("closed %v events %v", c.Closed(), kinds(ev))
	}
}

func TestLostByNewerAck(t *testing.T) {
	for _, tc := range []struct {
		ackedID uint32
		resend  bool
	}{
		{1004, false},
		{1005, false}, // 4 above: not "more than 4"
		{1006, true},
		{1009, true},
	} {
		c := newConn(t, Config{})
		c.SendRequest(t0, Critical, levwire.ReqEcho, nil) // id 1001, never acked
		for i := 0; i < 8; i++ {
			c.SendResponse(t0, None, levwire.ResNone, 0, nil)
		}
		pollAll(t, c, t0)
		la, _ := levwire.AppendAckOnly(nil, []uint32{tc.ackedID})
		c.Receive(t0.Add(ms(10)), la)
		ps := pollAll(t, c, t0.Add(ms(10)))
		if got := len(ps) == 1 && ps[0].Messages[0].Number == 1; got != tc.resend {
			t.Errorf("ack of %d: resent %v, want %v", tc.ackedID, got, tc.resend)
		}
	}
}

func TestDuplicates(t *testing.T) {
	a, b := newConn(t, Config{}), newConn(t, Config{})
	a.SendRequest(t0, Critical, levwire.ReqEcho, nil)
	first := append([]byte(nil), a.Poll(t0)...)
	a.Tick(t0.Add(time.Second))
	resend := append([]byte(nil), a.Poll(t0.Add(time.Second))...)

	var got []EventKind
	for _, dg := range [][]byte{first, first, resend} { // network duplicate, then a resend
		if err := b.Receive(t0, dg); err != nil {
			t.Fatal(err)
		}
		got = append(got, kinds(b.Events())...)
	}
	want := []EventKind{EventMessage, EventDuplicate, EventDuplicate}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("events %v, want %v", got, want)
	}
	// Both PKT_IDs are acked, once each.
	p := decode(t, b.Poll(t0.Add(time.Hour)))
	if p.Type != levwire.TypeAckOnly || len(p.AckIDs) != 2 || p.AckIDs[0] != 1001 || p.AckIDs[1] != 1002 {
		t.Fatalf("acks %+v", p)
	}
	if st := b.Stats(); st.Delivered != 1 || st.Duplicates != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDuplicateWindow(t *testing.T) {
	b := newConn(t, Config{DuplicateWindow: 3})
	send := func(num uint32) EventKind {
		dg := levwire.AppendNormalHeader(nil, 2000+num, 0, nil, 1)
		dg = levwire.AppendRequestHeader(dg, num, levwire.ReqEcho)
		b.Receive(t0, dg)
		ev := b.Events()
		return ev[len(ev)-1].Kind
	}
	for _, n := range []uint32{1, 2, 3} {
		send(n)
	}
	if send(1) != EventDuplicate {
		t.Fatal("number 1 not remembered within the window")
	}
	send(4) // pushes 1 out of a window of 3
	if k := send(1); k != EventMessage {
		t.Fatalf("number 1 after the window: %v, want delivered again (the window is the bound)", k)
	}
}

// TestResponseToUnusedNumber: a response to a number the connection has
// not used yet (a resend from the peer's connection with the client that
// held this port before) is delivered but not remembered: the response
// with that MessageNumber that answers this connection's own request,
// later, is delivered too, not dropped as a copy.
func TestResponseToUnusedNumber(t *testing.T) {
	c := newConn(t, Config{})
	recv := func(id, num, responseTo uint32) Event {
		dg := levwire.AppendNormalHeader(nil, id, 0, nil, 1)
		dg = append(levwire.AppendResponseHeader(dg, num, levwire.ResConnect, responseTo), connect()...)
		if err := c.Receive(t0, dg); err != nil {
			t.Fatal(err)
		}
		ev := c.Events()
		return ev[len(ev)-1]
	}
	if e := recv(5000, 1, 1); e.Kind != EventMessage { // stale: #1 not sent yet
		t.Fatalf("a response to an unused number: %v, want delivered (the client judges it)", e.Kind)
	}
	num, err := c.SendRequest(t0, Critical, levwire.ReqEcho, nil)
	if err != nil || num != 1 {
		t.Fatalf("request #%d, %v", num, err)
	}
	if e := recv(1001, 1, num); e.Kind != EventMessage || e.Msg.ResponseTo != num {
		t.Fatalf("the answer to request #%d: %+v, want delivered", num, e)
	}
	if e := recv(1002, 1, num); e.Kind != EventDuplicate { // and it is remembered
		t.Fatalf("a copy of the answer: %v, want a duplicate", e.Kind)
	}
}

func TestAckReadings(t *testing.T) {
	E, S := levwire.AckEngine, levwire.AckSeedPlusOne
	for _, tc := range []struct {
		name       string
		ours, peer levwire.AckReading
		confirmed  bool
		diag       bool
	}{
		{"engine-engine", E, E, true, false},
		{"seed-seed", S, S, true, false},
		{"engine reads seed acks", E, S, false, true},
		{"seed reads engine acks", S, E, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newConn(t, Config{AckReading: tc.ours}), newConn(t, Config{AckReading: tc.peer})
			a.SendRequest(t0, Critical, levwire.ReqConnect, connect())
			b.Receive(t0, a.Poll(t0))
			b.Events()
			b.SendResponse(t0, None, levwire.ResNone, 0, nil) // ResponseTo 0: only the ack can confirm
			a.Receive(t0, b.Poll(t0))
			var confirmed, diag bool
			for _, e := range a.Events() {
				confirmed = confirmed || e.Kind == EventConfirmed
				diag = diag || e.Kind == EventAckReading
			}
			if confirmed != tc.confirmed || diag != tc.diag {
				t.Fatalf("confirmed %v diag %v, want %v %v (stats %+v)", confirmed, diag, tc.confirmed, tc.diag, a.Stats())
			}
			st := a.Stats()
			if tc.diag && st.AckFieldsFitOther != 1 {
				t.Fatalf("AckFieldsFitOther %d", st.AckFieldsFitOther)
			}
		})
	}
}

// TestAckBitLayout checks the exact ack bytes for a gap under both readings.
func TestAckBitLayout(t *testing.T) {
	for _, tc := range []struct {
		r     levwire.AckReading
		start uint32
		bits  []byte
	}{
		{levwire.AckEngine, 1001, []byte{0x05, 0x00, 0x01}},      // 1001, 1003, 1017
		{levwire.AckSeedPlusOne, 1000, []byte{0x05, 0x00, 0x01}}, // same ids, start one below
	} {
		b := newConn(t, Config{AckReading: tc.r})
		for _, id := range []uint32{1001, 1003, 1017} {
			dg := levwire.AppendNormalHeader(nil, id, 0, nil, 0)
			b.Receive(t0, dg)
		}
		b.SendResponse(t0, None, levwire.ResNone, 0, nil)
		p := decode(t, b.Poll(t0))
		if p.StartAck != tc.start || !bytes.Equal(p.Acks, tc.bits) {
			t.Errorf("%v: StartAck %d bits % x, want %d % x", tc.r, p.StartAck, p.Acks, tc.start, tc.bits)
		}
	}
}

func TestLostCarrierGivesAcksBack(t *testing.T) {
	b := newConn(t, Config{})
	b.Receive(t0, levwire.AppendNormalHeader(nil, 5000, 0, nil, 0))
	b.SendResponse(t0, None, levwire.ResNone, 0, nil)
	p := decode(t, b.Poll(t0)) // carries the ack of 5000; this packet is "lost"
	if p.StartAck != 5000 {
		t.Fatalf("StartAck %d", p.StartAck)
	}
	if b.Poll(t0.Add(ms(999))) != nil {
		t.Fatal("ack resent before the carrier counts as lost")
	}
	b.Tick(t0.Add(time.Second))
	p = decode(t, b.Poll(t0.Add(time.Second+ms(200))))
	if p.Type != levwire.TypeAckOnly || len(p.AckIDs) != 1 || p.AckIDs[0] != 5000 {
		t.Fatalf("after the carrier was lost: %+v", p)
	}
	// A carrier that is acked keeps its acks done.
	b.Receive(t0, levwire.AppendNormalHeader(nil, 5001, 0, nil, 0))
	b.SendResponse(t0, None, levwire.ResNone, 0, nil)
	p = decode(t, b.Poll(t0.Add(2*time.Second)))
	la, _ := levwire.AppendAckOnly(nil, []uint32{p.ID})
	b.Receive(t0.Add(2*time.Second), la)
	b.Tick(t0.Add(10 * time.Second))
	if dg := b.Poll(t0.Add(10 * time.Second)); dg != nil {
		t.Fatalf("confirmed acks resent: % x", dg)
	}
}

func TestKeepaliveAndIdle(t *testing.T) {
	c := newConn(t, Config{KeepaliveAfter: ms(120), IdleTimeout: ms(180)})
	if d := c.Deadline(); !d.Equal(t0.Add(ms(120))) {
		t.Fatalf("deadline %v", d.Sub(t0))
	}
	c.Tick(t0.Add(ms(120)))
	p := decode(t, c.Poll(t0.Add(ms(120))))
	if m := p.Messages[0]; m.Kind != levwire.KindResponse || m.ResponseType() != levwire.ResKeepalive {
		t.Fatalf("keepalive %v", m)
	}
	// An La packet is not life.
	la, _ := levwire.AppendAckOnly(nil, []uint32{p.ID})
	c.Receive(t0.Add(ms(150)), la)
	c.Tick(t0.Add(ms(180)))
	if !c.Closed() {
		t.Fatal("not closed after IdleTimeout")
	}
	if ev := c.Events(); ev[len(ev)-1].Kind != EventClosed || ev[len(ev)-1].Reason != CloseIdle {
		t.Fatalf("events %v", kinds(ev))
	}
	if _, err := c.SendRequest(t0, None, levwire.ReqEcho, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
	// Ln packets keep it open.
	c = newConn(t, Config{KeepaliveAfter: -1, IdleTimeout: ms(180)})
	c.Receive(t0.Add(ms(100)), levwire.AppendNormalHeader(nil, 9, 0, nil, 0))
	c.Tick(t0.Add(ms(200)))
	if c.Closed() {
		t.Fatal("closed although an Ln packet arrived 100ms ago")
	}
}

func TestBounds(t *testing.T) {
	c := newConn(t, Config{MaxInFlight: 2, MaxPendingAcks: 3, MaxMessage: 20})
	c.SendRequest(t0, Critical, levwire.ReqEcho, nil)
	c.SendRequest(t0, Critical, levwire.ReqEcho, nil)
	if _, err := c.SendRequest(t0, Critical, levwire.ReqEcho, nil); !errors.Is(err, ErrInFlightFull) {
		t.Fatalf("3rd send: %v", err)
	}
	if _, err := c.SendResponse(t0, None, levwire.ResNone, 0, make([]byte, 10)); !errors.Is(err, ErrMessageTooLarge) && !errors.Is(err, ErrInFlightFull) {
		t.Fatalf("big send: %v", err)
	}
	for id := uint32(1); id <= 10; id++ {
		c.Receive(t0, levwire.AppendNormalHeader(nil, id, 0, nil, 0))
	}
	if c.PendingAcks() != 3 || c.Stats().PendingAcksDropped != 7 {
		t.Fatalf("pending %d dropped %d", c.PendingAcks(), c.Stats().PendingAcksDropped)
	}
	c2 := newConn(t, Config{MaxMessage: 20})
	if _, err := c2.SendResponse(t0, None, levwire.ResNone, 0, make([]byte, 10)); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("big send: %v", err)
	}
}

func TestMalformedPrefixActedOn(t *testing.T) {
	c := newConn(t, Config{})
	dg := levwire.AppendNormalHeader(nil, 77, 0, nil, 2)
	dg = levwire.AppendRequestHeader(dg, 1, levwire.ReqEcho)
	dg = append(dg, byte(levwire.KindRequest), 0, 0) // truncated second message
	if err := c.Receive(t0, dg); err == nil {
		t.Fatal("no error for a truncated message")
	}
	if ev := c.Events(); len(ev) != 1 || ev[0].Kind != EventMessage {
		t.Fatalf("events %v", kinds(ev))
	}
	if c.PendingAcks() != 1 {
		t.Fatal("header-valid packet not acked")
	}
	for _, bad := range [][]byte{nil, {0x4c}, {0x12, 0x34, 0}, {0x4c, 0x61, 3, 0, 0}} {
		if err := c.Receive(t0, bad); err == nil {
			t.Errorf("% x accepted", bad)
		}
	}
	if c.Closed() || c.PendingAcks() != 1 {
		t.Fatal("malformed datagrams changed the connection")
	}
}

// TestLossyExchange runs request/response pairs through a link losing,
// duplicating and reordering datagrams: every request is acted on exactly
// once and every response arrives exactly once.
func TestLossyExchange(t *testing.T) {
	for _, loss := range []float64{0, 0.05, 0.2, 0.4} {
		cfg := Config{LostAfter: ms(100), AckDelay: ms(20), CriticalTransmissions: 16}
		a, b := newConn(t, cfg), newConn(t, cfg)
		rng := rand.New(rand.NewPCG(1, uint64(loss*100)))
		type dgram struct {
			at   time.Time
			to   *Conn
			data []byte
		}
		var inAir []dgram
		now := t0
		const n = 200
		handled := map[uint32]int{}
		answers := map[uint32]int{}
		sent := 0
		pump := func(from, to *Conn) {
			for dg := from.Poll(now); dg != nil; dg = from.Poll(now) {
				if rng.Float64() < loss {
					continue
				}
				copies := 1
				if rng.Float64() < 0.05 {
					copies = 2
				}
				for i := 0; i < copies; i++ {
					inAir = append(inAir, dgram{now.Add(ms(1 + rng.IntN(10))), to, append([]byte(nil), dg...)})
				}
			}
		}
		for step := 0; step < 20000 && (len(answers) < n || a.InFlight() > 0 || b.InFlight() > 0); step++ {
			if sent < n && step%3 == 0 {
				if _, err := a.SendRequest(now, Critical, levwire.ReqEcho, nil); err == nil {
					sent++
				}
			}
			rest := inAir[:0]
			for _, d := range inAir {
				if d.at.After(now) {
					rest = append(rest, d)
					continue
				}
				d.to.Receive(now, d.data)
				for _, e := range d.to.Events() {
					if e.Kind != EventMessage {
						continue
					}
					if d.to == b {
						handled[e.Msg.Number]++
						b.SendResponse(now, Critical, levwire.ResNone, e.Msg.Number, nil)
					} else {
						answers[e.Msg.ResponseTo]++
					}
				}
			}
			inAir = rest
			a.Tick(now)
			b.Tick(now)
			a.Events()
			b.Events()
			pump(a, b)
			pump(b, a)
			now = now.Add(ms(2))
		}
		if len(handled) != n || len(answers) != n {
			t.Fatalf("loss %.2f: %d requests handled, %d answered, want %d", loss, len(handled), len(answers), n)
		}
		for num, k := range handled {
			if k != 1 {
				t.Fatalf("loss %.2f: request %d acted on %d times", loss, num, k)
			}
		}
		for num, k := range answers {
			if k != 1 {
				t.Fatalf("loss %.2f: answer to %d delivered %d times", loss, num, k)
			}
		}
		t.Logf("loss %.2f: a %+v b %+v", loss, a.Stats(), b.Stats())
		if loss > 0 && a.Stats().Resends == 0 {
			t.Fatalf("loss %.2f without resends", loss)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	_, err := New(Config{CriticalTransmissions: 99, MaxInFlight: -1, AckDelay: -1}, t0)
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"CriticalTransmissions", "MaxInFlight", "AckDelay"} {
		if !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func FuzzReceive(f *testing.F) {
	f.Add(levwire.AppendNormalHeader(nil, 1001, 1001, []byte{1}, 0))
	la, _ := levwire.AppendAckOnly(nil, []uint32{1001, 1002})
	f.Add(la)
	f.Add([]byte{0x4c, 0x6e, 0, 0, 3, 0xe9, 0, 0, 3, 0xe9, 0xff, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := newConn(t, Config{MaxPendingAcks: 8, MaxEvents: 16})
		c.SendRequest(t0, Critical, levwire.ReqEcho, nil)
		c.Poll(t0)
		for i := 0; i < 3; i++ {
			c.Receive(t0, b)
			c.Tick(t0.Add(time.Duration(i) * time.Second))
			for dg := c.Poll(t0); dg != nil; dg = c.Poll(t0) {
				var p levwire.Packet
				if err := levwire.Decode(&p, dg, levwire.Strict); err != nil {
					t.Fatalf("own datagram invalid: %v", err)
				}
			}
		}
		if c.PendingAcks() > 8 || len(c.Events()) > 16 || c.InFlight() > 64 {
			t.Fatal("bounds exceeded")
		}
	})
}

// TestUnknownShapeDelivered: a message of a type the codec has no shape
// for is delivered with the rest of the datagram as its payload; a
// Serverstatus request (a known, empty shape) is delivered like any other,
// with the message after it.
func TestUnknownShapeDelivered(t *testing.T) {
	c := newConn(t, Config{})
	dg := levwire.AppendNormalHeader(nil, 5, 0, nil, 1)
	dg = levwire.AppendRequestHeader(dg, 3, levwire.ReqIdentification)
	dg = append(dg, 0xde, 0xad)
	if err := c.Receive(t0, dg); err != nil {
		t.Fatal(err)
	}
	ev := c.Events()
	if len(ev) != 1 || ev[0].Kind != EventMessage || ev[0].Msg.RequestType() != levwire.ReqIdentification || ev[0].Msg.Number != 3 ||
		string(ev[0].Msg.Payload) != "\xde\xad" {
		t.Fatalf("events %+v", ev)
	}

	dg = levwire.AppendNormalHeader(nil, 6, 0, nil, 2)
	dg = levwire.AppendRequestHeader(dg, 4, levwire.ReqServerstatus)
	dg = levwire.AppendRequest(dg, 5, levwire.Echo{})
	if err := c.Receive(t0, dg); err != nil {
		t.Fatal(err)
	}
	ev = c.Events()
	if len(ev) != 2 || ev[0].Msg.RequestType() != levwire.ReqServerstatus || ev[0].Msg.Number != 4 || len(ev[0].Msg.Payload) != 0 ||
		ev[1].Msg.RequestType() != levwire.ReqEcho || ev[1].Msg.Number != 5 {
		t.Fatalf("events %+v", ev)
	}
}

func TestParseAckReading(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want levwire.AckReading
		ok   bool
	}{
		{"engine", levwire.AckEngine, true},
		{"", levwire.AckEngine, true},
		{"seed+1", levwire.AckSeedPlusOne, true},
		{"seed", levwire.AckSeedPlusOne, true},
		{"+1", 0, false},
	} {
		got, err := ParseAckReading(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseAckReading(%q) = %v, %v", tc.in, got, err)
		}
	}
}
