package udpclient

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/simclient"
)

// lowerSeqSpace makes the rate probes of the test cycle through n
// sequence ids, as they do through 65,536: a probe of a few dozen
// requests then reuses its ids, as one of a million does.
func lowerSeqSpace(t *testing.T, n int) {
	old := seqSpace
	seqSpace = n
	t.Cleanup(func() { seqSpace = old })
}

// TestProbeIDsWrap: the matcher of a probe's requests at the header's
// 16 bits, its first id near the end of them: request 65,536 takes the
// first's id once that was answered, and a reply to it is the new one's;
// the request that would take an id still in flight finds it held; a
// reply to an id whose request was lost, before the id's next request
// is sent, is late, and the next one, sent after, is still awaited.
func TestProbeIDsWrap(t *testing.T) {
	const first = 0xFFF0
	p := newProbeIDs(first)
	base := time.Unix(1000, 0)
	at := func(k uint32) time.Time { return base.Add(time.Duration(k) * time.Microsecond) }
	// reply settles the flight a reply echoing seq finds, as burstHandle
	// does, and returns it (nil: none).
	reply := func(seq uint16) *flight {
		f := p.lookup(seq)
		if f != nil && f.outcome == pendingOutcome {
			f.outcome = answeredOutcome
			p.ended[seq] = answeredOutcome
		}
		return f
	}
	for k := range uint32(1 << 16) {
		if _, held := p.holder(); held {
			t.Fatalf("request %d: its id held, with %d sent", k, k)
		}
		p.add(flight{intended: at(k), sent: at(k), kind: -1})
		if k != 5 {
			if f := reply(p.seq(k)); f == nil || !f.intended.Equal(at(k)) {
				t.Fatalf("the reply to request %d (id %d) found %+v", k, p.seq(k), f)
			}
		}
	}
	if f := p.lookup(first + 7); f == nil || f.outcome != answeredOutcome {
		t.Fatalf("a second reply to request 7 found %+v, want it answered (a copy)", f)
	}
	for k := uint32(1 << 16); k < 1<<16+5; k++ {
		if p.seq(k) != uint16(first+k) {
			t.Fatalf("request %d takes id %d, want %d", k, p.seq(k), uint16(first+k))
		}
		p.add(flight{intended: at(k), sent: at(k), kind: -1})
	}
	if f := reply(first); f == nil || !f.intended.Equal(at(1<<16)) {
		t.Fatalf("the reply to id %d found %+v, want request 65536 (intended %v)", first, f, at(1<<16))
	}
	if held, ok := p.holder(); !ok || held.ID != 5 {
		t.Fatalf("request %d's id %d: held by %+v (%v), want request 5, in flight", p.next, p.seq(p.next), held, ok)
	}
	var lost []uint32
	p.expire(at(5).Add(time.Second), time.Second, func(f simclient.ProbeFlight) { lost = append(lost, f.ID) })
	if len(lost) != 1 || lost[0] != 5 {
		t.Fatalf("expired %v, want request 5", lost)
	}
	if _, held := p.holder(); held {
		t.Fatalf("request 5's id still held once it was lost")
	}
	if f := reply(first + 5); f == nil || f.outcome != lostOutcome {
		t.Fatalf("a late reply to request 5 found %+v, want its request lost", f)
	}
	p.add(flight{intended: at(1<<16 + 5), sent: at(1<<16 + 5), kind: -1})
	if f, ok := p.q.Oldest(); !ok || f.ID != 1<<16+1 {
		t.Fatalf("oldest in flight %+v (%v), want request 65537", f, ok)
	}
	if p.ended[first+5] != pendingOutcome {
		t.Fatalf("request 65541 (id %d) ended %d, want it awaited: the late reply before it was sent is not its answer", first+5, p.ended[first+5])
	}
}

