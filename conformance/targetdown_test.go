package conformance

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/liveness"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
)

// dyingTCP is a proxy in front of a TCP lobby that dies the first time a
// client sends a frame of type on: "abort" closes its listener and every
// connection for good (a new connection is refused), "hang" stops relaying
// anything in either direction while it keeps accepting (silent), "close"
// and "reset" close or reset every connection, and each new one as it
// accepts it (closed).
type dyingTCP struct {
	ln    net.Listener
	how   string
	on    tcpwire.Type
	mu    sync.Mutex
	dead  bool
	conns []net.Conn
	wg    sync.WaitGroup
	// delay holds every frame to the server this long, and stall is how
	// long it relays nothing before it dies (set with slow), so that the
	// cases running beside the fatal one are caught in flight.
	delay, stall time.Duration
	stalled      bool
	dying        bool
}

func (p *dyingTCP) slow(delay, stall time.Duration) {
	p.mu.Lock()
	p.delay, p.stall = delay, stall
	p.mu.Unlock()
}

// mute reports whether nothing is relayed: dead, or stalled before dying.
func (p *dyingTCP) mute() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead || p.stalled
}

// stallThenDie relays nothing for the stall, then dies.
func (p *dyingTCP) stallThenDie() {
	p.mu.Lock()
	if p.dying {
		p.mu.Unlock()
		return // it dies once
	}
	p.dying = true
	stall := p.stall
	p.stalled = stall > 0
	p.mu.Unlock()
	if stall > 0 {
		time.Sleep(stall)
	}
	p.die()
}

func (p *dyingTCP) frameDelay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

func startDyingTCP(t *testing.T, upstream, how string, on tcpwire.Type) string {
	t.Helper()
	return newDyingTCP(t, upstream, how, on).ln.Addr().String()
}

func newDyingTCP(t *testing.T, upstream, how string, on tcpwire.Type) *dyingTCP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dyingTCP{ln: ln, how: how, on: on}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, cc)
			dead := p.dead
			p.mu.Unlock()
			if dead {
				p.end(cc) // hung: accepted, never answered; or closed
				continue
			}
			uc, err := net.Dial("tcp", upstream)
			if err != nil {
				cc.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, uc)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { // client → server, frame by frame, watching for on
				defer p.wg.Done()
				defer uc.Close()
				var hdr [4]byte
				for {
					if _, err := io.ReadFull(cc, hdr[:]); err != nil {
						return
					}
					b := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
					if _, err := io.ReadFull(cc, b); err != nil {
						return
					}
					if len(b) > 0 && p.fatal(tcpwire.Type(b[0])) {
						p.stallThenDie()
					}
					if p.mute() {
						continue // hung: read and dropped
					}
					if d := p.frameDelay(); d > 0 {
						time.Sleep(d)
					}
					if _, err := uc.Write(append(hdr[:], b...)); err != nil {
						return
					}
				}
			}()
			go func() { // server → client, until dead
				defer p.wg.Done()
				buf := make([]byte, 32<<10)
				for {
					n, err := uc.Read(buf)
					if err != nil {
						return
					}
					if p.mute() {
						continue
					}
					if _, err := cc.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

func (p *dyingTCP) isDead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead
}

func (p *dyingTCP) fatal(typ tcpwire.Type) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return typ == p.on
}

func (p *dyingTCP) die() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead {
		return
	}
	p.dead, p.stalled = true, false
	if p.how == "abort" {
		p.ln.Close()
	}
	for _, c := range p.conns {
		p.end(c)
	}
}

// end ends c as the dead proxy does: closed when it aborts, closed or
// reset when it closes or resets; when it hangs, left open.
func (p *dyingTCP) end(c net.Conn) {
	switch p.how {
	case "reset":
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close()
	case "abort", "close":
		c.Close()
	}
}

