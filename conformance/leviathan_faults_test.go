package conformance

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/levconn"
	"github.com/lobbybench/lobbybench/reports"
	lv "github.com/lobbybench/lobbybench/wire/leviathan"
)

// levFaults are deliberate defects of the fake endpoint.
type levFaults struct {
	preAuth     bool // answers Echo before authentication
	dupAnswered bool // acts on duplicate MessageNumbers
	noResend    bool // sends Critical replies once
	embeddedLa  bool // the engine's ack-only datagram: previous Ln bytes + La
	noStatus    bool // never answers Serverstatus (the engine's defect)
	echoRespond bool // Echo's None names the Echo in ResponseTo
	// Quirks of the engine's own networking code: what
	// a real server does that the suite must not misread.
	connectFirst  bool // opens its own connection back: sends Connect to a new peer first
	keepaliveAcks bool // before authentication, acks dropped requests with Response Keepalive
	fewResends    bool // sends Critical replies 3 times, not 5
	noWorld       bool // JoinGame answered ServerDisallow(InvalidParameters, "No valid world to join found")
	// refuseAuth answers Authenticate with ServerDisallow and never
	// authenticates: no session gets past the handshake.
	refuseAuth bool
	// die, "abort" or "hang", kills the endpoint when it receives a
	// request of type dieOn: abort closes its socket for good (refused),
	// hang stops answering anything (silent).
	die   string
	dieOn lv.RequestType
}

// fakeLev is a small Leviathan endpoint on levconn with switchable faults,
// so each fault can be shown to be caught by its own case only.
type fakeLev struct {
	conn   *net.UDPConn
	f      levFaults
	mu     sync.Mutex
	peers  map[netip.AddrPort]*fakePeer
	next   int
	lastLn map[netip.AddrPort][]byte
	// hung: the endpoint died (levFaults.die) and answers nothing.
	hung bool
	// closed are the endpoints whose connection a CloseConnection ended:
	// their stray datagrams (resends) open no new connection.
	closed map[netip.AddrPort]bool
}

type fakePeer struct {
	c      *levconn.Conn
	state  int // 0 new, 1 connected, 2 secured, 3 authed
	player int
}

func startFakeLev(t *testing.T, f levFaults) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeLev{conn: c, f: f, peers: map[netip.AddrPort]*fakePeer{}, next: 1001, lastLn: map[netip.AddrPort][]byte{}, closed: map[netip.AddrPort]bool{}}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); c.Close() })
	go func() {
		tk := time.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
			}
			now := time.Now()
			s.mu.Lock()
			if s.hung {
				s.mu.Unlock()
				continue
			}
			for a, p := range s.peers {
				p.c.Tick(now)
				p.c.Events()
				s.flush(now, a, p)
			}
			s.mu.Unlock()
		}
	}()
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
			s.mu.Lock()
			s.handle(time.Now(), from, buf[:n])
			s.mu.Unlock()
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

func (s *fakeLev) flush(now time.Time, a netip.AddrPort, p *fakePeer) {
	for dg := p.c.Poll(now); dg != nil; dg = p.c.Poll(now) {
		out := dg
		if lv.PacketType(uint16(dg[0])<<8|uint16(dg[1])) == lv.TypeNormal {
			s.lastLn[a] = append(s.lastLn[a][:0], dg...)
		} else if s.f.embeddedLa && len(s.lastLn[a]) > 0 {
			out = append(append([]byte(nil), s.lastLn[a]...), dg...)
		}
		s.conn.WriteToUDPAddrPort(out, a)
	}
}

