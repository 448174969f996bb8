package engine

import (
	"context"
	"time"

	"github.com/lobbybench/lobbybench/internal/precise"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Preparation of open-model sessions ahead of their arrival.
const (
	// PrepareLead is how long before its due time an arrival's session is
	// made (socket bound, TCP connection dialed: simclient.Preparer): long
	// enough that making it never delays the send, short enough that few
	// sockets sit idle and no server takes a prepared connection, silent
	// until its due time, for an idle client.
	PrepareLead = 3 * time.Millisecond
	// MaxPrepared bounds the sessions made and waiting for their due time
	// (about PrepareLead × rate of them; 60 at 20,000/s).
	MaxPrepared = 1024
)

// prepared is an arrival whose session is made and waits for its due time.
type prepared struct {
	st   Start
	sess Session
}

// arrivals walks the open schedule: every arrival's Start, in order,
// skipping those another shard owns. Every shard draws every arrival's
// time (sched) and flow pick, its own and the others', so the sequences
// stay identical across shards.
type arrivals struct {
	x     *Execution
	sched *scenario.Schedule
	pick  interface{ Float64() float64 }
	seq   []int
	k     int
}

// next returns the next arrival this shard owns; ok is false when the
// schedule is over.
func (a *arrivals) next() (st Start, ok bool) {
	plan := a.x.o.Plan
	for ; ; a.k++ {
		k := a.k
		due, more := a.sched.Next()
		if !more {
			return Start{}, false
		}
		f := plan.PickFlow(a.pick.Float64())
		s := a.seq[f]
		a.seq[f]++
		if !a.x.o.Shard.Owns(s / max(plan.Flows[f].GroupSize, 1)) {
			continue
		}
		a.k++
		return Start{ID: k, Slot: k, Flow: f, Seq: s, Source: a.x.groupSource(s, plan.Flows[f].GroupSize), Intended: a.x.start.Add(due)}, true
	}
}

// runOpen is the open-model executor (k6's ramping-arrival-rate): arrival
// k is due when the integral of the profile's rate reaches k, or at the
// k-th point of a Poisson process of that rate (scenario.Schedule),
// whatever the server's speed. An arrival that finds
// max_clients sessions live (prepared ones included), or that the
// generator reaches more than MaxLateness after its due time, is counted
// as a dropped start and not started: a saturated generator never passes
// silently, and the schedule stays honest instead of bursting to catch up.
//
// Ready before due: each arrival's session is made PrepareLead before its
// due time (at most MaxPrepared waiting), so the harness's setup (socket,
// bind, TCP dial, group place) never sits between the intended time and the send;
// the scheduler then waits precisely (precise.Until) until the due time and plays the session
// itself, handing the schedule on (openSched), so the first request goes
// out at once. What is left of the lateness is measured per step as send
// lag. Sessions are made in arrival order, as group places require
// (NewSession).
//
// Every shard walks the same global schedule (Poisson gaps from
// scenario.ArrivalStream of the seed) and draws the same flow picks
// (stream 0 of the seed), starting only the arrivals it owns (see Shard).
func (x *Execution) runOpen(ctx context.Context) {
	plan := x.o.Plan
	o := &openSched{x: x, arr: arrivals{x: x, sched: plan.Load.Schedule(plan.Seed), pick: scenario.NewRand(plan.Seed, 0), seq: make([]int, len(plan.Flows))},
		maxActive: int64(x.o.Shard.Part(plan.Load.MaxClients)), done: make(chan struct{})}
	o.pending, o.more = o.arr.next()
	if joined := x.joinLate(); !joined.IsZero() {
		// Joined late for the run's start instant: the arrivals due
		// before now are missed, each counted as a dropped start of its
		// own cause; the rest keep their due times (never shifted).
		for o.more && o.pending.Intended.Before(joined) {
			x.Stats.DroppedLateStart.Add(1)
			if x.o.OnDropped != nil {
				x.o.OnDropped(o.pending, DropLateStart)
			}
			o.pending, o.more = o.arr.next()
		}
		if x.o.OnLateStart != nil {
			x.o.OnLateStart(time.Duration(x.Stats.LateStart.Load()), x.Stats.DroppedLateStart.Load())
		}
	}
	go o.loop(ctx)
	<-o.done
	// The schedule ends at its last arrival, the load at the end of its
	// stages: the run lasts as long (its length, and every rate made of
	// it, is the load's), however few arrivals it had. A shard's share of
	// 2/s in a 1 s capacity step is one arrival, at 0: its run lasted
	// 0.5 ms, and its CPU read as 107 % of 2 cores (harness-bound).
	if ctx.Err() == nil {
		var t *time.Timer
		x.wait(ctx, &t, x.start.Add(plan.Load.Duration))
		if t != nil {
			t.Stop()
		}
	}
}

// openSched is the open model's schedule (runOpen), run by one goroutine
// at a time: the baton. At an arrival's due time the goroutine holding it
// plays the session itself and hands the schedule to a new goroutine
// (when the next arrival is not due within YieldSpare), rather than
// starting the session on a new goroutine: a new goroutine waits for the
// runtime to run it (whatever is runnable or due first: timers, a GC
// worker), which made the send 2-4 µs late at the median and 80-130 µs
// at p99 at 2,000 sessions/s against a server answering in 20 ms; the
// schedule has PrepareLead of slack for that wait, the send has none.
type openSched struct {
	x         *Execution
	arr       arrivals
	maxActive int64
	timer     *time.Timer
	queue     []prepared // in due order
	pending   Start
	more      bool
	done      chan struct{} // closed by the last holder
}

// loop runs the schedule until it ends, or until this goroutine hands it
// on to play an arrival's session.
func (o *openSched) loop(ctx context.Context) {
	x := o.x
	for ctx.Err() == nil {
		// Make every session due within PrepareLead.
		for o.more && len(o.queue) < MaxPrepared && time.Until(o.pending.Intended) <= PrepareLead {
			if p, ok := x.prepare(o.pending, o.maxActive); ok {
				o.queue = append(o.queue, p)
			}
			o.pending, o.more = o.arr.next()
		}
		if len(o.queue) == 0 {
			if !o.more {
				break
			}
			// Preparing needs no precision: the plain timer, no fine phase.
			if precise.OnTimer(ctx, &o.timer, o.pending.Intended.Add(-PrepareLead)) != nil {
				break
			}
			continue
		}
		head := o.queue[0]
		// Wake to prepare the next arrival first only if that cannot make
		// the head late (a coarse wake may overshoot by Coarse).
		if o.more && len(o.queue) < MaxPrepared {
			if at := o.pending.Intended.Add(-PrepareLead); at.Before(head.st.Intended.Add(-2 * precise.Coarse)) {
				if precise.OnTimer(ctx, &o.timer, at) != nil {
					break
				}
				continue
			}
		}
		wait := x.wait
		if x.o.HoldP && !(len(o.queue) > 1 && o.queue[1].st.Intended.Sub(head.st.Intended) < YieldSpare) {
			// The last precise.Hold of the wait keeps the P: not in a
			// dense schedule (thousands of arrivals a second), whose
			// next wait would follow at once, so holding the P for
			// every one would hold it for good.
			wait = x.waitHeld
		}
		if wait(ctx, &o.timer, head.st.Intended) != nil {
			break
		}
		o.queue = o.queue[1:]
		x.countPlayed()
		x.wg.Add(1)
		if spare(o.queue) {
			// Play the session here, now; a new goroutine goes on with
			// the schedule (the next arrival is not due before it runs).
			go o.loop(ctx)
			o.play(&head)
			return
		}
		// The next arrival is due soon: keep the schedule, and start the
		// session on a goroutine of its own.
		go o.play(&head)
	}
	for _, p := range o.queue {
		x.unprepared(p)
	}
	o.queue = nil
	close(o.done)
}

// countPlayed counts a session played now in its second of the schedule
// (Execution.PlayedPerSecond); called by the goroutine holding the
// schedule, before it hands it on.
func (x *Execution) countPlayed() {
	sec := int(time.Since(x.start) / time.Second)
	if sec < 0 {
		sec = 0
	}
	for len(x.perSecond) <= sec {
		x.perSecond = append(x.perSecond, 0)
	}
	x.perSecond[sec]++
}

// play runs a prepared arrival's session (never suspended: no
// Options.Suspend in the open model).
func (o *openSched) play(p *prepared) {
	x := o.x
	defer x.wg.Done()
	defer x.Stats.Active.Add(-1)
	x.runSession(&p.st, p.sess, false)
}

// YieldSpare is how far ahead the next prepared arrival must be due for
// the goroutine holding the open schedule to play the due session itself
// and hand the schedule to a new goroutine (openSched): that goroutine
// may wait tens of µs for a P, which preparing later arrivals can afford
// (PrepareLead of slack) and the next send cannot.
const YieldSpare = 200 * time.Microsecond

// spare reports whether the head of queue (the next prepared arrival) is
// due more than YieldSpare from now, or there is none.
func spare(queue []prepared) bool {
	return len(queue) == 0 || time.Until(queue[0].st.Intended) > YieldSpare
}

// prepare applies the drop rules to arrival st and makes its session.
func (x *Execution) prepare(st Start, maxActive int64) (prepared, bool) {
	switch {
	case time.Since(st.Intended) > x.o.MaxLateness:
		x.Stats.DroppedLate.Add(1)
		if x.o.OnDropped != nil {
			x.o.OnDropped(st, DropLate)
		}
	case x.Stats.Active.Load() >= maxActive:
		x.Stats.DroppedNoSlot.Add(1)
		if x.o.OnDropped != nil {
			x.o.OnDropped(st, DropNoSlot)
		}
	default:
		x.addActive()
		sess := x.newSession(&st)
		if sess == nil {
			x.Stats.Active.Add(-1)
			return prepared{}, false
		}
		// TCP: dial now (in the background), so the connect step at the
		// due time only sends CONNECT_REQ.
		simclient.Prepare(sess)
		return prepared{st, sess}, true
	}
	return prepared{}, false
}

// unprepared releases a session made for an arrival the run ended before:
// it was started (counted) and is cut by the end of the run, as a session
// that was running would be.
func (x *Execution) unprepared(p prepared) {
	p.sess.Close()
	x.Stats.Aborted.Add(1)
	x.Stats.Active.Add(-1)
	if x.o.OnSessionEnd != nil {
		x.o.OnSessionEnd(p.st, nil, true)
	}
}