// checkDeath holds rep, a suite during which the target died (refused or
// silent, kind), to what the reader must be told: the headline leads with
// TARGET DOWN and the kind, the outage names the cases in flight, each of
// them fails naming the death and the last bytes sent, no case is a
// harness-error skip (a dead server read as the suite's trouble), and the
// cases after it are not run.
func checkDeath(t *testing.T, rep *result.Conform, kind string, wantNotRun bool) {
	t.Helper()
	hl := rep.Headline()
	if hl.Status != result.StatusTargetDown || !strings.HasPrefix(hl.Text, "TARGET DOWN · the server stopped answering ("+kind+": ") {
		t.Errorf("headline %+v, want TARGET DOWN (%s…)", hl, kind)
	}
	if len(rep.Outages) != 1 {
		t.Fatalf("%d outages, want 1: %+v", len(rep.Outages), rep.Outages)
	}
	o := rep.Outages[0]
	if o.Kind != kind || len(o.During) == 0 || o.Back {
		t.Errorf("outage %+v: want kind %s, cases in flight, not back", o, kind)
	}
	if kind == result.DownClosed && (!strings.Contains(o.Detail, "the connection after accept") || strings.Contains(o.Detail, "no answer")) {
		t.Errorf("outage detail %q: want what the server did to the connection, never \"no answer\"", o.Detail)
	}
	during := map[string]bool{}
	for _, id := range o.During {
		during[id] = true
	}
	notRun := 0
	for _, k := range rep.Cases {
		switch {
		case during[k.ID]:
			if k.Verdict != result.VerdictFail || !strings.Contains(k.Actual, "stopped answering during this case ("+kind+": ") ||
				!strings.Contains(k.Actual, "it answered the reachability check at +") {
				t.Errorf("%s, in flight: %s %q; want a failure naming the death (%s)", k.ID, k.Verdict, k.Actual, kind)
			}
		case k.Verdict == result.VerdictNotRun:
			notRun++
			if !strings.HasPrefix(k.Actual, "not run: target down since ") {
				t.Errorf("%s not run: %q", k.ID, k.Actual)
			}
		case k.Verdict == result.VerdictSkip && strings.Contains(k.Actual, "harness error"):
			t.Errorf("%s skipped as the suite's trouble: %q", k.ID, k.Actual)
		}
	}
	if wantNotRun && notRun == 0 {
		t.Error("no case was not run after the death")
	}
	if t.Failed() {
		logReport(t, rep)
	}
}

