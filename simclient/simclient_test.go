package simclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
)

func testPlan(t testing.TB, flows string) *scenario.Plan {
	t.Helper()
	p, err := scenario.Parse("t.yaml", []byte("protocol: udp-lobby\nload: {clients: 1, duration: 1s}\nflows:\n"+flows))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSweeperWakesOnlyExpired, on synctest's clock: a waker armed 5 ms
// ahead wakes once, not before its instant and within a 1 ms tick of it;
// one armed an hour ahead and one removed never wake.
func TestSweeperWakesOnlyExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sw := NewSweeper(time.Millisecond)
		defer sw.Stop()
		var woke [3]atomic.Int32
		ws := make([]*Waker, 3)
		for i := range ws {
			ws[i] = sw.Add(wakeFunc(func() { woke[i].Add(1) }))
		}
		ws[0].Arm(time.Now().Add(5 * time.Millisecond))
		ws[1].Arm(time.Now().Add(time.Hour))
		ws[2].Arm(time.Now().Add(5 * time.Millisecond))
		sw.Remove(ws[2])
		time.Sleep(4 * time.Millisecond)
		synctest.Wait()
		if n := woke[0].Load(); n != 0 {
			t.Fatalf("woke %d times 1 ms before its instant", n)
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if n := woke[0].Load(); n != 1 {
			t.Fatalf("woke %d times by a tick past its instant, want 1", n)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if woke[0].Load() != 1 || woke[1].Load() != 0 || woke[2].Load() != 0 {
			t.Fatalf("wakes %d %d %d, want 1 0 0 (armed once, far future, removed)", woke[0].Load(), woke[1].Load(), woke[2].Load())
		}
		if ws[0].Armed() {
			t.Fatal("a fired waker stays armed")
		}
		if got := sw.Wakes.Load(); got != 1 {
			t.Errorf("Wakes = %d, want 1", got)
		}
	})
}

// TestSweeperListsOnlyArmed, on synctest's clock: a scan visits only the
// wakers armed lately. Wakers never armed are not listed; one disarmed
// for idleScans scans leaves the list, and its next Arm lists it again
// and still wakes it, once.
func TestSweeperListsOnlyArmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sw := NewSweeper(time.Millisecond)
		defer sw.Stop()
		listed := func() int {
			sw.mu.Lock()
			defer sw.mu.Unlock()
			return len(sw.ws)
		}
		for range 1000 {
			sw.Add(wakeFunc(func() {}))
		}
		var woke atomic.Int32
		w := sw.Add(wakeFunc(func() { woke.Add(1) }))
		if n := listed(); n != 0 {
			t.Fatalf("%d wakers listed before any was armed", n)
		}
		w.Arm(time.Now().Add(time.Hour))
		if n := listed(); n != 1 {
			t.Fatalf("%d listed after one Arm, want 1", n)
		}
		w.Disarm()
		time.Sleep((idleScans + 2) * time.Millisecond)
		synctest.Wait()
		if n := listed(); n != 0 {
			t.Fatalf("%d listed after %d disarmed scans, want 0", n, idleScans+2)
		}
		w.Arm(time.Now().Add(3 * time.Millisecond))
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if n := woke.Load(); n != 1 {
			t.Fatalf("woke %d times after being listed again, want 1", n)
		}
	})
}

// TestSweeperDropKeepsArmed: a scan that found a waker disarmed and
// drops it, while an Arm lands between its look and the drop (the Arm saw
// the waker listed, so it did not list it), lists it back: the armed
// waker is not lost. The interleaving is played step by step.
func TestSweeperDropKeepsArmed(t *testing.T) {
	sw := &Sweeper{} // no loop: the test scans
	w := sw.Add(wakeFunc(func() {}))
	w.Arm(time.Now().Add(time.Hour)) // listed
	w.Disarm()
	// The scan's look (at == 0), then the racing Arm's store: it reads
	// listed true and leaves the listing to the scan.
	w.at.Store(time.Now().Add(time.Hour).UnixNano())
	sw.mu.Lock()
	sw.drop(w)
	n := len(sw.ws)
	sw.mu.Unlock()
	if n != 1 || !w.listed.Load() {
		t.Fatalf("after the drop: %d listed, listed %v; want the armed waker listed", n, w.listed.Load())
	}
}

