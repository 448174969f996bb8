package udpclient

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/simclient"
)

// TestTransportWatchRace: a session's watch (the lock-free path when the
// context is watched already, the locked one when it changes) and close
// from another goroutine, run under -race: close ends the watch whichever
// comes first (the transport is in neither context's set), and a watch
// after close starts none (TestTransportWatch: the context's end cancels
// the transport it watches last).
func TestTransportWatchRace(t *testing.T) {
	sw := simclient.NewSweeper(time.Millisecond)
	defer sw.Stop()
	sh := &simclient.Shared{}
	for range 100 {
		ctx, cancel := context.WithCancel(context.Background())
		tr := &transport{}
		if err := tr.open(netip.MustParseAddr("127.0.0.1"), 0, sw, 0); err != nil {
			t.Fatal(err)
		}
		tr.watch(ctx, sh)
		var wg sync.WaitGroup
		wg.Add(2)
		other, stop := context.WithCancel(context.Background())
		go func() {
			defer wg.Done()
			for i := range 20 {
				if i%2 == 0 {
					tr.watch(ctx, sh)
				} else {
					tr.watch(other, sh)
				}
			}
		}()
		go func() {
			defer wg.Done()
			tr.close()
		}()
		wg.Wait()
		if c := tr.cset.Load(); c != nil {
			t.Fatal("the transport still watches a context after close")
		}
		for _, c := range []context.Context{ctx, other} {
			if n := sh.Cancels(c).Len(); n != 0 {
				t.Fatalf("a closed transport is still in its context's set (%d members)", n)
			}
		}
		stop()
		cancel()
	}
}

// BenchmarkTransportWatch measures a kept socket's next session watching
// the run's context, already watched.
func BenchmarkTransportWatch(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sh := &simclient.Shared{}
	tr := &transport{}
	tr.watch(ctx, sh)
	defer tr.close()
	for b.Loop() {
		tr.watch(ctx, sh)
	}
}