// TestTargetDies: a target of each protocol that aborts (refused) or hangs
// (silent) on a given message is reported as down during the case that
// sent it, with every later case not run; a suite of that one case alone
// does not pass.
func TestTargetDies(t *testing.T) {
	t.Parallel()
	type setup struct {
		name  string
		kind  string
		start func(t *testing.T) Config
		// alone selects one case that sends the fatal message.
		alone string
	}
	// Every row waits 1 s for a reply (the CLI's default, and what the TCP
	// and Leviathan rows always had): a hang is found by waits running
	// out (a case's, then the reachability check's, 3 waits and a margin),
	// so the wait's length is most of a hang row's time, and 1 s is still
	// a thousand times what an answer takes on loopback.
	udp := func(how string) func(t *testing.T) Config {
		return func(t *testing.T) Config {
			l := startTestLobby(t, faults{rateLimit: 100, rateBurst: 20, die: how, dieOn: udpwire.LobbyJoinRoom}, 12)
			cfg := suiteConfig(l.addr().String(), l.portRange())
			cfg.Timeout = time.Second
			return cfg
		}
	}
	tcp := func(how string) func(t *testing.T) Config {
		return func(t *testing.T) Config {
			ref := startRef(t)
			return Config{Target: startDyingTCP(t, ref.Addr(tcpwire.ProtocolName).String(), how, tcpwire.TypeReadyReq), Protocol: protoTCP, Timeout: time.Second}
		}
	}
	lev := func(how string) func(t *testing.T) Config {
		return func(t *testing.T) Config {
			addr := startFakeLev(t, levFaults{die: how, dieOn: lv.ReqJoinGame})
			return Config{Target: addr.String(), Protocol: protoLeviathan, Timeout: time.Second}
		}
	}
	setups := []setup{
		{"udp-lobby aborts on LOBBY_JOIN_ROOM", result.DownRefused, udp("abort"), "udp-lobby/8/1"},
		{"udp-lobby hangs on LOBBY_JOIN_ROOM", result.DownSilent, udp("hang"), "udp-lobby/8/1"},
		{"tcp-lobby aborts on READY_REQ", result.DownRefused, tcp("abort"), "tcp-lobby/5.3/1"},
		{"tcp-lobby hangs on READY_REQ", result.DownSilent, tcp("hang"), "tcp-lobby/5.3/1"},
		{"tcp-lobby closes every connection after READY_REQ", result.DownClosed, tcp("close"), "tcp-lobby/5.3/1"},
		{"tcp-lobby resets every connection after READY_REQ", result.DownClosed, tcp("reset"), "tcp-lobby/5.3/1"},
		{"leviathan aborts on JoinGame", result.DownRefused, lev("abort"), "leviathan/3/3"},
		{"leviathan hangs on JoinGame", result.DownSilent, lev("hang"), "leviathan/3/3"},
	}
	// Each set-up runs twice, the whole suite and the fatal case alone,
	// every run on a target of its own. The runs mostly wait out the
	// hangs, so they all run at once (runSuites), beyond go test's
	// -parallel; the subtests then judge the reports.
	var cfgs []Config
	for _, s := range setups {
		whole, alone := s.start(t), s.start(t)
		alone.Patterns = []string{s.alone}
		cfgs = append(cfgs, whole, alone)
	}
	reps, errs := runSuites(cfgs)
	for i, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			if errs[2*i] != nil {
				t.Fatal(errs[2*i])
			}
			checkDeath(t, reps[2*i], s.kind, true)
		})
		t.Run(s.name+", that case alone", func(t *testing.T) {
			rep, err := reps[2*i+1], errs[2*i+1]
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Cases) != 1 {
				t.Fatalf("%d cases, want 1 (%s)", len(rep.Cases), s.alone)
			}
			checkDeath(t, rep, s.kind, false)
			if hl := rep.Headline(); strings.Contains(hl.Text, "PASS ·") {
				t.Errorf("headline %q", hl.Text)
			}
		})
	}
}

// TestReachAgainKeepsHeader: the reachability check made after a case
// reads the header profile the first one settled and changes nothing: it
// guesses once, then answers without a note in the profile it guessed
// (the test lobby speaks only the spec's).
func TestReachAgainKeepsHeader(t *testing.T) {
	l := startTestLobby(t, faults{}, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := NewSourcePool(DefaultSources(l.addr().Addr()), DefaultSourceRate, DefaultSourceBurst)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := lookupGroup(protoUDP)
	if !ok {
		t.Fatal("udp-lobby is not registered")
	}
	env := &Env{Target: l.addr().String(), Addr: l.addr(), Protocol: protoUDP, Options: g.Options(udpLobbyOptions("auto", PortRange{})), Timeout: time.Second, Sources: pool}
	note, err := g.Reach(ctx, env)
	if err != nil || note != "header spec, guessed from the first reply" {
		t.Fatalf("first check: %q %v", note, err)
	}
	for i := 0; i < 3; i++ {
		note, err := g.Reach(ctx, env)
		if err != nil || note != "" {
			t.Fatalf("check %d: %q %v", i+2, note, err)
		}
	}
}

// restart reopens the proxy's listener on the same address after an
// abort, as a supervisor restarting the server would; it dies only once.
func (p *dyingTCP) restart(t *testing.T, upstream string) error {
	p.mu.Lock()
	addr := p.ln.Addr().String()
	p.mu.Unlock()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln, p.dead, p.on = ln, false, 0 // type 0: never again
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			uc, err := net.Dial("tcp", upstream)
			if err != nil {
				cc.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, cc, uc)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); io.Copy(uc, cc); uc.Close() }()
			go func() { defer p.wg.Done(); io.Copy(cc, uc); cc.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return nil
}

