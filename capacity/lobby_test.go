package capacity

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// cappedLobby is a udp-lobby that answers LOBBY_LIST_ROOMS (an empty
// list) at most capPerSec a second, dropping the rest, and, when breakAbove > 0, answers
// with a packet of packetType 3 (U-PACKET-TYPE) whenever more than
// breakAbove a second came in over the last second.
type cappedLobby struct {
	capPerSec, breakAbove float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
	recent []time.Time
}

// window is what cappedLobby measures its rate over.
const window = time.Second

// idle is the pause after which cappedLobby's token bucket starts afresh.
const idle = 300 * time.Millisecond

func (l *cappedLobby) admit(now time.Time) (answer, bad bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.breakAbove > 0 {
		cut := 0
		for cut < len(l.recent) && now.Sub(l.recent[cut]) > window {
			cut++
		}
		l.recent = append(l.recent[cut:], now)
		bad = float64(len(l.recent)) > l.breakAbove*window.Seconds()
	}
	if l.capPerSec <= 0 {
		return true, bad
	}
	// Tokens accrue at capPerSec from the first request after an idle
	// spell (between steps), up to half a second's worth: a stalled,
	// then hurried, harness is not punished, and over a step no more
	// than capPerSec a second (and two) are answered.
	if l.last.IsZero() || now.Sub(l.last) > idle {
		l.tokens = 2 // the engine's reachability check, and the first session
	} else {
		l.tokens = min(l.capPerSec/2, l.tokens+now.Sub(l.last).Seconds()*l.capPerSec)
	}
	l.last = now
	if l.tokens < 1 {
		return false, bad
	}
	l.tokens--
	return true, bad
}

// busy is how many requests came in over the last window: what the
// lobby lists as its "rooms", so a search drains it between steps.
func (l *cappedLobby) busy() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, at := range l.recent {
		if time.Since(at) <= window {
			n++
		}
	}
	return n
}

// start serves on a free loopback port until the test ends.
func (l *cappedLobby) start(t *testing.T) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { c.Close(); <-done })
	go func() {
		defer close(done)
		dec := udplobby.Decoder{Profile: udplobby.ProfileSpec, Dir: udplobby.ClientToServer}
		buf := make([]byte, 2048)
		var m udplobby.Message
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if dec.Decode(buf[:n], &m) != nil || m.Type != udplobby.LobbyListRooms {
				continue
			}
			answer, bad := l.admit(time.Now())
			if !answer {
				continue
			}
			reply := udplobby.Message{Header: udplobby.Header{PacketType: 2, Type: udplobby.LobbyRoomList, Seq: m.Seq}}
			out, err := udplobby.Append(nil, udplobby.ProfileSpec, &reply)
			if err != nil {
				continue
			}
			if bad {
				out = badReply(m.Seq)
			}
			c.WriteToUDPAddrPort(out, from)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// badReply is a LOBBY_ROOM_LIST of packetType 3, which no server may
// send.
func badReply(seq uint16) []byte {
	return udplobby.AppendRaw(nil, udplobby.ProfileSpec, udplobby.Header{PacketType: 3, Type: udplobby.LobbyRoomList, Seq: seq, PayloadSize: 2, OriginalSize: 2}, []byte{0, 0})
}

// pollPlan is an open-model scenario of one list_rooms a session at
// target, judged by its error rate.
func pollPlan(t *testing.T, target netip.AddrPort) *scenario.Plan {
	t.Helper()
	yaml := fmt.Sprintf(`name: capped-poll
protocol: udp-lobby
target: %s
load:
  rate: 10/s
  duration: 2s
  max_clients: 1000
defaults:
  timeout: 1s
  retries: 0
flows:
  - name: poll
    steps:
      - list_rooms
thresholds:
  - errors.rate < 2%%
`, target)
	path := filepath.Join(t.TempDir(), "capped.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// searchLobby runs a real search against addr with short steps. The
// watchdog is off: a server that drops what it cannot take would fail its
// probes too.
func searchLobby(t *testing.T, l *cappedLobby, start float64) *reportsCapacity {
	t.Helper()
	plan := pollPlan(t, l.start(t))
	j := DefaultJudgement
	// The server's capacity is the subject, not the harness's: on a
	// shared machine under -race a send lag far over the default bound
	// is the machine's, and the error-rate threshold does not read it.
	j.Warmup, j.LagBound = 0, 10*time.Second
	r := &EngineRunner{Plan: plan, Base: engine.Config{Watchdog: -1, Grace: 500 * time.Millisecond}, Hold: 2 * time.Second, Judge: j,
		Rooms: func(context.Context) (int, error) { return l.busy(), nil }, Drain: 2 * time.Second, DrainPoll: 50 * time.Millisecond}
	s := Settings{Start: start, Max: 10000, Precision: 0.1, Budget: 2 * time.Minute, StepCost: 2 * time.Second}
	c, err := Search(context.Background(), s, r, time.Now, func(st reportsStep) {
		t.Logf("%v/s: %s %v %s (err %.1f%%, achieved %.1f/s) %s", st.Load, st.Verdict, st.Broke, st.Why, st.ErrorRate*100, st.Throughput, st.Drain)
		if st.Drain != "" {
			t.Errorf("%v/s: %s", st.Load, st.Drain)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSearchFindsServerCapacity(t *testing.T) {
	const R = 50.0
	c := searchLobby(t, &cappedLobby{capPerSec: R}, 12)
	if c.Stop != "precision" {
		t.Fatalf("stopped on %q (%s), want precision", c.Stop, c.StopText)
	}
	if c.Sustainable < 0.9*R || c.Sustainable > 1.1*R {
		t.Errorf("sustainable %v/s, want within 10%% of the server's %v/s", c.Sustainable, R)
	}
	if c.BrokeAt <= c.Sustainable || c.BrokeFirst == "" {
		t.Errorf("broke at %v on %q: want above %v with what broke named", c.BrokeAt, c.BrokeFirst, c.Sustainable)
	}
}

func TestSearchNamesRuleBrokenUnderLoad(t *testing.T) {
	const K = 60.0
	c := searchLobby(t, &cappedLobby{breakAbove: K}, 15)
	// The rule the client's decoder finds broken in badReply.
	var m udplobby.Message
	rule := string(udplobby.Decoder{Profile: udplobby.ProfileSpec, Dir: udplobby.ServerToClient}.DecodeRule(badReply(1), &m))
	if rule == "" {
		t.Fatal("badReply breaks no rule")
	}
	var row *reportsRule
	for i := range c.Rules {
		if c.Rules[i].Rule == rule {
			row = &c.Rules[i]
		}
	}
	if row == nil {
		t.Fatalf("rules %+v: want %s", c.Rules, rule)
	}
	// Within one step of K: above the highest load that held, at most
	// the next one tried above K.
	if row.FirstLoad <= c.Sustainable || row.FirstLoad < 0.9*K || row.FirstLoad > 1.25*K {
		t.Errorf("%s first broken at %v (held up to %v), want just above %v", row.Rule, row.FirstLoad, c.Sustainable, K)
	}
	for _, st := range c.Steps {
		if st.Load <= 0.9*K && st.Violations[row.Rule] > 0 {
			t.Errorf("%v/s, under %v, broke %s", st.Load, K, row.Rule)
		}
	}
}
