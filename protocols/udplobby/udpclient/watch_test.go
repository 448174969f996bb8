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
// comes first, and a watch after close starts none.
func TestTransportWatchRace(t *testing.T) {
	sw := simclient.NewSweeper(time.Millisecond)
	defer sw.Stop()
	for range 100 {
		ctx, cancel := context.WithCancel(context.Background())
		tr := &transport{}
		if err := tr.open(netip.MustParseAddr("127.0.0.1"), 0, sw, 0); err != nil {
			t.Fatal(err)
		}
		tr.watch(ctx)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			other, stop := context.WithCancel(context.Background())
			defer stop()
			for i := range 20 {
				if i%2 == 0 {
					tr.watch(ctx)
				} else {
					tr.watch(other)
				}
			}
		}()
		go func() {
			defer wg.Done()
			tr.close()
		}()
		wg.Wait()
		if w := tr.watched.Load(); w != nil {
			t.Fatal("the transport still watches a context after close")
		}
		cancel()
	}
}

// BenchmarkTransportWatch measures a kept socket's next session watching
// the run's context, already watched.
func BenchmarkTransportWatch(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &transport{}
	tr.watch(ctx)
	defer tr.close()
	for b.Loop() {
		tr.watch(ctx)
	}
}