// TestOwnedTargetHooks: Config.TargetExit puts an owned process's end and
// last output into the outage, and Config.RestartTarget lets the run go on
// after the cases in flight were judged.
func TestOwnedTargetHooks(t *testing.T) {
	t.Parallel()
	ref := startRef(t)
	upstream := ref.Addr(tcpwire.ProtocolName).String()
	px := newDyingTCP(t, upstream, "abort", tcpwire.TypeReadyReq)
	restarts := 0
	cfg := Config{Target: px.ln.Addr().String(), Protocol: protoTCP, Timeout: time.Second,
		Patterns: []string{"tcp-lobby/5.3/1", "tcp-lobby/5.1/7", "tcp-lobby/R/4"},
		TargetExit: func() (string, []string, bool) {
			if px.isDead() {
				return "killed by SIGABRT", []string{"lobby: assertion failed: room->ready", "Aborted (core dumped)"}, true
			}
			return "", nil, false
		},
		RestartTarget: func(context.Context) error { restarts++; return px.restart(t, upstream) },
	}
	rep := runSuite(t, cfg)
	if restarts != 1 || len(rep.Outages) != 1 {
		t.Fatalf("%d restarts, outages %+v", restarts, rep.Outages)
	}
	o := rep.Outages[0]
	if o.Kind != result.DownExited || o.Exit != "killed by SIGABRT" || len(o.Output) != 2 || !o.Back || len(o.During) != 1 || o.During[0] != "tcp-lobby/5.3/1" {
		t.Errorf("outage %+v", o)
	}
	for _, k := range rep.Cases {
		switch {
		case k.ID == "tcp-lobby/5.3/1":
			if k.Verdict != result.VerdictFail || !strings.Contains(k.Actual, "(exited: killed by SIGABRT") {
				t.Errorf("%s: %s %q", k.ID, k.Verdict, k.Actual)
			}
		case k.Verdict == result.VerdictNotRun:
			t.Errorf("%s not run although the target was restarted", k.ID)
		}
	}
	if hl := rep.Headline(); !strings.HasPrefix(hl.Text, "TARGET DOWN · the server stopped answering (exited: killed by SIGABRT) during tcp-lobby/5.3/1") {
		t.Errorf("headline %q", hl.Text)
	}
	if t.Failed() {
		logReport(t, rep)
	}
}