// TestRateProbeReusedIDs drives a probe of eight sequence ids request by
// request against a lobby socket the test answers by hand: a reply to a
// reused id answers the request that now holds it; a second reply to an
// id whose request was answered, before the id is used again, is a
// U-REPLY-DUP and answers nothing; a late reply to an id whose request
// was lost, before the id is used again, is neither a violation nor the
// answer of the id's next request, which is lost in its turn.
func TestRateProbeReusedIDs(t *testing.T) {
	lowerSeqSpace(t, 8)
	lobby, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lobby.Close() })
	p := plan(t, "", "  - steps:\n      - rate_probe: {from: 10/s, to: 100/s, over: 1s, timeout: 1s}\n")
	c := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, lobby.LocalAddr().(*net.UDPAddr).AddrPort(), c, simclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	ss, err := New(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	s := ss.(*session)
	start := time.Now()
	r := &probeRun{s: s, b: &burst{to: s.rt.lobby, valid: udpwire.LobbyListRooms, ids: newProbeIDs(s.seq + 1)},
		pr: simclient.NewProbe(p.Flows[0].Steps[0].Probe, start), start: start, timeout: time.Second}
	var answered []time.Time // the intended times of the requests answered
	r.answered = func(f *flight, ok bool) {
		if ok {
			answered = append(answered, f.intended)
		}
	}
	client := s.LocalAddr()
	intended := func(k int) time.Time { return start.Add(time.Duration(k) * time.Millisecond) }
	var seqs []uint16 // the id each request went with, as the lobby read it
	send := func(k int) {
		t.Helper()
		if err := r.Send(intended(k)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		lobby.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := lobby.ReadFromUDPAddrPort(buf)
		if err != nil || n < 4 {
			t.Fatalf("request %d: %d bytes, %v", k, n, err)
		}
		seqs = append(seqs, uint16(buf[2])<<8|uint16(buf[3]))
	}
	answer := func(k int) {
		t.Helper()
		out, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, seqs[k], nil)
		if _, err := lobby.WriteToUDPAddrPort(out, client); err != nil {
			t.Fatal(err)
		}
		// The datagram is in the client's socket (loopback); the read
		// takes it and waits out the rest.
		if err := r.Recv(time.Now().Add(20 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	for k := range 8 {
		send(k)
	}
	for k := range 4 {
		answer(k)
	}
	r.Expire(time.Now().Add(time.Hour)) // requests 4-7: lost
	answer(0)                           // a copy: request 0 was answered
	answer(5)                           // late: request 5 was lost
	for k := 8; k < 16; k++ {
		send(k)
	}
	for k := range 8 {
		if seqs[k+8] != seqs[k] {
			t.Fatalf("request %d went with id %d, want request %d's, %d (ids %v)", k+8, seqs[k+8], k, seqs[k], seqs)
		}
	}
	answer(8) // id of request 0, now request 8's
	answer(12)
	r.Expire(time.Now().Add(time.Hour))
	want := []time.Time{intended(0), intended(1), intended(2), intended(3), intended(8), intended(12)}
	if len(answered) != len(want) {
		t.Fatalf("answered %v, want the requests of %v", answered, want)
	}
	for i := range want {
		if !answered[i].Equal(want[i]) {
			t.Errorf("answer %d to the request due %v, want %v", i, answered[i].Sub(start), want[i].Sub(start))
		}
	}
	if r.pr.Lost != 10 {
		t.Errorf("%d lost, want 10 (request 13 too: the late reply to 5 is not its answer)", r.pr.Lost)
	}
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, v := range run.Violations {
		got[v.Rule] = v.Count
	}
	if len(got) != 1 || got[RuleUReplyDup] != 1 {
		t.Errorf("violations %v, want one %s (the copy to request 0)", got, RuleUReplyDup)
	}
}

// TestRateProbeWholeRamp: a probe whose ramp sends more requests than it
// has sequence ids sends them all, reusing the ids, and an answer to each
// counts; when every id is in flight (a silent lobby, the rate × the
// timeout beyond the ids), a request waits for the oldest to end, and
// the finding's note says that the rates from there were lower than
// offered.
func TestRateProbeWholeRamp(t *testing.T) {
	lowerSeqSpace(t, 8)
	silent := newRawResponder(t, func([]byte) []byte { return nil })
	echo := newRawResponder(t, func(b []byte) []byte {
		out, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, uint16(b[2])<<8|uint16(b[3]), nil)
		return out
	})
	for _, tc := range []struct {
		name      string
		lobby     netip.AddrPort
		probe     string
		sent, ans int64
		late      bool // the note says requests waited
	}{
		{"answered", echo, "{from: 10/s, to: 100/s, over: 500ms, timeout: 1s}", 27, 27, false},
		{"silent", silent, "{from: 100/s, to: 200/s, over: 200ms, timeout: 50ms}", 30, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, r := probeFinding(t, plan(t, "", "  - steps:\n      - rate_probe: "+tc.probe+"\n"), tc.lobby)
			if fd.Sent != tc.sent || fd.Accepted != tc.ans || fd.Limited != tc.sent-tc.ans {
				t.Errorf("finding %+v, want %d sent, %d answered", fd, tc.sent, tc.ans)
			}
			if got := strings.Contains(fd.Note, "went late, each waiting for a sequence id: all 8 were in flight"); got != tc.late {
				t.Errorf("note %q: says requests waited %v, want %v", fd.Note, got, tc.late)
			}
			if v := r.violations(); len(v) != 0 {
				t.Errorf("violations %v", v)
			}
		})
	}
}
