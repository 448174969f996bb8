package owned

import (
	"testing"
	"time"
)

// TestRebase: the baseline drops the start-up's samples, makes its
// reading the first sample at its offset from the new epoch, and CPU
// counts from it, also across a later restart.
func TestRebase(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	a := newAccount("srv", t0)
	a.started(0, 100)
	a.sample(0, reading{user: 300 * ms, system: 100 * ms, rss: 90 << 20, threads: 4, fds: 7}, t0.Add(time.Second))
	epoch := t0.Add(2 * time.Second)
	a.rebase(epoch, 0, reading{user: 400 * ms, system: 100 * ms, rss: 30 << 20, threads: 5, fds: 8}, true, epoch.Add(ms))
	a.sample(0, reading{user: 700 * ms, system: 200 * ms, rss: 40 << 20, threads: 5, fds: 9}, epoch.Add(time.Second))
	a.started(1, 101) // a restart: its CPU counts whole
	a.sample(1, reading{user: 50 * ms, rss: 20 << 20, threads: 3, fds: 5}, epoch.Add(2*time.Second))
	tp := a.snapshot()
	tests := []struct {
		name      string
		got, want any
	}{
		{"samples", len(tp.Samples), 3},
		{"first offset", tp.Samples[0].OffsetNS, ms},
		{"restart marked", tp.Samples[2].Restarted, true},
		{"first not marked", tp.Samples[0].Restarted, false},
		// 900-500 ms of the first process after the baseline, 50 ms of
		// the second.
		{"cpu", tp.CPUNS, 450 * ms},
		// The start-up's 90 MiB is not the run's.
		{"peak rss", tp.PeakRSSBytes, int64(40 << 20)},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	// No reading: the samples go, the CPU counts from the last one seen.
	b := newAccount("srv", t0)
	b.started(0, 100)
	b.sample(0, reading{user: 300 * ms}, t0.Add(time.Second))
	b.rebase(epoch, 0, reading{}, false, epoch)
	b.sample(0, reading{user: 500 * ms}, epoch.Add(time.Second))
	if tp := b.snapshot(); len(tp.Samples) != 1 || tp.CPUNS != 200*ms || tp.Samples[0].OffsetNS != time.Second {
		t.Errorf("without a reading: %+v", tp)
	}
}
