package refserver

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// fakeCfg, fakeStats and fakeRun make a part that opens nothing: the
// machinery of this package (needs, start and stop order, flags, counters)
// is tested on them, apart from the protocols' parts.
type fakeCfg struct {
	Port  uint16
	Own   bool // brings its own service
	Delay time.Duration
}

type fakeStats struct {
	Hits uint64 `json:"hits"`
}

type fakeRun struct {
	name string
	port uint16
	got  any // the service it was given
	log  *[]string
}

func (r *fakeRun) Addr() netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), r.port)
}
func (r *fakeRun) Stats() any              { return &fakeStats{Hits: uint64(r.port)} }
func (r *fakeRun) Service(name string) any { return "service of " + r.name }
func (r *fakeRun) Server() any             { return r }
func (r *fakeRun) Close()                  { *r.log = append(*r.log, "close "+r.name) }

// fakePart is part name, of order, whose flag --NAME-port and --shared
// it declares.
func fakePart(name string, order int, log *[]string) *Part {
	return &Part{
		Name: name, Order: order,
		Supplied: func(cfg any, _ string) bool { return cfg.(*fakeCfg).Own },
		Default:  func() any { return &fakeCfg{Port: 1} },
		Loopback: func() any { return &fakeCfg{Port: 2} },
		Files:    func(any, int) int { return 1 },
		Off:      OffFlag{Name: "no-" + name, Usage: "do not run " + name, Old: []string{"old-no-" + name}},
		Flags: func(fs *Flags) func(FlagEnv) (any, error) {
			port := fs.Int(name+"-port", 1, "port of "+name)
			shared := fs.Duration("shared", time.Second, "shared, declared by "+name)
			return func(env FlagEnv) (any, error) {
				if *port < 0 {
					return nil, fmt.Errorf("--%s-port: must not be negative", name)
				}
				if !env.On {
					return nil, nil
				}
				return &fakeCfg{Port: uint16(*port), Delay: *shared}, nil
			}
		},
		Start: func(cfg any, _ *slog.Logger, services map[string]any) (Running, error) {
			*log = append(*log, "start "+name)
			r := &fakeRun{name: name, port: cfg.(*fakeCfg).Port, log: log}
			for _, v := range services {
				r.got = v
			}
			return r, nil
		},
		NewStats: func() any { return new(fakeStats) },
		Text: func(st any, w io.Writer, prefix string) error {
			_, err := fmt.Fprintf(w, "%shits %d\n", prefix, st.(*fakeStats).Hits)
			return err
		},
		Announce: func(_ any, addr netip.AddrPort) string { return name + " on " + addr.String() },
	}
}

// withParts runs the test with only ps registered.
func withParts(t *testing.T, ps ...*Part) {
	partsMu.Lock()
	saved := parts
	parts = map[string]*Part{}
	partsMu.Unlock()
	t.Cleanup(func() {
		partsMu.Lock()
		parts = saved
		partsMu.Unlock()
	})
	for _, p := range ps {
		Register(p)
	}
}

// TestNeeds: a part that needs what another provides starts after it
// (whatever their Order), is given the provider's service, stops before
// it, and keeps it in Only, unless its configuration brings its own.
func TestNeeds(t *testing.T) {
	var log []string
	user, provider := fakePart("user-x", 1, &log), fakePart("provider-x", 2, &log)
	user.Needs, provider.Provides = []string{"svc"}, []string{"svc"}
	withParts(t, user, provider)

	c, err := Loopback().Only("user-x")
	if err != nil || len(c.Parts) != 2 {
		t.Fatalf("Only(user-x) = %v, %v: want the provider kept", c.Parts, err)
	}
	s, err := Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Part("user-x").(*fakeRun).got; got != "service of provider-x" {
		t.Errorf("the user was given %v", got)
	}
	if got := strings.Join(s.Announce(), "; "); got != "provider-x on 127.0.0.1:2; user-x on 127.0.0.1:2" {
		t.Errorf("Announce = %q", got)
	}
	s.Close()
	if got := strings.Join(log, ", "); got != "start provider-x, start user-x, close user-x, close provider-x" {
		t.Errorf("order: %s", got)
	}

	c = Loopback()
	c.Parts["user-x"].(*fakeCfg).Own = true
	if c, _ = c.Only("user-x"); len(c.Parts) != 1 {
		t.Errorf("Only kept %v for a part bringing its own service", c.Parts)
	}
	delete(c.Parts, "provider-x")
	c.Parts["user-x"].(*fakeCfg).Own = false
	if _, err := Start(context.Background(), c); err == nil || !strings.Contains(err.Error(), "user-x needs an svc") {
		t.Errorf("Start without the provider: %v", err)
	}
	if _, err := Start(context.Background(), Config{Parts: map[string]any{"nope": &fakeCfg{}}}); err == nil {
		t.Error("Start with an unknown part")
	}
}