// TestOwnedTargetRerunAlone: a target that died once with several
// concurrent cases in flight, and never again, is restarted; the cases in
// flight are re-run alone and take the verdicts of their solo runs, the
// report says honestly that none kills it alone, and the cases of the
// batch not started when it died run (none is "not run").
func TestOwnedTargetRerunAlone(t *testing.T) {
	t.Parallel()
	ref := startRef(t)
	upstream := ref.Addr(tcpwire.ProtocolName).String()
	px := newDyingTCP(t, upstream, "abort", tcpwire.TypeReadyReq)
	// The cases overlap, and those beside the fatal one are still in
	// flight when it dies.
	px.slow(50*time.Millisecond, 300*time.Millisecond)
	restarts := 0
	// The first three cases all send READY_REQ after their setup: the
	// first one sent kills it with the other two in flight; the last two
	// have not started.
	cfg := Config{Target: px.ln.Addr().String(), Protocol: protoTCP, Timeout: 2 * time.Second, Parallel: 3,
		Patterns: []string{"tcp-lobby/5.3/1", "tcp-lobby/5.4", "tcp-lobby/6.3/1", "tcp-lobby/6.4/1"},
		TargetExit: func() (string, []string, bool) {
			if px.isDead() {
				return "killed by SIGSEGV", []string{"Segmentation fault"}, true
			}
			return "", nil, false
		},
		RestartTarget: func(context.Context) error {
			restarts++
			if restarts > 1 {
				return nil // it never dies again: the first restart holds
			}
			return px.restart(t, upstream)
		},
	}
	rep := runSuite(t, cfg)
	if len(rep.Outages) != 1 {
		t.Fatalf("outages %+v", rep.Outages)
	}
	o := rep.Outages[0]
	if !o.Back || len(o.During) < 2 {
		t.Fatalf("want one outage, back, with several cases in flight: %+v", o)
	}
	if !slices.Equal(o.ReRunAlone, o.During) || len(o.Culprits) != 0 {
		t.Errorf("re-run %q, culprits %q; want every case in flight re-run, no culprit", o.ReRunAlone, o.Culprits)
	}
	want := "; it died while " + strings.Join(o.During, ", ") + " ran together; none kills it alone"
	if hl := rep.Headline(); !strings.Contains(hl.Text, want) {
		t.Errorf("headline %q lacks %q", hl.Text, want)
	}
	for _, k := range rep.Cases {
		switch {
		case k.Verdict == result.VerdictNotRun:
			t.Errorf("%s not run although the target was restarted", k.ID)
		case slices.Contains(o.During, k.ID):
			if k.Verdict != result.VerdictPass || len(k.Notes) == 0 || !strings.HasPrefix(k.Notes[0], "re-run alone after the server died (exited: killed by SIGSEGV) while ") {
				t.Errorf("%s, in flight: %s %q %q", k.ID, k.Verdict, k.Actual, k.Notes)
			}
		case k.Verdict != result.VerdictPass:
			t.Errorf("%s: %s %q", k.ID, k.Verdict, k.Actual)
		}
	}
	if len(rep.Cases) != 5 {
		t.Errorf("%d cases, want 5", len(rep.Cases))
	}
	if t.Failed() {
		logReport(t, rep)
	}
}

// TestReachGarbled: a UDP target that answers every datagram with bytes
// of no protocol fails conform's reachability check (the one made before
// the suite and after each case) naming what came, classified garbled,
// not silent, never taken for a lobby or an endpoint, and not called
// unreachable.
func TestReachGarbled(t *testing.T) {
	t.Parallel() // it waits out reachability checks against a garbling proxy
	p, err := faultproxy.UDP(netip.MustParseAddrPort("127.0.0.1:9"), faultproxy.Garble, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Trip()
	target := p.Addr().String()
	for _, cfg := range []Config{
		{Target: target, Protocol: protoUDP, Options: udpLobbyOptions("auto", PortRange{}), Timeout: 300 * time.Millisecond},
		{Target: target, Protocol: protoUDP, Options: udpLobbyOptions("spec", PortRange{}), Timeout: 300 * time.Millisecond},
		{Target: target, Protocol: protoLeviathan, Timeout: 300 * time.Millisecond},
	} {
		t.Run(cfg.Protocol, func(t *testing.T) {
			check, err := cfg.ReachCheck()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = check(ctx)
			if err == nil || !strings.Contains(err.Error(), "16 bytes that do not decode as it: de ad be ef") {
				t.Fatalf("reach = %v, want it to fail naming the 16 bytes", err)
			}
			if k := liveness.Classify(err); k != result.DownGarbled {
				t.Errorf("Classify(%v) = %q, want %q", err, k, result.DownGarbled)
			}
			// No suite can run (exit 3), but the words are not
			// "unreachable": it answers, in no protocol.
			if !errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), "unreachable") ||
				!strings.Contains(err.Error(), "answers, but not in its protocol") {
				t.Errorf("reach = %v, want ErrUnreachable saying it answers, but not in its protocol", err)
			}
		})
	}
}
