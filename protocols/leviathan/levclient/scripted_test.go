package levclient

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/metrics"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// messages are the messages the client sent in Ln packets, first
// transmissions only, as levwire encodes a message, and whether the Ln
// packets' PKT_IDs grew one by one.
func messages(sent [][]byte) (msgs [][]byte, idsInOrder bool) {
	seen := map[uint32]bool{}
	var last uint32
	idsInOrder = true
	var p lv.Packet
	for _, b := range sent {
		if lv.Decode(&p, b, lv.Lenient) != nil || p.Type != lv.TypeNormal {
			continue
		}
		idsInOrder = idsInOrder && (last == 0 || p.ID == last+1)
		last = p.ID
		for i := range p.Messages {
			if m := &p.Messages[i]; !seen[m.Number] {
				seen[m.Number] = true
				msgs = append(msgs, lv.AppendMessage(nil, m))
			}
		}
	}
	return msgs, idsInOrder
}

// playThrough plays p's one session against addr with the fast engine.
func playThrough(t *testing.T, p *scenario.Plan, addr netip.AddrPort) (*result.Run, error) {
	t.Helper()
	col := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, addr, col, simclient.Options{SocketBuffer: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if !SetEngineConfig(sh, fastEngine) {
		t.Fatal("engine config not taken")
	}
	sess, err := New(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = sess.Run(ctx, time.Time{})
	sess.Close()
	run, serr := col.Snapshot()
	if serr != nil {
		t.Fatal(serr)
	}
	return run, err
}

func successes(run *result.Run) map[string]int64 {
	got := map[string]int64{}
	for _, m := range run.Messages {
		if m.Successes > 0 {
			got[m.Name] = m.Successes
		}
	}
	return got
}

// scriptedHandshake is the built-in connect step as a script (the
// handshake of leviathan.md §3, the user name "bench"); scriptedJoin adds
// the join_server step, accepted.
const (
	scriptedHandshake = `      - send: Request Connect
      - expect: {message: Response Connect, where: "CheckValue == 42"}
      - send: Request Security
      - expect: Response Security
      - send: {message: Request Authenticate, fields: {UserName: bench}}
      - expect: Response Authenticate
`
	scriptedJoin = scriptedHandshake + `      - send: Request JoinServer
      - expect: {message: Response ServerAllow, where: "AcceptedType == 0"}
`
)

// TestScriptSendsWhatStepsSend: a flow of built-in steps and the same flow
// as a script send the reference server the same messages, byte for byte,
// in Ln packets the engine numbers; both run without a violation, each
// request measured under its message.
func TestScriptSendsWhatStepsSend(t *testing.T) {
	const builtIn = `      - connect: {name: bench}
      - join_server
      - echo: {count: 2}
      - status
      - close`
	const scripted = scriptedJoin + `      - repeat: {count: 2}
        steps:
          - send: Request Echo
          - expect: Response None
      - send: Request Serverstatus
      - expect: Response ServerStatus
      - send: Response CloseConnection
      - expect: {silence: 100ms}`
	sentBy := map[string][][]byte{} // the messages each flow sent
	for _, tc := range []struct {
		name, flow string
		measured   map[string]int64
	}{
		{"built-in", builtIn, map[string]int64{"Connect": 1, "Security": 1, "Authenticate": 1,
			"JoinServer": 1, "Echo": 2, "Serverstatus": 1, "CloseConnection": 1}},
		{"scripted", scripted, map[string]int64{"Request Connect": 1, "Request Security": 1, "Request Authenticate": 1,
			"Request JoinServer": 1, "Request Echo": 2, "Request Serverstatus": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, nil)
			relay := faultproxy.Relay(t, "udp", srv.Addr(), faultproxy.Options{Record: true})
			run, err := playThrough(t, plan(t, "", tc.flow), relay.Addr())
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Violations) != 0 {
				t.Errorf("violations %+v", run.Violations)
			}
			got := successes(run)
			for name, n := range tc.measured {
				if got[name] != n {
					t.Errorf("%s measured %d times, want %d (all: %v)", name, got[name], n, got)
				}
			}
			msgs, inOrder := messages(relay.Sent())
			if !inOrder {
				t.Error("the client's Ln packets do not take PKT_IDs one by one")
			}
			sentBy[tc.name] = msgs
		})
	}
	a, b := sentBy["built-in"], sentBy["scripted"]
	if len(a) != 8 || len(a) != len(b) {
		t.Fatalf("built-in sent %d messages, the script %d; want 8 each", len(a), len(b))
	}
	for k := range a {
		if string(a[k]) != string(b[k]) {
			t.Errorf("message %d: built-in % x, script % x", k, a[k], b[k])
		}
	}
}

// TestScriptAfterBuiltInSteps: a script after built-in steps that sent
// messages numbers its own after theirs, and the server answers them.
func TestScriptAfterBuiltInSteps(t *testing.T) {
	srv := startServer(t, nil)
	run, err := playThrough(t, plan(t, "", `      - connect: {name: bench}
      - send: Request JoinServer
      - expect: {message: Response ServerAllow, where: "AcceptedType == 0"}
      - send: Request Echo
      - expect: Response None`), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if got := successes(run); got["Request JoinServer"] != 1 || got["Request Echo"] != 1 {
		t.Errorf("measured %v, want the scripted JoinServer and Echo answered", got)
	}
}

// TestBuiltInStepsAfterScript: built-in steps after a script that
// connected and joined go on from where it left the connection: their
// messages take the numbers after the script's (the server would drop a
// number again as a copy), the server answers them as a joined player's,
// and nothing is a violation.
func TestBuiltInStepsAfterScript(t *testing.T) {
	srv := startServer(t, nil)
	run, err := playThrough(t, plan(t, "", scriptedJoin+`      - echo: {count: 2}
      - status
      - close`), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Violations) != 0 {
		t.Errorf("violations %+v", run.Violations)
	}
	got := successes(run)
	for name, n := range map[string]int64{"Request JoinServer": 1, "Echo": 2, "Serverstatus": 1, "CloseConnection": 1} {
		if got[name] != n {
			t.Errorf("%s measured %d times, want %d (all: %v)", name, got[name], n, got)
		}
	}
}

// TestScriptFailsNamingWhatCame: an expect that gets another message fails
// its step as unexpected, naming the message that came; one that gets
// nothing (the server acks a request before the handshake and drops it:
// an ack is no message) fails as a timeout.
func TestScriptFailsNamingWhatCame(t *testing.T) {
	srv := startServer(t, nil)
	for _, tc := range []struct {
		name, flow, reason, says string
	}{
		{"another message", `      - send: Request Connect
      - expect: Response ServerAllow`, simclient.ReasonUnexpected, "got Response Connect"},
		{"silence", `      - send: Request Echo
      - expect: {message: any, within: 200ms}`, result.ReasonTimeout, "nothing came"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := playThrough(t, plan(t, "", tc.flow), srv.Addr())
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one saying %q", err, tc.says)
			}
			var failed int64
			for _, s := range run.Steps {
				failed += s.FailuresByReason[tc.reason]
			}
			if failed != 1 {
				t.Errorf("steps %+v: want one failure %q", run.Steps, tc.reason)
			}
		})
	}
}
