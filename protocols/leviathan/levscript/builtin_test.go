package levscript_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/metrics"
	_ "github.com/lobbybench/lobbybench/protocols/all"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levclient"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levscript"
	refsrv "github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// builtinFlow is every built-in Leviathan step, with the parameters that
// reach a message (the player's name, the join options).
const builtinFlow = `name: t
protocol: leviathan
seed: 3
load:
  stages:
    - {rate: 1/s, for: 1s}
defaults:
  timeout: 5s
flows:
  - name: f
    steps:
      - connect: {name: bench}
      - join_server
      - join_game: {options: "map=one"}
      - echo: {count: 2}
      - status
      - close
`

// runBuiltin plays builtinFlow's one session through a relay to a
// reference server and returns what the relay saw.
func runBuiltin(t *testing.T) []faultproxy.Packet {
	cfg := refsrv.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TickInterval = 5 * time.Millisecond
	srv, err := refsrv.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	r := faultproxy.Relay(t, "udp", srv.Addr(), faultproxy.Options{Record: true})
	p, err := scenario.Parse("t.yaml", []byte(builtinFlow))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := simclient.NewShared(p, r.Addr(), metrics.NewCollector(time.Now()), simclient.Options{SocketBuffer: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	levclient.SetEngineConfig(sh, levconn.Config{AckDelay: 10 * time.Millisecond})
	sess, err := levclient.New(sh, 0, &p.Flows[0], netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := sess.Run(ctx, time.Time{}); err != nil {
		t.Fatalf("the built-in flow failed: %v", err)
	}
	sess.Close()
	return r.Recorded()
}

// TestBuiltinStepsBytes: the messages the built-in client sends in every
// step are, byte for byte, what the catalog encodes when a script names
// them with only the steps' own parameters (UserName, Options), the
// session numbering them and answering what the server sent.
func TestBuiltinStepsBytes(t *testing.T) {
	trace := runBuiltin(t)
	sess := levscript.Catalog.NewSession(nil)
	given := map[string]map[string]any{
		"Request Authenticate": {"UserName": "bench"},
		"Request JoinGame":     {"Options": "map=one"},
	}
	sent := map[uint32]bool{}
	var names []string
	var p lv.Packet
	for _, d := range trace {
		if lv.Decode(&p, d.B, lv.Lenient) != nil || p.Type != lv.TypeNormal {
			continue
		}
		for i := range p.Messages {
			m := &p.Messages[i]
			b := lv.AppendMessage(nil, m)
			if !d.FromClient {
				levscript.Catalog.Decode(sess, "", b)
				continue
			}
			if sent[m.Number] { // a resend
				continue
			}
			sent[m.Number] = true
			name := nameOf(m)
			names = append(names, name)
			got, err := levscript.Catalog.Encode(sess, name, given[name])
			if err != nil || string(got) != string(b) {
				t.Errorf("%s: catalog % x (%v), built-in client % x", name, got, err, b)
			}
		}
	}
	want := []string{"Request Connect", "Request Security", "Request Authenticate", "Request JoinServer",
		"Request JoinGame", "Request Echo", "Request Echo", "Request Serverstatus", "Response CloseConnection"}
	if !slices.Equal(names, want) {
		t.Errorf("the built-in client sent %v, want %v", names, want)
	}
}

func nameOf(m *lv.Message) string {
	if m.Kind == lv.KindResponse {
		return "Response " + m.ResponseType().String()
	}
	return "Request " + m.RequestType().String()
}