// TestServeFlags: each part's flags, a flag two parts declare read by
// both with the first's usage, the off flags and their old names, and the
// errors naming the flag; OffFlags turns off the parts not kept.
func TestServeFlags(t *testing.T) {
	var log []string
	withParts(t, fakePart("a-x", 1, &log), fakePart("b-x", 2, &log))
	for _, tc := range []struct {
		args []string
		want string // the configured parts, or the error
	}{
		{nil, "a-x:1/1s b-x:1/1s"},
		{[]string{"--shared", "5s", "--b-x-port", "7"}, "a-x:1/5s b-x:7/5s"},
		{[]string{"--no-a-x"}, "b-x:1/1s"},
		{[]string{"--old-no-b-x"}, "a-x:1/1s"},
		{[]string{"--no-a-x", "--no-b-x"}, "--no-a-x and --no-b-x: nothing left to serve"},
		{[]string{"--no-b-x", "--b-x-port", "-1"}, "--b-x-port: must not be negative"},
		{OffFlags(), "--no-a-x and --no-b-x: nothing left to serve"},
		{OffFlags("b-x"), "b-x:1/1s"},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		build := ServeFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		c, err := build()
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			var each []string
			for _, n := range PartNames() {
				if p := PartConfig[fakeCfg](c, n); p != nil {
					each = append(each, fmt.Sprintf("%s:%d/%v", n, p.Port, p.Delay))
				}
			}
			got = strings.Join(each, " ")
		}
		if got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
		if f := fs.Lookup("shared"); f == nil || f.Usage != "shared, declared by a-x" {
			t.Errorf("--shared: %+v", f)
		}
	}
}

// TestStatsJSON: the counters are keyed by part name ('_' for '-') in part
// order, read back into each part's type, an unknown part kept raw; Live
// adds the process's figures after them.
func TestStatsJSON(t *testing.T) {
	var log []string
	withParts(t, fakePart("b-x", 2, &log), fakePart("a-x", 1, &log))
	st := Stats{"b-x": &fakeStats{Hits: 2}, "a-x": &fakeStats{Hits: 1}}
	b, err := json.Marshal(st)
	if err != nil || string(b) != `{"a_x":{"hits":1},"b_x":{"hits":2}}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var back Stats
	if err := json.Unmarshal([]byte(`{"b_x":{"hits":2},"other":{"n":1}}`), &back); err != nil {
		t.Fatal(err)
	}
	if h := PartStats[fakeStats](back, "b-x"); h == nil || h.Hits != 2 || back["other"] == nil {
		t.Errorf("Unmarshal = %#v", back)
	}
	var text strings.Builder
	if err := st.WriteText(&text); err != nil || text.String() != "a-x.hits 1\nb-x.hits 2\n" {
		t.Errorf("WriteText = %q, %v", text.String(), err)
	}
	live := Live{Stats: st, Goroutines: 3, HeapAlloc: 4, HeapSys: 5}
	b, err = json.Marshal(live)
	if err != nil || string(b) != `{"a_x":{"hits":1},"b_x":{"hits":2},"goroutines":3,"heap_alloc_bytes":4,"heap_sys_bytes":5}` {
		t.Fatalf("Marshal(Live) = %s, %v", b, err)
	}
	var lb Live
	if err := json.Unmarshal(b, &lb); err != nil || lb.Goroutines != 3 || lb.HeapSys != 5 || PartStats[fakeStats](lb.Stats, "a-x").Hits != 1 {
		t.Errorf("Unmarshal(Live) = %+v, %v", lb, err)
	}
	if b, _ := json.Marshal(Live{Stats: Stats{}, Goroutines: 1}); string(b) != `{"goroutines":1,"heap_alloc_bytes":0,"heap_sys_bytes":0}` {
		t.Errorf("Marshal(Live without parts) = %s", b)
	}
}