func (s *fakeLev) handle(now time.Time, from netip.AddrPort, b []byte) {
	if s.hung {
		return
	}
	p := s.peers[from]
	if p == nil && s.closed[from] {
		return
	}
	if p == nil {
		cfg := levconn.Config{}
		if s.f.noResend {
			cfg.CriticalTransmissions = 1
		}
		if s.f.fewResends {
			cfg.CriticalTransmissions = 3
		}
		c, _ := levconn.New(cfg, now)
		p = &fakePeer{c: c}
		s.peers[from] = p
	}
	p.c.Receive(now, b)
	for _, e := range p.c.Events() {
		if e.Kind == levconn.EventDuplicate && s.f.dupAnswered {
			e.Kind = levconn.EventMessage
		}
		if e.Kind != levconn.EventMessage {
			continue
		}
		m := e.Msg
		reply := func(t lv.ResponseType, to uint32, payload []byte) {
			p.c.SendResponse(now, levconn.Critical, t, to, payload)
		}
		if m.Kind == lv.KindResponse {
			if m.ResponseType() == lv.ResCloseConnection {
				p.c.FlushAcks()
				s.flush(now, from, p)
				delete(s.peers, from)
				s.closed[from] = true
				return
			}
			continue
		}
		if s.f.die != "" && m.RequestType() == s.f.dieOn {
			s.hung = true
			if s.f.die == "abort" {
				s.conn.Close()
			}
			return
		}
		switch m.RequestType() {
		case lv.ReqConnect:
			if s.f.connectFirst && p.state == 0 {
				// The engine opens its own connection back before it
				// answers: the client answers this Connect first.
				p.c.SendRequest(now, levconn.Critical, lv.ReqConnect, lv.Connect{CheckValue: lv.CheckValue}.Append(nil))
			}
			p.state = max(p.state, 1)
			reply(lv.ResConnect, m.Number, lv.Connect{CheckValue: 42}.Append(nil))
			continue
		case lv.ReqSecurity:
			p.state = max(p.state, 2)
			reply(lv.ResSecurity, m.Number, lv.SecurityResponse{SecureType: 1}.Append(nil))
			continue
		case lv.ReqAuthenticate:
			if s.f.refuseAuth {
				reply(lv.ResServerDisallow, m.Number, lv.ServerDisallow{Message: []byte("no"), Reason: lv.DisallowInvalidParameters}.Append(nil))
				continue
			}
			p.state = 3
			reply(lv.ResAuthenticate, m.Number, lv.AuthenticateResponse{}.Append(nil))
			continue
		}
		if p.state < 3 && !(s.f.preAuth && m.RequestType() == lv.ReqEcho) {
			if s.f.keepaliveAcks {
				reply(lv.ResKeepalive, 0, nil)
			}
			continue
		}
		switch m.RequestType() {
		case lv.ReqJoinServer:
			if p.player != 0 {
				reply(lv.ResServerDisallow, m.Number, lv.ServerDisallow{Message: []byte("already"), Reason: lv.DisallowServerAlreadyConnectedToYou}.Append(nil))
				continue
			}
			p.player = s.next
			s.next++
			reply(lv.ResServerAllow, m.Number, lv.ServerAllow{Accepted: lv.AcceptConnectAccepted, Message: []byte("Allowed, ID: 1")}.Append(nil))
		case lv.ReqJoinGame:
			if s.f.noWorld {
				reply(lv.ResServerDisallow, m.Number, lv.ServerDisallow{Message: []byte("No valid world to join found"), Reason: lv.DisallowInvalidParameters}.Append(nil))
				continue
			}
			reply(lv.ResServerAllow, m.Number, lv.ServerAllow{Accepted: lv.AcceptDone}.Append(nil))
			reply(lv.ResStartWorldReceive, 0, lv.StartWorldReceive{}.Append(nil))
		case lv.ReqEcho:
			to := uint32(0)
			if s.f.echoRespond {
				to = m.Number
			}
			reply(lv.ResNone, to, nil)
		case lv.ReqServerstatus:
			if !s.f.noStatus {
				reply(lv.ResServerStatus, m.Number, lv.ServerStatus{Name: []byte("fake"), Joinable: true, Status: lv.StatusRunning, MaxPlayers: 1000}.Append(nil))
			}
		}
	}
	s.flush(now, from, p)
}

// levFaultRow is one defect of the fake endpoint and the verdict each case
// must reach (any case not named must pass).
type levFaultRow struct {
	name string
	f    levFaults
	want map[string]string
}