// TestSweeperArmRacesScan, on synctest's clock: wakers armed and disarmed
// by many goroutines while the sweeper scans (and drops the idle ones)
// all wake once armed for good; under -race, the detector checks the
// listing's accesses.
func TestSweeperArmRacesScan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sw := NewSweeper(100 * time.Microsecond)
		defer sw.Stop()
		const n = 64
		var woke [n]atomic.Int32
		var wg sync.WaitGroup
		for i := range n {
			w := sw.Add(wakeFunc(func() { woke[i].Add(1) }))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 2000 {
					w.Arm(time.Now().Add(time.Hour))
					w.Disarm()
					if k%7 == 0 {
						// Disarmed for 0-2 ms: at times past idleScans
						// ticks, dropped, and listed again by the next Arm.
						time.Sleep(time.Duration(k%3) * time.Millisecond)
					}
				}
				w.Arm(time.Now())
			}()
		}
		wg.Wait()
		time.Sleep(time.Millisecond) // a few ticks
		synctest.Wait()
		for i := range woke {
			if woke[i].Load() != 1 {
				t.Errorf("waker %d woke %d times, want 1", i, woke[i].Load())
			}
		}
	})
}

func TestGroupsFollowArrivalOrder(t *testing.T) {
	p := testPlan(t, `  - name: a
    group_size: 3
    steps: [create_room, {join: created}]
  - name: b
    steps: [list_rooms]
`)
	sh, err := NewShared(p, netip.AddrPort{}, metrics.NewCollector(time.Now()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	var ms []Member
	for range 7 {
		ms = append(ms, sh.Join(0))
	}
	for i, m := range ms {
		if m.Index != i%3 || m.Group.ID != int64(i/3) {
			t.Errorf("session %d: member %d of group %d, want %d of %d", i, m.Index, m.Group.ID, i%3, i/3)
		}
	}
	if ms[0].Group != ms[2].Group || ms[2].Group == ms[3].Group {
		t.Error("groups not shared as expected")
	}
	b1, b2 := sh.Join(1), sh.Join(1)
	if b1.Index != 0 || b1.Group.Size != 1 || b2.Group.ID != 1 || b1.Group == b2.Group {
		t.Errorf("flow without groups: %+v, %+v", b1, b2)
	}
	if n := len(sh.groups[1].live); n != 0 {
		t.Errorf("%d groups of one registered, want none (no other member looks them up)", n)
	}
	if err := b1.Group.Arrive(context.Background(), 0, 1); err != nil {
		t.Errorf("a group of one's barrier: %v", err)
	}
	sh.Leave(b1)
	sh.Leave(b2)
	for _, m := range ms[:3] {
		sh.Leave(m)
	}
	if g := sh.Join(0); g.Group.ID != 2 || g.Index != 1 {
		t.Errorf("8th session: %+v", g)
	}
}

// TestRejoin: a client's next session recycles its group of one while it
// is as Join made it, numbered on in arrival order, and gets a new group
// otherwise (a room published, a barrier passed, a flow with groups).
func TestRejoin(t *testing.T) {
	p := testPlan(t, `  - name: a
    group_size: 2
    steps: [create_room, {join: created}]
  - name: b
    steps: [list_rooms]
`)
	sh, err := NewShared(p, netip.AddrPort{}, metrics.NewCollector(time.Now()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	m0 := sh.Join(1)
	sh.Leave(m0)
	m1 := sh.Rejoin(1, m0)
	if m1.Group != m0.Group || m1.Group.ID != 1 || m1.Index != 0 || m1.Group.Size != 1 {
		t.Errorf("a fresh group of one: %+v (id %d), want the same group as id 1", m1, m1.Group.ID)
	}
	tests := []struct {
		name string
		use  func(g *Group)
	}{
		{"room published", func(g *Group) { g.SetRoom(Room{ID: 7}) }},
		{"room failed", func(g *Group) { g.FailRoom(nil) }},
		{"barrier passed", func(g *Group) { _ = g.Arrive(context.Background(), 0, 1) }},
		{"hash announced", func(g *Group) { g.SetHash(1, 0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := sh.Join(1)
			tc.use(m.Group)
			sh.Leave(m)
			next := sh.Rejoin(1, m)
			if next.Group == m.Group {
				t.Error("a used group of one was recycled")
			}
			if _, ok := next.Group.RoomNow(); ok || next.Group.barriers != nil || next.Group.hashes != nil {
				t.Errorf("the next session's group is not new: %+v", next.Group)
			}
		})
	}
	a := sh.Join(0)
	if next := sh.Rejoin(0, a); next.Index != 1 || next.Group != a.Group || next.Group.Size != 2 {
		t.Errorf("a flow with groups: %+v after %+v, want Join's next place (member 1 of the same group)", next, a)
	}
}

// TestReseedThink: a think-time source re-seeded for client id yields what
// ThinkRand(id) yields, whatever it yielded before.
func TestReseedThink(t *testing.T) {
	p := testPlan(t, "  - steps: [list_rooms]\n")
	p.Seed = 42
	sh, err := NewShared(p, netip.AddrPort{}, metrics.NewCollector(time.Now()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	src := new(rand.PCG)
	r := rand.New(src)
	for _, id := range []int{3, 1000, 3} {
		sh.ReseedThink(src, id)
		want := sh.ThinkRand(id)
		for k := range 5 {
			if g, w := r.Uint64(), want.Uint64(); g != w {
				t.Fatalf("id %d, draw %d: re-seeded %x, ThinkRand %x", id, k, g, w)
			}
		}
	}
	if sh.ThinkRand(3).Uint64() == sh.ThinkRand(4).Uint64() {
		t.Error("two clients draw the same think times")
	}
}

func TestGroupRoomAndBarrier(t *testing.T) {
	g := newGroup(0, 0, 3)
	ctx := context.Background()
	done := make(chan Room)
	go func() {
		r, err := g.WaitRoom(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	g.SetRoom(Room{ID: 7, Port: 9000})
	g.FailRoom(errors.New("late")) // ignored: the room exists
	if r := <-done; r.ID != 7 {
		t.Fatalf("room %+v", r)
	}
	g2 := newGroup(0, 1, 2)
	g2.FailRoom(errors.New("creator failed"))
	if _, err := g2.WaitRoom(ctx); !errors.Is(err, ErrNoRoom) {
		t.Fatalf("err %v, want ErrNoRoom", err)
	}

	var wg sync.WaitGroup
	var passed atomic.Int32
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g.Arrive(ctx, 4, 3) == nil {
				passed.Add(1)
			}
		}()
	}
	wg.Wait()
	if passed.Load() != 3 {
		t.Fatalf("%d passed the barrier, want 3", passed.Load())
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := g.Arrive(tctx, 5, 3); err == nil {
		t.Fatal("a barrier of 3 opened for 1")
	}
}

func TestProbeSchedule(t *testing.T) {
	tests := []struct {
		name     string
		from, to float64
		over     time.Duration
		total    int
	}{
		{"ramp 0 to 100/s over 10s", 0, 100, 10 * time.Second, 500},
		{"ramp 20 to 200/s over 2s", 20, 200, 2 * time.Second, 220},
	}
	for _, tc := range tests {
		p := NewProbe(scenario.RateProbeSpec{From: tc.from, To: tc.to, Over: tc.over, Loss: 0.01}, time.Now())
		if p.Total() != tc.total {
			t.Errorf("%s: total %d, want %d", tc.name, p.Total(), tc.total)
		}
		prev := time.Duration(-1)
		for k := 0; k < p.Total(); k++ {
			at := p.At(k)
			if at < prev || at > tc.over {
				t.Fatalf("%s: send %d at %s after %s", tc.name, k, at, prev)
			}
			prev = at
		}
	}
	// 0→100/s over 10s: the integral reaches k at sqrt(k/5) s.
	p := NewProbe(scenario.RateProbeSpec{From: 0, To: 100, Over: 10 * time.Second}, time.Now())
	if got, want := p.At(125).Seconds(), math.Sqrt(125.0/5); math.Abs(got-want) > 1e-6 {
		t.Errorf("At(125) = %.6fs, want %.6fs", got, want)
	}
}

func TestProbeLimit(t *testing.T) {
	p := NewProbe(scenario.RateProbeSpec{From: 10, To: 100, Over: 3 * time.Second, Loss: 0.05}, time.Now())
	add := func(w int, n, ok int) {
		for i := 0; i < n; i++ {
			o := Answered
			if i >= ok {
				o = Lost
			}
			p.Outcome(time.Duration(w)*time.Second+time.Millisecond, o)
		}
	}
	add(0, 30, 30)
	add(1, 60, 58) // 3.3% loss: under 5%
	add(2, 90, 50) // 44% loss: the limit
	limited, at, accepted, w := p.Limit()
	if !limited || w != 2 || accepted != 58 || at < 80 || at > 90 {
		t.Fatalf("limit %v at %.1f accepted %.0f window %d; want window 2, accepted 58/s", limited, at, accepted, w)
	}
	f := p.Finding("probe", "127.0.0.1:1", OthersEffect{BeforeUS: 10, DuringUS: 20})
	if f.ObservedLimitPerSec != 58 || f.Sent != 180 || f.Accepted != 138 || f.Limited != 42 || f.OtherSourcesP99AfterUS != 20 {
		t.Fatalf("%+v", f)
	}
}

func TestOthersP99(t *testing.T) {
	for _, us := range []int64{0, 1, 7, 8, 9, 15, 16, 100, 1000, 123456, 1 << 30} {
		b := bucketOf(us)
		if up := bucketUpper(b); up < us || (b > 0 && bucketUpper(b-1) >= us) {
			t.Errorf("%dµs in bucket %d (upper %d, previous upper %d)", us, b, up, bucketUpper(b-1))
		}
	}
	p := testPlan(t, "  - steps: [list_rooms, {rate_probe: {from: 10/s, to: 100/s, over: 2s}}]\n")
	c := metrics.NewCollector(time.Now())
	sh, err := NewShared(p, netip.AddrPort{}, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	now := c.Start().Add(1500 * time.Millisecond)
	for i := 0; i < 1000; i++ {
		d := 100 * time.Microsecond
		if i >= 980 {
			d = 50 * time.Millisecond
		}
		sh.Observe(i, now, d, true)
	}
	sh.Observe(1, now, 0, false)
	p99, errs := sh.OthersP99(now.Add(-time.Second), now)
	if p99 < 45000 || p99 > 55000 || errs != 1 {
		t.Fatalf("p99 %dµs errors %d, want ~50000µs and 1", p99, errs)
	}
	if p99, _ := sh.OthersP99(now.Add(10*time.Second), now.Add(11*time.Second)); p99 != 0 {
		t.Fatalf("an empty range has p99 %d", p99)
	}
}

func TestRoomTable(t *testing.T) {
	rt := NewRoomTable()
	if _, known := rt.Observe(5, 9000); known {
		t.Fatal("new room reported known")
	}
	if prev, known := rt.Observe(5, 9001); !known || prev != 9000 {
		t.Fatalf("prev %d known %v", prev, known)
	}
	rt.Replace(5, 9002)
	if p, _ := rt.Port(5); p != 9002 || rt.Len() != 1 {
		t.Fatalf("port %d len %d", p, rt.Len())
	}
}

func TestRegistry(t *testing.T) {
	// The registries are process-wide and keep what is registered: a name
	// of this run's own, so -count=N works.
	name := scenario.ProtocolName(fmt.Sprintf("test-proto-%d", time.Now().UnixNano()))
	p := Client{
		Name: name,
		Reach: func(context.Context, netip.AddrPort, scenario.Options, time.Duration) (scenario.Options, error) {
			return nil, nil
		},
		New:           func(*Shared, int, *scenario.Flow, netip.Addr) (Session, error) { return nil, nil },
		EmbeddedParts: []string{"udp"},
	}
	Register(p)
	if _, ok := Lookup(string(name)); !ok {
		t.Fatal("not found")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering twice did not panic")
		}
	}()
	Register(p)
}

func TestSeriesIntended(t *testing.T) {
	first := time.Unix(1000, 0)
	prev := first.Add(37 * time.Millisecond) // ping k-1 answered
	for _, tc := range []struct {
		k        int
		interval time.Duration
		want     time.Time
	}{
		{0, 0, first},
		{0, 100 * time.Millisecond, first},
		{1, 0, prev}, // closed loop: due when k-1 completed
		{5, 0, prev}, // not first + anything
		{1, 100 * time.Millisecond, first.Add(100 * time.Millisecond)}, // open schedule
		{3, 10 * time.Millisecond, first.Add(30 * time.Millisecond)},   // earlier than prev: the lateness counts
	} {
		if got := SeriesIntended(first, prev, tc.k, tc.interval); !got.Equal(tc.want) {
			t.Errorf("SeriesIntended(k=%d, interval=%v) = %v, want %v", tc.k, tc.interval, got.Sub(first), tc.want.Sub(first))
		}
	}
}

func TestStop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if got := StopContext(ctx); got != ctx {
		t.Fatal("StopContext without WithStop must return ctx")
	}
	stop, fire := context.WithCancel(ctx)
	sctx := WithStop(ctx, stop)
	if got := StopContext(sctx); got != stop {
		t.Fatal("StopContext did not return the stop context")
	}
	real := &StepError{Reason: "timeout", Err: errors.New("x")}
	cut := &StepError{Reason: ReasonCancelled, Err: context.Canceled}
	if got := Stopped(sctx, stop, real); got != real {
		t.Errorf("before stop: %v, want the step error", got)
	}
	fire()
	for _, tc := range []struct {
		err, want error
	}{
		{nil, ErrStopped},
		{cut, ErrStopped},
		{real, real}, // a real failure stays one after the stop
	} {
		if got := Stopped(sctx, stop, tc.err); got != tc.want {
			t.Errorf("after stop, Stopped(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	cancel()
	if got := Stopped(sctx, stop, cut); got != context.Canceled {
		t.Errorf("after cancel: %v, want context.Canceled", got)
	}
}

// TestPreciseNote: the embedded server's cost is said only when the run
// embeds it, and only for the protocol --precise changes.
func TestPreciseNote(t *testing.T) {
	const costs = "embedded server shares this process"
	for _, tc := range []struct {
		proto    scenario.ProtocolName
		embedded bool
		want     string
		cost     bool
	}{
		{udpwire.ProtocolName, false, "polls its socket without parking", false},
		{udpwire.ProtocolName, true, "polls its socket without parking", true},
		{tcpwire.ProtocolName, true, "affects udp-lobby clients only", false},
		{levwire.ProtocolName, false, "affects udp-lobby clients only", false},
	} {
		got := PreciseNote(tc.proto, tc.embedded)
		if !strings.Contains(got, tc.want) || strings.Contains(got, costs) != tc.cost {
			t.Errorf("PreciseNote(%s, %v) = %q: want %q, embedded cost said: %v", tc.proto, tc.embedded, got, tc.want, tc.cost)
		}
	}
}

// The others tracker is kept for a run with a rate probe, which reads it,
// and for no other: without one, an outcome observed is counted nowhere.
func TestOthersOnlyWithAProbe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flows string
		want  bool
	}{
		{"no probe", "  - steps: [list_rooms]\n", false},
		{"a probe", "  - steps: [list_rooms]\n  - steps: [{rate_probe: {from: 10/s, to: 100/s, over: 2s}}]\n", true},
	} {
		c := metrics.NewCollector(time.Now())
		sh, err := NewShared(testPlan(t, tc.flows), netip.AddrPort{}, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		now := c.Start().Add(time.Second)
		sh.Observe(1, now, time.Millisecond, true)
		p99, _ := sh.OthersP99(now.Add(-time.Second), now)
		if got := sh.others != nil; got != tc.want || (p99 > 0) != tc.want {
			t.Errorf("%s: tracker kept %v (p99 %dµs), want %v", tc.name, got, p99, tc.want)
		}
		sh.Close()
	}
}

// wakeFunc is a Deadliner that calls itself: a test's waker.
type wakeFunc func()

func (f wakeFunc) SetReadDeadline(time.Time) error { f(); return nil }

// TestWakerSize: a waker, one per client socket, fits the allocator's
// 48-byte class (with a closure to wake, it took 64 and 32 more).
func TestWakerSize(t *testing.T) {
	if n := unsafe.Sizeof(Waker{}); n > 48 {
		t.Errorf("a Waker is %d bytes, over the 48-byte size class", n)
	}
}
