package capacity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// overheadPlan is the list-poll scenario of pollPlan, against target
// ("" for the embedded server).
func overheadPlan(tb testing.TB, target string) *scenario.Plan {
	tb.Helper()
	line := ""
	if target != "" {
		line = "target: " + target + "\n"
	}
	yaml := fmt.Sprintf("name: overhead\nprotocol: udp-lobby\n%sload:\n  rate: 10/s\n  duration: 2s\n  max_clients: 1000\nflows:\n  - name: poll\n    steps:\n      - list_rooms\nthresholds:\n  - errors.rate < 2%%\n", line)
	path := filepath.Join(tb.TempDir(), "overhead.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		tb.Fatal(err)
	}
	p, err := scenario.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkStepOverhead is what a capacity step costs outside its runs:
// the engine is fakeEngine (a run costs nothing), so what is left is the
// step's own work. "embedded": a fresh reference server started and
// stopped, judging. "target": the drain check's room listing (one
// LOBBY_LIST_ROOMS round trip to an in-process reference server, drained
// at once), judging.
func BenchmarkStepOverhead(b *testing.B) {
	b.Run("embedded", func(b *testing.B) {
		r := &EngineRunner{Plan: overheadPlan(b, ""), Hold: time.Second, Warmup: time.Second, Judge: DefaultJudgement, Run: fakeEngine(1e9, nil)}
		for b.Loop() {
			if _, err := r.Step(context.Background(), 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("target", func(b *testing.B) {
		cfg, err := engine.EmbeddedConfig(overheadPlan(b, ""))
		if err != nil {
			b.Fatal(err)
		}
		srv, err := refserver.Start(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer srv.Close()
		p, _ := simclient.Describe(string(udpwire.ProtocolName))
		addr := srv.Addr(p.EmbeddedParts[0])
		if !addr.IsValid() {
			b.Fatalf("the reference server has no %s part", p.EmbeddedParts[0])
		}
		plan := overheadPlan(b, addr.String())
		r := &EngineRunner{Plan: plan, Hold: time.Second, Warmup: time.Second, Judge: DefaultJudgement, Run: fakeEngine(1e9, nil),
			Drain: time.Second, DrainPoll: 100 * time.Millisecond,
			Rooms: func(ctx context.Context) (int, error) {
				return udpRooms(ctx, addr, udpclient.OptionsOf(plan).HeaderProfile, 2*time.Second)
			}}
		for b.Loop() {
			st, err := r.Step(context.Background(), 10)
			if err != nil {
				b.Fatal(err)
			}
			if st.Drain != "" {
				b.Fatal(st.Drain)
			}
		}
	})
}
