package levclient

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// echoServer is a Leviathan endpoint that answers every Echo request with
// a Response None whose ResponseTo is responseTo (the engine: 0), one
// connection per peer, on 127.0.0.1.
func echoServer(t *testing.T, responseTo uint32) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		conns := map[netip.AddrPort]*levconn.Conn{}
		buf := make([]byte, 64<<10)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			now := time.Now()
			lc := conns[from]
			if lc == nil {
				if lc, err = levconn.New(levconn.Config{}, now); err != nil {
					return
				}
				conns[from] = lc
			}
			_ = lc.Receive(now, buf[:n])
			for _, ev := range lc.Events() {
				if ev.Kind == levconn.EventMessage && ev.Msg.Kind == lv.KindRequest && ev.Msg.RequestType() == lv.ReqEcho {
					_, _ = lc.SendResponse(now, levconn.Critical, lv.ResNone, responseTo, nil)
				}
			}
			lc.FlushAcks()
			for b := lc.Poll(now); b != nil; b = lc.Poll(now) {
				_, _ = c.WriteToUDPAddrPort(b, from)
			}
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// TestEchoResponseToViolation: an Echo answered with a wrong ResponseTo is
// counted as L-RESPONSE-TO with its bytes; the series carries on by
// default and fails with "violation" under on_violation: fail_step.
func TestEchoResponseToViolation(t *testing.T) {
	addr := echoServer(t, 77)
	for _, tc := range []struct {
		extra    string
		wantFail string
	}{
		{"", ""},
		{"on_violation: fail_step", result.ReasonViolation},
	} {
		t.Run("on_violation "+tc.extra, func(t *testing.T) {
			p := plan(t, tc.extra, "      - echo: {count: 3, timeout: 2s}")
			run, err := playOne(t, p, addr)
			if got := simclient.ReasonOf(err); got != tc.wantFail {
				t.Fatalf("Run = %v, want failure reason %q", err, tc.wantFail)
			}
			want := int64(3)
			if p.OnViolation == scenario.ViolationFailStep {
				want = 1
			}
			var got int64
			for _, v := range run.Violations {
				if v.Rule == RuleResponseTo {
					got = v.Count
					if len(v.Samples) == 0 || v.Samples[0].Packet == "" {
						t.Errorf("no hex sample: %+v", v.Samples)
					}
				}
			}
			if got != want {
				t.Errorf("%s counted %d times, want %d (violations %+v)", RuleResponseTo, got, want, run.Violations)
			}
		})
	}
}

// TestDuplicatedDatagrams: through a proxy that sends every server
// datagram twice, each copy is L-PKT-DUP (the same PKT_ID and bytes
// again: not a resend, which takes a new PKT_ID); through a plain relay,
// nothing is.
func TestDuplicatedDatagrams(t *testing.T) {
	for _, tc := range []struct {
		copies int
		want   bool
	}{{1, false}, {2, true}} {
		t.Run(fmt.Sprintf("%d copies", tc.copies), func(t *testing.T) {
			addr := faultproxy.Relay(t, "udp", echoServer(t, 0), faultproxy.Options{Copies: tc.copies}).Addr()
			run, err := playOne(t, plan(t, "", "      - echo: {count: 3, timeout: 5s}"), addr)
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
			var got int64
			for _, v := range run.Violations {
				if v.Rule != RulePktDup {
					t.Errorf("violation %s: %+v", v.Rule, v.Samples)
					continue
				}
				got = v.Count
			}
			// The last reply's copy may come after the session stopped
			// reading; the copies of the first two are read by the next echo.
			if tc.want && got < 2 {
				t.Errorf("%s counted %d times, want one per duplicated reply read (2 or more)", RulePktDup, got)
			}
			if !tc.want && got != 0 {
				t.Errorf("%s counted %d times through a plain relay", RulePktDup, got)
			}
		})
	}
}

// playOne plays p's first flow once, as one session against addr, and
// returns the run's record and the session's error.
func playOne(t *testing.T, p *scenario.Plan, addr netip.AddrPort) (*result.Run, error) {
	t.Helper()
	col := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, addr, col, simclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	sess, err := New(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = sess.Run(ctx, time.Time{})
	run, serr := col.Snapshot()
	if serr != nil {
		t.Fatal(serr)
	}
	return run, err
}
