package engine

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestForecastGolden renders the forecast of every example scenario and
// compares it with testdata/forecast/<name>.golden (refresh with -update).
// The open-files limit is this machine's, so it is fixed here.
func TestForecastGolden(t *testing.T) {
	golden.Each(t, "../scenarios/*.yaml", filepath.Join("testdata", "forecast"), func(t *testing.T, f string) []byte {
		p, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		fc, err := NewForecast(p)
		if err != nil {
			t.Fatal(err)
		}
		fc.Files.Limit = 1024
		var b bytes.Buffer
		if err := fc.Write(&b); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if w := words.Width(l); w > words.TermWidth {
				t.Errorf("line %q is %d columns wide, over %d", l, w, words.TermWidth)
			}
		}
		return b.Bytes()
	})
}

// TestForecastRooms: the rooms a flow holds at once are its creates per
// second × (session + the time an emptied room is kept), set against the
// server's limit, and over it the forecast says so.
func TestForecastRooms(t *testing.T) {
	flow := func(only scenario.Membership, think time.Duration) scenario.Flow {
		return scenario.Flow{Name: "f", Weight: 1, GroupSize: 4, Steps: []scenario.Step{
			{Kind: "create_room", Spec: &scenario.StepSpec{CreatesRoom: true}, Only: only},
			{Kind: scenario.Think, Think: scenario.ThinkTime{Dist: scenario.Fixed, A: think}},
		}}
	}
	for _, tt := range []struct {
		name     string
		load     scenario.LoadShape
		flow     scenario.Flow
		cleanup  time.Duration
		max      int
		perSec   float64
		live     int
		over     bool
		peakCli  int
		sessions float64
	}{
		// 200 sessions/s in groups of 4: 50 rooms/s, each 1 s in use and
		// kept 1.5 × 1 s: 125 held, over 100.
		{"open, leader creates", scenario.LoadShape{Model: scenario.Open, Start: 200, Duration: 10 * time.Second, MaxClients: 1000},
			flow(scenario.Leader, time.Second), time.Second, 100, 50, 125, true, 200, 2000},
		// 200 closed clients in groups of 4, sessions of 2 s: 50 groups
		// create 25 rooms/s, held 2 s + 0.75 s: 69 of 100.
		{"closed, leader creates", scenario.LoadShape{Model: scenario.Closed, Start: 200, Duration: 10 * time.Second, MaxClients: 200},
			flow(scenario.Leader, 2*time.Second), 500 * time.Millisecond, 100, 25, 69, false, 200, 1000},
		// Every member creates: 4 rooms per group.
		{"open, all create", scenario.LoadShape{Model: scenario.Open, Start: 10, Duration: 10 * time.Second, MaxClients: 1000},
			flow(scenario.All, time.Second), time.Second, 100, 10, 25, false, 10, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &scenario.Plan{Protocol: "udp-lobby", Load: tt.load, Flows: []scenario.Flow{tt.flow}}
			p.Embedded.CleanupInterval, p.Embedded.MaxInstances = tt.cleanup, tt.max
			f, err := NewForecast(p)
			if err != nil {
				t.Fatal(err)
			}
			r := f.Rooms
			if r == nil || r.PerSecond != tt.perSec || r.Live != tt.live || r.Over() != tt.over || r.Limit.Max != tt.max || !r.Embedded {
				t.Fatalf("rooms %+v, want %v/s, %d live of %d (over %v)", r, tt.perSec, tt.live, tt.max, tt.over)
			}
			if f.PeakClients != tt.peakCli || f.Sessions != tt.sessions {
				t.Errorf("peak clients %d, sessions %v; want %d, %v", f.PeakClients, f.Sessions, tt.peakCli, tt.sessions)
			}
			if got := r.String(); strings.Contains(got, "OVER") != tt.over {
				t.Errorf("rooms line %q: over %v", got, tt.over)
			}
		})
	}
}

// TestForecastTargetLimits: with a target the room limit is the reference
// server's defaults, said to be so, and no embedded server's files count.
func TestForecastTargetLimits(t *testing.T) {
	p, err := scenario.Load("../scenarios/join-storm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Target = "127.0.0.1:9"
	f, err := NewForecast(p)
	if err != nil {
		t.Fatal(err)
	}
	def, _ := refserver.DefaultConfig().Rooms("udp-lobby")
	if f.Rooms.Embedded || f.Rooms.Limit != def || f.Files.Server != 0 {
		t.Fatalf("rooms %+v files %+v", f.Rooms, f.Files)
	}
	if !strings.Contains(f.Rooms.String(), "the target's limit is unknown") {
		t.Errorf("rooms line %q", f.Rooms.String())
	}
}

// TestForecastVirtualFlows: a scenario on virtual flows is forecast to
// hold no socket a client, and only the hub's descriptors for them all.
func TestForecastVirtualFlows(t *testing.T) {
	p, err := scenario.Parse("v.yaml", []byte("protocol: udp-lobby\nflows_mode: virtual\nload: {model: closed, clients: 50000, duration: 5s}\nflows:\n  - name: poll\n    steps: [list_rooms]\n"))
	if err != nil {
		t.Fatal(err)
	}
	fc, err := NewForecast(p)
	if err != nil {
		t.Fatal(err)
	}
	fc.Files.Limit = 20000
	var b bytes.Buffer
	if err := fc.Write(&b); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{
		fmt.Sprintf("sockets none per client: virtual flows (a table row each; %d descriptors for all of them)", vflow.HubDescriptors()),
		fmt.Sprintf("(%d for 50000 clients on virtual flows +", vflow.HubDescriptors()),
		"within the open-files limit of 20000",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}
