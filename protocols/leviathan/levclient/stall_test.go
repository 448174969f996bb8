package levclient

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	refsrv "github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestClosedModelNoStall: closed-model clients playing a flow that joins
// the server and does not close get a new connection (and socket) per
// flow, leaving the old one open on the server. The OS hands new sockets
// ports at random, now and then one of those the server still holds,
// sometimes within 100 ms of that connection's last packet: the server
// took such a Connect for a duplicate of the old connection's, acked it and
// never answered, and the client's engine, its Connect acked, never resent
// it: the client stalled until its timeout. And the server's connection
// with the port's earlier client may resend to it a response the earlier
// client never acked, whose number the new client's engine took for one
// it had seen: the new connection's own response with that number was
// dropped as a copy (levconn's TestResponseToUnusedNumber). Every flow's
// connect and join must be answered.
//
// Which ports collide is the kernel's draw: a run fails the old server
// when at least one does (a few in a thousand sessions at loopback speed),
// and passes a correct one whatever is drawn.
func TestClosedModelNoStall(t *testing.T) {
	const clients, per = 3, 500
	srv := startServer(t, func(c *refsrv.Config) {
		c.MaxPlayers = clients * per
		c.MaxConnsPerIP = -1
	})
	p := plan(t, "", "      - connect: {timeout: 3s}\n      - join_server\n")
	col := metrics.NewCollector(time.Now())
	sh := fastShared(t, p, srv, col)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev simclient.Session
			defer func() {
				if prev != nil {
					prev.Close()
				}
			}()
			for k := range per {
				s, err := simclient.Renew(New, sh, prev, c*per+k, &p.Flows[0], clientSrc)
				if err != nil {
					errs[c] = err
					return
				}
				prev = s
				if err := s.Run(ctx, time.Now()); err != nil {
					errs[c] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	st := srv.Stats()
	for c, err := range errs {
		if err != nil {
			t.Errorf("client %d: %v (server: %d restarted, drops %v, %d duplicates)",
				c, err, st.Closes["restarted"], st.Drops, st.Duplicates)
		}
	}
	run, err := col.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range run.Steps {
		if s.Name == "connect" && (s.Successes != clients*per || s.Failures != 0 || s.Cut != 0) {
			t.Errorf("connect: %d answered, %d failed (%v), %d cut of %d flows",
				s.Successes, s.Failures, s.FailuresByReason, s.Cut, clients*per)
		}
	}
	t.Logf("server: %d connections, %d restarted, drops %v", st.ConnsOpened, st.Closes["restarted"], st.Drops)
}
