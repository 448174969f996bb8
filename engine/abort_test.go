package engine

import (
	"context"
	"testing"
	"time"
)

// TestAbortCutsGrace: a second Ctrl-C (Options.Abort) ends the grace
// period at once: sessions that would run on for the hour-long grace are
// cancelled when Abort closes, and Execute returns then (fake clock).
func TestAbortCutsGrace(t *testing.T) {
	synctest(t, func(t *testing.T) {
		var r recorder
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		abort := make(chan struct{})
		t0 := time.Now()
		time.AfterFunc(time.Second, cancel)                    // first Ctrl-C
		time.AfterFunc(3*time.Second, func() { close(abort) }) // second
		x, interrupted, err := Execute(ctx, Options{Plan: closedPlan(2, nil, time.Hour, 2), New: r.factory(time.Hour), Grace: time.Hour, Abort: abort}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d != 3*time.Second {
			t.Errorf("returned after %v, want 3s (when Abort closed)", d)
		}
		st := x.Stats.Snapshot()
		if !interrupted || st.Active != 0 || st.Started != 2 || st.Aborted != 2 {
			t.Errorf("interrupted %v, stats %+v; want both sessions cut", interrupted, st)
		}
	})
}
