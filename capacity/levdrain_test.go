package capacity

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levclient"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/refserver"
)

// levServer is a reference server's Leviathan endpoint for the test.
func levServer(t *testing.T) netip.AddrPort {
	t.Helper()
	cfg, err := refserver.Loopback().Only("leviathan")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.Addr("leviathan")
}

// levPlayer is a client that authenticates and joins the server at addr,
// and stays until it leaves.
func levPlayer(t *testing.T, addr netip.AddrPort) *levclient.Conn {
	t.Helper()
	c, err := levclient.Dial(context.Background(), addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ask(lv.ReqJoinServer, lv.JoinServer{MasterServerToken: lv.ClientMasterServerToken}.Append(nil), lv.ResServerAllow); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// engineLev is a Leviathan endpoint as the original engine behaves for
// what the drain check asks: it completes the handshake and never
// answers Serverstatus.
func engineLev(t *testing.T) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { c.Close(); wg.Wait() })
	go func() {
		defer wg.Done()
		peers := map[netip.AddrPort]*levconn.Conn{}
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			now := time.Now()
			p := peers[from]
			if p == nil {
				if p, err = levconn.New(levconn.Config{}, now); err != nil {
					return
				}
				peers[from] = p
			}
			p.Receive(now, buf[:n])
			for _, e := range p.Events() {
				if e.Kind != levconn.EventMessage || e.Msg.Kind != lv.KindRequest {
					continue
				}
				m := e.Msg
				switch m.RequestType() {
				case lv.ReqConnect:
					p.SendResponse(now, levconn.Critical, lv.ResConnect, m.Number, lv.Connect{CheckValue: lv.CheckValue}.Append(nil))
				case lv.ReqSecurity:
					p.SendResponse(now, levconn.Critical, lv.ResSecurity, m.Number, lv.SecurityResponse{SecureType: lv.SecureTypeNone}.Append(nil))
				case lv.ReqAuthenticate:
					p.SendResponse(now, levconn.Critical, lv.ResAuthenticate, m.Number, lv.AuthenticateResponse{}.Append(nil))
				}
			}
			for dg := p.Poll(now); dg != nil; dg = p.Poll(now) {
				c.WriteToUDPAddrPort(dg, from)
			}
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// levPlayers is the drain check's count of a Leviathan target: the
// protocol's Occupancy.
func levPlayers(ctx context.Context, addr netip.AddrPort, timeout time.Duration) (int, error) {
	return levclient.Client.Occupancy.Count(ctx, addr, nil, timeout)
}

func TestLevPlayers(t *testing.T) {
	addr := levServer(t)
	count := func() int {
		t.Helper()
		n, err := levPlayers(context.Background(), addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("a fresh server: %d players, want 0", n)
	}
	var players []*levclient.Conn
	for range 3 {
		players = append(players, levPlayer(t, addr))
	}
	// The count's own connections never joined: they are not players,
	// and a count leaves none behind.
	if n, m := count(), count(); n != 3 || m != 3 {
		t.Errorf("3 players joined: counted %d, then %d", n, m)
	}
	players[0].Close()
	if n := count(); n != 2 {
		t.Errorf("one of 3 left: %d players, want 2", n)
	}

	_, err := levPlayers(context.Background(), engineLev(t), 300*time.Millisecond)
	if !errors.Is(err, ErrNoCount) || !strings.Contains(err.Error(), "answered the handshake but not Serverstatus") {
		t.Errorf("a server that never answers Serverstatus: %v, want ErrNoCount saying why", err)
	}
	silent, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if _, err := levPlayers(context.Background(), silent.LocalAddr().(*net.UDPAddr).AddrPort(), 100*time.Millisecond); err == nil || errors.Is(err, ErrNoCount) {
		t.Errorf("a server that answers nothing: %v, want an error other than ErrNoCount (it may just be down)", err)
	}
}

// The drain check of a Leviathan target: the player count its
// ServerStatus reports is taken before the first step and waited for
// before each later one; players who stay make the step say it did not
// drain, players who leave during the wait let it start.
func TestEngineRunnerLevDrain(t *testing.T) {
	addr := levServer(t)
	plan := pollPlan(t, (&cappedLobby{}).Start(t))
	slept := 0
	var leave func()
	r := &EngineRunner{Plan: plan, Hold: time.Second, Judge: DefaultJudgement, Run: fakeEngine(1e9, nil),
		Drain: time.Second, DrainPoll: 500 * time.Millisecond, Counted: "players reported",
		Rooms: func(ctx context.Context) (int, error) { return levPlayers(ctx, addr, 2*time.Second) },
		Sleep: func(context.Context, time.Duration) {
			slept++
			if leave != nil {
				leave()
				leave = nil
			}
		}}
	step := func() string {
		t.Helper()
		st, err := r.Step(context.Background(), 10)
		if err != nil {
			t.Fatal(err)
		}
		return st.Drain
	}
	if d := step(); d != "" || slept != 0 {
		t.Fatalf("first step: drain %q, slept %d: want the baseline taken", d, slept)
	}
	// Players the step left connected, who never leave.
	stay := []*levclient.Conn{levPlayer(t, addr), levPlayer(t, addr), levPlayer(t, addr)}
	if d := step(); d != "not drained: 3 players reported after --drain 1s, baseline 0" || slept != 2 {
		t.Errorf("players who stay: drain %q, slept %d: want not drained after 2 waits", d, slept)
	}
	// They leave during the first wait: the step starts after it.
	slept = 0
	leave = func() {
		for _, p := range stay {
			p.Close()
		}
	}
	if d := step(); d != "" || slept != 1 {
		t.Errorf("players who leave: drain %q, slept %d: want drained after one wait", d, slept)
	}
}

// A Leviathan target that never answers Serverstatus gets one line: the
// drain is not checked, and why; no step says anything of it.
func TestEngineRunnerLevNoServerStatus(t *testing.T) {
	addr := engineLev(t)
	plan := pollPlan(t, (&cappedLobby{}).Start(t))
	var notes []string
	r := &EngineRunner{Plan: plan, Hold: time.Second, Judge: DefaultJudgement, Run: fakeEngine(1e9, nil),
		Drain: time.Second, Counted: "players reported",
		Rooms: func(ctx context.Context) (int, error) { return levPlayers(ctx, addr, 200*time.Millisecond) },
		Note:  func(s string) { notes = append(notes, s) },
		Sleep: func(context.Context, time.Duration) { t.Error("waited for a count the server does not give") }}
	for i := range 3 {
		st, err := r.Step(context.Background(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if st.Drain != "" {
			t.Errorf("step %d: drain %q", i+1, st.Drain)
		}
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "drain not checked: ") || !strings.Contains(notes[0], "Serverstatus") {
		t.Errorf("notes %q: want one line saying the drain is not checked and why", notes)
	}
}
