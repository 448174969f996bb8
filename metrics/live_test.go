package metrics

import (
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/result"
)

// TestLiveKeysMatchSnapshot checks the live figures are exactly Snapshot's:
// same counts, reasons and histogram percentiles, keys in registration
// order, unused keys left out.
func TestLiveKeysMatchSnapshot(t *testing.T) {
	c := NewCollector(t0)
	list, join := c.Step("list_rooms"), c.Step("join")
	c.Step("never")
	msg := c.Message("JoinReply")
	r1, r2 := c.NewRecorder(), c.NewRecorder()
	for i := range 500 {
		d := time.Duration(100+i*7) * time.Microsecond
		r1.Record(list, t0, t0.Add(d/3), at(d))
		r2.Record(join, t0, t0, at(2*d))
		r2.Record(msg, t0, t0, at(d))
	}
	r1.Fail(join, result.ReasonTimeout, at(time.Second))
	r2.Fail(join, result.ReasonJoinDeny, at(time.Second))
	r1.Retry(join)
	r2.Dropped(list)
	r1.Violation("U-CRC", at(time.Second), []byte{1}, nil, "")
	r2.Violation("U-CRC", at(time.Second), []byte{1}, nil, "")
	r2.Violation("U-LEN", at(time.Second), []byte{1}, nil, "")

	live := c.LiveKeys()
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]result.Series(nil), run.Steps...), run.Messages...)
	if len(live) != len(want) {
		t.Fatalf("%d live keys, want %d", len(live), len(want))
	}
	for i, lk := range live {
		s := want[i]
		if lk.Name != s.Name || lk.Successes != s.Successes || lk.Failures != s.Failures || lk.Retries != s.Retries || lk.Dropped != s.Dropped {
			t.Errorf("key %d: %+v, want %+v", i, lk, s)
		}
		for reason, n := range s.FailuresByReason {
			if lk.FailuresByReason[reason] != n {
				t.Errorf("%s %s: %d, want %d", s.Name, reason, lk.FailuresByReason[reason], n)
			}
		}
		for _, p := range []struct {
			got  result.Latency
			want result.Latency
		}{{mustLatency(t, lk.Corrected), s.Latency}, {mustLatency(t, lk.Uncorrected), s.Uncorrected}, {mustLatency(t, lk.SendLag), s.SendLag}} {
			if p.got != p.want {
				t.Errorf("%s: latency %+v, want %+v", s.Name, p.got, p.want)
			}
		}
	}
	if live[2].Kind != KindMessage || live[0].Kind != KindStep {
		t.Errorf("kinds %v %v", live[0].Kind, live[2].Kind)
	}
	v := c.LiveViolations()
	if len(v) != 2 || v[0] != (RuleCount{"U-CRC", 2}) || v[1] != (RuleCount{"U-LEN", 1}) {
		t.Errorf("violations %+v", v)
	}
}

func mustLatency(t *testing.T, h *hdrhistogram.Histogram) result.Latency {
	t.Helper()
	l, err := result.NewLatency(h)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLiveKeysConcurrent reads live figures while workers record (run
// with -race): counts only grow and end equal to what was recorded.
func TestLiveKeysConcurrent(t *testing.T) {
	c := NewCollector(t0)
	k := c.Step("join")
	const workers, each = 4, 2000
	var wg sync.WaitGroup
	for range workers {
		r := c.NewRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r.Record(k, t0, t0, at(time.Duration(i)*time.Microsecond))
				if i%100 == 0 {
					r.Violation("U-CRC", t0, nil, nil, "")
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var last int64
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		for _, lk := range c.LiveKeys() {
			if lk.Successes < last || lk.Corrected.TotalCount() != lk.Successes {
				t.Fatalf("successes %d after %d, histogram %d", lk.Successes, last, lk.Corrected.TotalCount())
			}
			last = lk.Successes
		}
		c.LiveViolations()
	}
	lk := c.LiveKeys()
	if len(lk) != 1 || lk[0].Successes != workers*each {
		t.Fatalf("final %+v", lk)
	}
}
