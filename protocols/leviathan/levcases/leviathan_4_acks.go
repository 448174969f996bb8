package levcases

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// leviathan.md §4 acks and reliability.

// levAckDelay is the engine's wait before an ack-only packet: acks
// pending and nothing sent for 200 ms.
const levAckDelay = 200 * time.Millisecond

// levAckBound is how long the server may take to ack an Ln packet: the
// engine's ack delay plus one reply wait (--timeout), which covers the
// round trip and the server's update loop. A remote target's raised
// --timeout raises it with the rest, and so does a busy machine's: an ack
// late by the scheduler, not the server, is no failure of the server.
func levAckBound(env *conformance.Env) time.Duration { return levAckDelay + env.Timeout }

// levAcks is one session whose every datagram both ways is kept, to judge
// the server's acks.
type levAcks struct {
	sentIDs  map[uint32]time.Time // our Ln PKT_IDs and send times
	acked    map[uint32]time.Time // first ack seen per id (either reading)
	fields   [][2]int             // per server ack field: ids that fit under engine, under seed+1
	embedded int                  // datagrams with the engine's Ln-in-front-of-La defect
	lastSent time.Time
}

func levAcksFixture(t *conformance.T) (*levAcks, error) {
	v, err := t.Fixture("lev-acks", func(ft *conformance.T) (any, error) {
		c, err := levDial(ft, levconn.Config{})
		if err != nil {
			return nil, err
		}
		defer c.close()
		if err := c.handshake(); err != nil {
			return nil, err
		}
		for i := 0; i < 3; i++ {
			c.request(lv.ReqEcho, nil, lv.ResNone)
		}
		// A message that gets no reply: the server has nothing to carry
		// its ack, so it must send an ack-only packet.
		c.d.SendResponse(levconn.Critical, lv.ResKeepalive, 0, nil)
		if err := c.pump(levAckBound(ft.Env) + 500*time.Millisecond); err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		a := &levAcks{sentIDs: map[uint32]time.Time{}, acked: map[uint32]time.Time{}}
		for i, b := range c.sent {
			if len(b) >= 6 && lv.PacketType(binary.BigEndian.Uint16(b)) == lv.TypeNormal {
				a.sentIDs[binary.BigEndian.Uint32(b[2:])] = c.sentT[i]
				a.lastSent = c.sentT[i]
			}
		}
		var p lv.Packet
		for i, b := range c.raw {
			if lv.Decode(&p, b, lv.Lenient) != nil {
				continue
			}
			at := c.rawT[i]
			mark := func(id uint32) {
				if _, ok := a.sentIDs[id]; ok {
					if _, seen := a.acked[id]; !seen {
						a.acked[id] = at
					}
				}
			}
			if p.EmbeddedAckOnly() {
				a.embedded++
				var la lv.Packet
				if lv.Decode(&la, p.Trailing, lv.Lenient) == nil {
					for _, id := range la.AckIDs {
						mark(id)
					}
				}
			}
			if p.Type == lv.TypeAckOnly {
				for _, id := range p.AckIDs {
					mark(id)
				}
				continue
			}
			if p.StartAck == 0 {
				continue
			}
			var fit [2]int
			for r, reading := range []lv.AckReading{lv.AckEngine, lv.AckSeedPlusOne} {
				ok := true
				for _, id := range p.AckedIDs(nil, reading) {
					if _, sent := a.sentIDs[id]; !sent {
						ok = false
					}
					mark(id)
				}
				if ok {
					fit[r] = 1
				}
			}
			a.fields = append(a.fields, fit)
		}
		return a, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*levAcks), nil
}

// levWithheld is what the server sent to a client that never acks.
type levWithheld struct {
	transmissions int // datagrams carrying the reply to our Connect (same MessageNumber)
	numbers       map[uint32]bool
	first, last   time.Time
}

func init() {
	addCase(&conformance.Case{
		ID: "leviathan/4/1", Protocol: ProtoLeviathan, Section: secLevAcks, Level: conformance.Must,
		Desc:        fmt.Sprintf("every Ln packet the client sends is acked (piggybacked or in an La packet) within %v plus the reply wait (--timeout)", levAckDelay),
		Requirement: "Acks: every received Ln PKT_ID is acknowledged, piggybacked on outgoing Ln packets, or, when idle for 200 ms with acks pending, in an ack-only packet",
		Run:         runLev4_1,
	})
	addCase(&conformance.Case{
		ID: "leviathan/4/2", Protocol: ProtoLeviathan, Section: secLevAcks, Level: conformance.Should,
		Desc:        "the server's ack fields use the engine's bit order (bit b of byte i acks StartAck+8i+b, no +1)",
		Requirement: "Ack bits: bit b (least significant first) of ack byte i acknowledges packet StartAck + 8*i + b. The packet format page says StartAck + index + 1; the engine and its tests use no +1",
		Run:         runLev4_2,
	})
	addCase(&conformance.Case{
		ID: "leviathan/4/3", Protocol: ProtoLeviathan, Section: secLevAcks, Level: conformance.Must,
		Desc:        "a Critical reply (Response Connect) is resent, with a new PKT_ID and the same MessageNumber, when the client withholds its ack",
		Requirement: "Reliability classes: … Critical (the engine sends 5 transmissions …). A message counts as lost after 1000 ms without an ack … A resend keeps its MessageNumber and gets a new PKT_ID",
		Run:         runLev4_3,
	})
	addCase(&conformance.Case{
		ID: "leviathan/4/4", Protocol: ProtoLeviathan, Section: secLevAcks, Level: conformance.Should,
		Desc:        "an unacked Critical reply is transmitted 5 times in all, as the engine does",
		Requirement: "Critical (the engine sends 5 transmissions, then logs and keeps the connection)",
		Run:         runLev4_4,
	})
	addCase(&conformance.Case{
		ID: "leviathan/4/5", Protocol: ProtoLeviathan, Section: secLevAcks, Level: conformance.Must,
		Desc:        "a request received twice (network duplicate, then a resend with a new PKT_ID) is answered once",
		Requirement: "Duplicates: MessageNumbers are remembered (last 50); a duplicate is acked but not acted on, so a resent request never gets a second response",
		Run:         runLev4_5,
	})
}

func runLev4_1(t *conformance.T) error {
	a, err := levAcksFixture(t)
	if err != nil {
		return err
	}
	bound := levAckBound(t.Env)
	var worst time.Duration
	for id, sent := range a.sentIDs {
		at, ok := a.acked[id]
		if !ok {
			if time.Since(sent) < bound {
				continue
			}
			return conformance.Failf("every Ln PKT_ID acked", "PKT_ID %d (sent %v before the end) never acked", id, a.lastSent.Sub(sent)+bound)
		}
		d := at.Sub(sent)
		worst = max(worst, d)
		if d > bound {
			return conformance.Failf(fmt.Sprintf("acks within %v", bound), "PKT_ID %d acked after %v", id, d.Round(time.Millisecond))
		}
	}
	t.Notef("%d Ln packets acked, slowest after %v", len(a.sentIDs), worst.Round(time.Millisecond))
	return nil
}

func runLev4_2(t *conformance.T) error {
	a, err := levAcksFixture(t)
	if err != nil {
		return err
	}
	var both, engine, seed, neither int
	for _, f := range a.fields {
		switch {
		case f[0] == 1 && f[1] == 1:
			both++
		case f[0] == 1:
			engine++
		case f[1] == 1:
			seed++
		default:
			neither++
		}
	}
	t.Notef("%d ack fields: %d fit the engine reading only, %d the seed's +1 only, %d both, %d neither", len(a.fields), engine, seed, both, neither)
	switch {
	case len(a.fields) == 0:
		return conformance.Skipf("the server sent no Ln ack field (acks only in La packets)")
	case seed > 0 && engine == 0:
		return conformance.Warnf("the engine's bit order", "%d ack fields fit only the packet format page's +1 reading (leviathan.md §4): the server follows that page (its clients must read acks with the +1; the engine does not)", seed)
	case neither > 0:
		return conformance.Failf("ack fields naming ids the client sent", "%d ack fields ack ids the client never sent under either reading", neither)
	}
	return nil
}

func runLev4_3(t *conformance.T) error {
	w, err := levWithheldFixture(t)
	if err != nil {
		return err
	}
	if w.transmissions == 0 {
		return conformance.Failf("Response Connect", "no reply to Connect(42)")
	}
	if len(w.numbers) > 1 {
		return conformance.Failf("one MessageNumber for every transmission", "Connect answered under MessageNumbers %v", keys(w.numbers))
	}
	if w.transmissions < 2 {
		return conformance.Failf("the reply resent while unacked", "1 transmission in %v", levWithheldWindow(t.Env))
	}
	t.Notef("%d transmissions over %v", w.transmissions, w.last.Sub(w.first).Round(time.Millisecond))
	return nil
}

func runLev4_4(t *conformance.T) error {
	w, err := levWithheldFixture(t)
	if err != nil {
		return err
	}
	if w.transmissions < 2 {
		return conformance.Skipf("no resend at all (leviathan/4/3)")
	}
	if w.transmissions != 5 {
		return conformance.Warnf("5 transmissions", "%d transmissions in %v", w.transmissions, levWithheldWindow(t.Env))
	}
	return nil
}

func runLev4_5(t *conformance.T) error {
	s, err := t.OpenUDP()
	if err != nil {
		return err
	}
	defer s.Close()
	msg := lv.AppendRequestHeader(nil, 1, lv.ReqConnect)
	msg = lv.Connect{CheckValue: lv.CheckValue}.Append(msg)
	first := append(lv.AppendNormalHeader(nil, lv.FirstPacketID, 0, nil, 1), msg...)
	resend := append(lv.AppendNormalHeader(nil, lv.FirstPacketID+1, 0, nil, 1), msg...)
	for i, b := range [][]byte{first, first, resend} {
		if err := s.Send(t.Env.Addr, b, []string{"Connect #1", "the same datagram again", "resend: new PKT_ID, same MessageNumber"}[i]); err != nil {
			return err
		}
	}
	numbers := map[uint32]bool{}
	ackIDs := []uint32{}
	var p lv.Packet
	deadline := time.Now().Add(2 * t.Env.Timeout)
	for time.Now().Before(deadline) {
		b, err := s.Recv(t.Env.Addr, time.Until(deadline))
		if errors.Is(err, conformance.ErrSilence) {
			break
		}
		if err != nil {
			return err
		}
		if lv.Decode(&p, b, lv.Lenient) != nil || p.Type != lv.TypeNormal {
			continue
		}
		ackIDs = append(ackIDs, p.ID)
		for _, m := range p.Messages {
			if m.Kind == lv.KindResponse && m.ResponseType() == lv.ResConnect && m.ResponseTo == 1 {
				numbers[m.Number] = true
			}
		}
	}
	bye, _ := lv.AppendAckOnly(nil, ackIDs[:min(len(ackIDs), 4)])
	s.Send(t.Env.Addr, bye, "ack what arrived")
	bye = append(lv.AppendNormalHeader(nil, lv.FirstPacketID+2, 0, nil, 1), lv.AppendResponseHeader(nil, 2, lv.ResCloseConnection, 0)...)
	s.Send(t.Env.Addr, bye, "CloseConnection")
	switch len(numbers) {
	case 0:
		return conformance.Skipf("Connect(42) not answered (leviathan/2/1)")
	case 1:
		return nil
	}
	return conformance.Failf("one Response Connect", "%d distinct Response Connect messages (MessageNumbers %v) answered Connect #1", len(numbers), keys(numbers))
}

// levMaxWithheldTx: after that many transmissions the client sends
// nothing more.
const levMaxWithheldTx = 8

// levWithheldWindow covers the engine's 5 transmissions 1 s apart (the
// last 4 s after the first), the first reply's round trip and the slack of
// a busy machine: twice the reply wait (--timeout) and half a second more;
// 6.5 s by default.
func levWithheldWindow(env *conformance.Env) time.Duration {
	return 4*time.Second + 2*env.Timeout + 500*time.Millisecond
}

func levWithheldFixture(t *conformance.T) (*levWithheld, error) {
	v, err := t.Fixture("lev-withheld", func(ft *conformance.T) (any, error) {
		s, err := ft.OpenUDP()
		if err != nil {
			return nil, err
		}
		defer s.Close()
		b := lv.AppendNormalHeader(nil, lv.FirstPacketID, 0, nil, 1)
		b = lv.AppendRequestHeader(b, 1, lv.ReqConnect)
		b = lv.Connect{CheckValue: lv.CheckValue}.Append(b)
		if err := s.Send(ft.Env.Addr, b, "Connect #1; no ack will follow"); err != nil {
			return nil, err
		}
		w := &levWithheld{numbers: map[uint32]bool{}}
		var p lv.Packet
		// After each transmission the client sends two Ln packets with no
		// message and no ack (MessageCount 0: nothing to answer, even for
		// a server that answers duplicates), so that a server bounding
		// what it sends an address that has acked nothing (leviathan.md
		// §4: 3× what it received) can still make every transmission it
		// means to.
		next := lv.FirstPacketID + 1
		deadline := time.Now().Add(levWithheldWindow(ft.Env))
		for time.Now().Before(deadline) {
			r, err := s.Recv(ft.Env.Addr, time.Until(deadline))
			if errors.Is(err, conformance.ErrSilence) {
				break
			}
			if err != nil {
				return nil, err
			}
			if lv.Decode(&p, r, lv.Lenient) != nil || p.EmbeddedAckOnly() {
				continue // a stale Ln in front of an La section is no transmission (leviathan/Q/1)
			}
			for _, m := range p.Messages {
				if m.Kind == lv.KindResponse && m.ResponseType() == lv.ResConnect && m.ResponseTo == 1 {
					if w.transmissions == 0 {
						w.first = time.Now()
					}
					w.transmissions++
					w.last = time.Now()
					w.numbers[m.Number] = true
					for range 2 {
						if w.transmissions > levMaxWithheldTx {
							break
						}
						if err := s.Send(ft.Env.Addr, lv.AppendNormalHeader(nil, next, 0, nil, 0), "no message, no ack"); err != nil {
							return nil, err
						}
						next++
					}
				}
			}
		}
		bye := append(lv.AppendNormalHeader(nil, next, 0, nil, 1), lv.AppendResponseHeader(nil, 2, lv.ResCloseConnection, 0)...)
		s.Send(ft.Env.Addr, bye, "CloseConnection")
		return w, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*levWithheld), nil
}

func keys(m map[uint32]bool) []uint32 {
	var out []uint32
	for k := range m {
		out = append(out, k)
	}
	return out
}
