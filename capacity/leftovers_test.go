package capacity

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestSearchStepsDoNotInheritRooms: against a reference server whose room
// pool is small and whose empty rooms expire lazily (cleanup every second),
// a search from a low start and one started above the limit find the same
// sustainable load within one precision step. The second search's first
// steps break and fill the pool; only the drain check between steps
// keeps their rooms from breaking the lower loads after them (the test
// checks that some listing before a step did find rooms left over). The
// second search starts with the first's rooms still listed: a baseline
// taken then (before it waited for them to go) let every later step
// start with its own leftovers, and that search held 2/s where the first
// held 6/s.
func TestSearchStepsDoNotInheritRooms(t *testing.T) {
	if testing.Short() {
		t.Skip("two real searches")
	}
	cfg := refserver.Loopback()
	refudp.ConfigOf(cfg).MaxInstances, refudp.ConfigOf(cfg).CleanupInterval = 6, time.Second
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, _ := simclient.Describe(string(udpwire.ProtocolName))
	addr := srv.Addr(p.EmbeddedParts[0])
	if !addr.IsValid() {
		t.Fatalf("the reference server has no %s part", p.EmbeddedParts[0])
	}
	yaml := fmt.Sprintf(`name: rooms
protocol: udp-lobby
target: %s
load:
  rate: 2/s
  duration: 1s
  max_clients: 1000
flows:
  - name: creator
    steps:
      - create_room: {timeout: 1s, retries: 0}
      - join: {room: created}
      - hello
      - instance_join
      - think: 300ms
      - leave
thresholds:
  - create_room.error_rate < 5%%
`, addr)
	path := filepath.Join(t.TempDir(), "rooms.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	waited := 0 // listings before a step that found rooms left over
	search := func(start float64) float64 {
		j := DefaultJudgement
		j.Warmup, j.LagBound = 0, 10*time.Second
		r := &EngineRunner{Plan: plan, Base: engine.Config{Watchdog: -1, Grace: 500 * time.Millisecond}, Hold: time.Second, Judge: j,
			Rooms: func(ctx context.Context) (int, error) {
				n, err := udpRooms(ctx, addr, udpclient.OptionsOf(plan).HeaderProfile, time.Second)
				if n > 0 {
					waited++
				}
				return n, err
			},
			Drain:     5 * time.Second,
			DrainPoll: 100 * time.Millisecond}
		s := Settings{Start: start, Max: 1000, Precision: 0.25, Budget: 2 * time.Minute, StepCost: 2 * time.Second}
		c, err := Search(context.Background(), s, r, time.Now, func(st reportsStep) {
			t.Logf("start %v: %v/s %s %v %s (err %.1f%%) %s", start, st.Load, st.Verdict, st.Broke, st.Why, st.ErrorRate*100, st.Drain)
			if st.Drain != "" {
				t.Errorf("start %v: %v/s: %s", start, st.Load, st.Drain)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.Stop != "precision" || c.Sustainable == 0 {
			t.Fatalf("start %v: stopped on %q (%s), held %v: want a limit found", start, c.Stop, c.StopText, c.Sustainable)
		}
		return c.Sustainable
	}
	low := search(2)
	high := search(2 * low)
	t.Logf("%d room listings before a step found rooms left over", waited)
	if waited == 0 {
		t.Error("no step started with rooms left over: the drain check was never exercised")
	}
	if gap := math.Abs(high - low); gap > 0.25*math.Max(low, high)+1 {
		t.Errorf("from 2/s held %v/s, from %v/s held %v/s: more than one precision step apart", low, 2*low, high)
	}
}
