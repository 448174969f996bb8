package tcpclient

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/deadport"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/simclient"
)

// prepareShared is the run state of a one-flow plan against target.
func prepareShared(t *testing.T, steps string, target netip.AddrPort) (*simclient.Shared, *metrics.Collector) {
	t.Helper()
	p := plan(t, "", "  - name: a\n    steps: "+steps+"\n")
	col := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, target, col, simclient.Options{Tick: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	return sh, col
}

// TestPrepareDialsAhead: a session whose flow starts with connect is
// connected by Prepare, before Run (the listener accepts it with Run not
// called), and sends nothing until Run; Run's connect step then sends
// CONNECT_REQ as the first bytes on that same connection (no second dial)
// and the dial is recorded apart as tcp_dial. A flow starting with
// anything else is not dialed ahead.
func TestPrepareDialsAhead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	target := ln.Addr().(*net.TCPAddr).AddrPort()
	sh, col := prepareShared(t, "[connect]", target)
	sess, err := New(sh, 0, &sh.Plan.Flows[0], netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	simclient.Prepare(sess)

	// Run has not been called: an accepted connection was dialed by Prepare.
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(time.Minute))
	conn, err := ln.Accept()
	if err != nil {
		t.Fatalf("no connection after Prepare: %v", err)
	}
	defer conn.Close()
	// Nothing is sent before Run. (A short read deadline: a bug that sent
	// at Prepare would have written at once; nothing sent always passes.)
	conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var one [1]byte
	if n, err := conn.Read(one[:]); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("before Run the server read %d bytes (%v), want none", n, err)
	}
	conn.SetReadDeadline(time.Now().Add(time.Minute))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- sess.Run(ctx, time.Now()) }()
	fr := tcpwire.NewFrameReader(conn, 0)
	p, err := fr.Next()
	if err != nil {
		t.Fatalf("reading the first frame on the prepared connection: %v (Run: %v)", err, <-ran)
	}
	if tcpwire.Type(p[0]) != tcpwire.TypeConnectReq {
		t.Fatalf("first frame on the wire is %v, want CONNECT_REQ", tcpwire.Type(p[0]))
	}
	if _, err := conn.Write(tcpwire.AppendFrame(nil, &tcpwire.ConnectAck{Success: true, PlayerHash: 7})); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	// The connect step did not dial again.
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond))
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Fatal("the connect step dialed a second connection")
	}
	run, err := col.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, m := range run.Messages {
		counts[m.Name] = m.Requests
	}
	if counts[DialMessage] != 1 || counts["CONNECT_REQ"] != 1 {
		t.Errorf("messages %v, want one %s and one CONNECT_REQ", counts, DialMessage)
	}
}

// TestPrepareNotConnectFirst: a flow whose first step is not connect is
// not dialed ahead: Prepare leaves it without a connection.
func TestPrepareNotConnectFirst(t *testing.T) {
	sh, _ := prepareShared(t, "[{think: 1ms}, connect]", netip.MustParseAddrPort("127.0.0.1:9"))
	sess, err := New(sh, 0, &sh.Plan.Flows[0], netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	simclient.Prepare(sess)
	if s := sess.(*session); s.dialing != nil || s.fc != nil {
		t.Error("Prepare dialed a flow that starts with a think")
	}
}

// TestPrepareDialFailure: a dial that fails at preparation fails the
// connect step at Run with the reason a dial in the step gets: a local
// failure (binding a source address this host does not have) is a failed
// start with reason socket; a refused connection is the server's failure,
// conn_refused, not a failed start.
func TestPrepareDialFailure(t *testing.T) {
	closed := deadport.TCP(t) // refused
	tests := []struct {
		name       string
		src        netip.Addr
		wantReason string
		wantStart  bool
	}{
		{"a source address not on this host", netip.MustParseAddr("192.0.2.1"), simclient.ReasonSocket, true},
		{"a refused connection", netip.Addr{}, result.ReasonConnRefused, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh, col := prepareShared(t, "[connect, list]", closed)
			sess, err := New(sh, 0, &sh.Plan.Flows[0], tc.src)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			simclient.Prepare(sess)
			<-sess.(*session).dialing // the dial failed at preparation
			if sess.(*session).dialErr == nil {
				t.Fatal("the prepared dial did not fail")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err = sess.Run(ctx, time.Now())
			if got := simclient.ReasonOf(err); got != tc.wantReason {
				t.Errorf("Run: %v (reason %q), want reason %q", err, got, tc.wantReason)
			}
			if got := simclient.IsFailedStart(err); got != tc.wantStart {
				t.Errorf("failed start %v, want %v (%v)", got, tc.wantStart, err)
			}
			run, err := col.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range run.Messages {
				if m.Name == DialMessage && m.Requests != 0 {
					t.Errorf("%s recorded %d successful dials", DialMessage, m.Requests)
				}
			}
		})
	}
}
