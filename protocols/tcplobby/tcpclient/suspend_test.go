package tcpclient

import (
	"context"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestResumeWatchesContext: a session suspended in a think time
// (Options.Suspend) and resumed keeps its connection, and the context
// given to Resume cuts a read of the resumed flow as Run's would: the
// second list, which the server never answers, ends when ctx does, not
// at its one-minute timeout.
func TestResumeWatchesContext(t *testing.T) {
	var lists atomic.Int32
	addr := script(t, func(req tcpwire.Message) [][]byte {
		switch req.(type) {
		case *tcpwire.ConnectReq:
			return [][]byte{frame(&tcpwire.ConnectAck{Success: true, PlayerHash: 7})}
		case *tcpwire.ListRoomsReq:
			if lists.Add(1) == 1 {
				return [][]byte{frame(&tcpwire.ListRoomsAck{})}
			}
		}
		return nil // the second list: silence
	})
	p := plan(t, "defaults: {timeout: 1m, retries: 0}", "  - steps: [connect, list, {think: 200ms}, list]\n")
	c := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, addr, c, simclient.Options{Suspend: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	fac, _ := simclient.Lookup("tcp-lobby")
	s, err := fac(sh, 0, &p.Flows[0], netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Run(context.Background(), time.Time{}); err != simclient.ErrSuspended {
		t.Fatalf("Run = %v, want ErrSuspended in the think", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.(simclient.Resumer).Resume(ctx) }()
	for deadline := time.Now().Add(30 * time.Second); lists.Load() < 2; time.Sleep(time.Millisecond) { // until the second list is sent
		if time.Now().After(deadline) {
			t.Fatalf("the resumed session sent %d lists in 30 s, want a second", lists.Load())
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("Resume = %v, want the context's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Resume did not return when its context ended")
	}
}