// levFaultRows are TestLeviathanFaults' defects; TestFaultCoverage counts
// a case caught by a row that wants it to fail or warn.
var levFaultRows = []levFaultRow{
	{"clean", levFaults{}, map[string]string{"leviathan/3/7": reports.VerdictSkip}}, // 1000 free slots: too many to fill
	{"answers before auth", levFaults{preAuth: true}, map[string]string{"leviathan/2/4": reports.VerdictFail, "leviathan/3/7": reports.VerdictSkip}},
	{"answers duplicates", levFaults{dupAnswered: true}, map[string]string{"leviathan/4/5": reports.VerdictFail, "leviathan/3/7": reports.VerdictSkip}},
	{"never resends", levFaults{noResend: true}, map[string]string{"leviathan/4/3": reports.VerdictFail, "leviathan/4/4": reports.VerdictSkip, "leviathan/3/7": reports.VerdictSkip}},
	{"engine ack-only defect", levFaults{embeddedLa: true}, map[string]string{"leviathan/Q/1": reports.VerdictWarn, "leviathan/3/7": reports.VerdictSkip}},
	{"no ServerStatus", levFaults{noStatus: true}, map[string]string{"leviathan/3/5": reports.VerdictWarn, "leviathan/3/7": reports.VerdictSkip}},
	{"Echo ResponseTo", levFaults{echoRespond: true}, map[string]string{"leviathan/3/4": reports.VerdictWarn, "leviathan/3/7": reports.VerdictSkip}},
	// The quirky endpoint: the engine's own behaviours, one at a time.
	// The suite's own assumptions must not turn them into failures;
	// the engine's real defects (Q/1, 4/4, 3/5) stay reported.
	{"quirk: Connect to the client first", levFaults{connectFirst: true}, map[string]string{"leviathan/3/7": reports.VerdictSkip}},
	{"quirk: acks via Response Keepalive", levFaults{keepaliveAcks: true}, map[string]string{"leviathan/3/7": reports.VerdictSkip}},
	{"quirk: stale bytes in La datagrams", levFaults{embeddedLa: true, connectFirst: true}, map[string]string{"leviathan/Q/1": reports.VerdictWarn, "leviathan/3/7": reports.VerdictSkip}},
	{"quirk: three transmissions, not five", levFaults{fewResends: true}, map[string]string{"leviathan/4/4": reports.VerdictWarn, "leviathan/3/7": reports.VerdictSkip}},
	{"quirk: no world to join", levFaults{noWorld: true}, map[string]string{"leviathan/3/3": reports.VerdictWarn, "leviathan/3/7": reports.VerdictSkip}},
	// All of them at once, as the engine itself behaves: only the real
	// defects and the refusal are reported.
	{"quirk: the engine's behaviours together", levFaults{connectFirst: true, keepaliveAcks: true, embeddedLa: true, fewResends: true, noWorld: true, noStatus: true},
		map[string]string{"leviathan/3/3": reports.VerdictWarn, "leviathan/3/5": reports.VerdictWarn, "leviathan/4/4": reports.VerdictWarn, "leviathan/Q/1": reports.VerdictWarn, "leviathan/3/7": reports.VerdictSkip}},
}

// TestLeviathanFaults: each defect of the fake endpoint is reported by the
// case that owns it, and every other case passes (or skips where its
// precondition is the defect).
func TestLeviathanFaults(t *testing.T) {
	// Parallel with the other Leviathan suite test: both mostly wait out
	// case timeouts (the package CPU time is a few seconds), which halves
	// the package's wall time under -race.
	t.Parallel()
	setups := levFaultRows
	reps := make([]*reports.Conform, len(setups))
	errs := make([]error, len(setups))
	var wg sync.WaitGroup
	for i, s := range setups {
		if !rowSelected(s.name) {
			continue
		}
		addr := startFakeLev(t, s.f)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			reps[i], errs[i] = Run(ctx, Config{Target: addr.String(), Protocol: ProtoLeviathan, Timeout: time.Second})
		}()
	}
	wg.Wait()
	for i, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			if !rowSelected(s.name) {
				t.Skip("not selected by -faultrows")
			}
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			for _, x := range reps[i].Cases {
				want, ok := s.want[x.ID]
				if !ok {
					want = reports.VerdictPass
				}
				if x.Verdict != want {
					t.Errorf("%s is %v, want %v: expected %s, actual %s", x.ID, x.Verdict, want, x.Expected, x.Actual)
				}
			}
			if t.Failed() {
				logReport(t, reps[i])
			}
		})
	}
}
