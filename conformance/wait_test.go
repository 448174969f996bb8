package conformance

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
)

// stallOnce returns a stall hook that, on its first call only, runs
// before (e.g. the server's reply is sent) and then sleeps d: the harness
// stalled between a read's deadline and the read. The sleeps set the
// stage (a sleep lasts at least d); nothing asserts a duration.
func stallOnce(d time.Duration, before func()) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			if before != nil {
				before()
			}
			time.Sleep(d)
		})
	}
}

// TestWaitStall: a wait during which the harness stalls past its end
// reads the reply already queued instead of declaring silence (a Go read
// past its deadline does not look at the socket); a stall it makes up for
// with nothing queued is silence; one past what it can make up for is
// inconclusive (ErrStalled, and liveness.ErrInconclusive for a
// reachability check), not silence; over UDP and TCP alike.
func TestWaitStall(t *testing.T) {
	for _, tc := range []struct {
		name     string
		timeout  time.Duration // the run's --timeout; the wait is 50 ms
		stall    time.Duration
		send     bool
		wantErr  error // nil: the reply is read
		notSilen bool
	}{
		{"no stall, reply", time.Second, 0, true, nil, false},
		{"no stall, silence", time.Second, 0, false, ErrSilence, false},
		{"stall past the wait, reply queued", time.Second, 300 * time.Millisecond, true, nil, false},
		{"stall made up for, silence", time.Second, 300 * time.Millisecond, false, ErrSilence, false},
		{"stall past what it makes up for, reply queued", 10 * time.Millisecond, 300 * time.Millisecond, true, nil, false},
		{"stall past what it makes up for, nothing queued", 10 * time.Millisecond, 300 * time.Millisecond, false, ErrStalled, true},
	} {
		for _, transport := range []string{"udp", "tcp"} {
			t.Run(transport+", "+tc.name, func(t *testing.T) {
				env := &Env{Timeout: tc.timeout}
				ct := NewT(context.Background(), env, &Case{ID: "x/1/1", Level: Must})
				var recv func() ([]byte, error)
				var send func()
				if transport == "udp" {
					peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
					if err != nil {
						t.Fatal(err)
					}
					defer peer.Close()
					s, err := ct.OpenUDPOn(netip.MustParseAddr("127.0.0.1"))
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					from := peer.LocalAddr().(*net.UDPAddr).AddrPort()
					send = func() { peer.WriteToUDPAddrPort([]byte("reply"), s.Conn().LocalAddr().(*net.UDPAddr).AddrPort()) }
					recv = func() ([]byte, error) { return s.Recv(from, 50*time.Millisecond) }
				} else {
					ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
					if err != nil {
						t.Fatal(err)
					}
					defer ln.Close()
					c, err := net.DialTCP("tcp4", nil, ln.Addr().(*net.TCPAddr))
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					sc, err := ln.Accept()
					if err != nil {
						t.Fatal(err)
					}
					defer sc.Close()
					send = func() { sc.Write([]byte("reply")) }
					recv = func() ([]byte, error) {
						b := make([]byte, 5)
						if err := ct.ReadFull(c, b, 50*time.Millisecond); err != nil {
							if errors.Is(err, ErrStalled) {
								return nil, err
							}
							return nil, ErrSilence
						}
						return b, nil
					}
				}
				if tc.stall > 0 {
					before := func() {}
					if tc.send {
						before = send
					}
					env.stallHook = stallOnce(tc.stall, before)
				} else if tc.send {
					send()
				}
				b, err := recv()
				if tc.wantErr == nil {
					if err != nil || string(b) != "reply" {
						t.Fatalf("read %q, %v; want the queued reply", b, err)
					}
					return
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("read %q, %v; want %v", b, err, tc.wantErr)
				}
				if tc.notSilen {
					if errors.Is(err, ErrSilence) || !errors.Is(err, liveness.ErrInconclusive) {
						t.Errorf("%v: want inconclusive, not silence", err)
					}
				}
			})
		}
	}
}

// TestStallVerdict: a case that fails on a wait the harness's stall made
// inconclusive is skipped, saying so and what it had found, never failed;
// one that passes with every reply it asked for keeps its pass.
func TestStallVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *T, s *UDPSocket) error
		want string
		says string
	}{
		{"silence made a failure", func(t *T, s *UDPSocket) error {
			if _, err := s.Recv(netip.MustParseAddrPort("127.0.0.1:9"), 20*time.Millisecond); err != nil {
				return Failf("a reply", "%s", ReplyWords(err, "no reply within the timeout"))
			}
			return nil
		}, result.VerdictSkip, "inconclusive: the harness stalled"},
		{"the error returned as it is", func(t *T, s *UDPSocket) error {
			_, err := s.Recv(netip.MustParseAddrPort("127.0.0.1:9"), 20*time.Millisecond)
			return err
		}, result.VerdictSkip, "inconclusive: the harness stalled"},
		{"a pass stays", func(t *T, s *UDPSocket) error {
			s.Recv(netip.MustParseAddrPort("127.0.0.1:9"), 20*time.Millisecond)
			return nil
		}, result.VerdictPass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &Env{Timeout: 10 * time.Millisecond, stallHook: stallOnce(300*time.Millisecond, nil)}
			c := &Case{ID: "x/1/1", Level: Must, Run: func(t *T) error {
				s, err := t.OpenUDPOn(netip.MustParseAddr("127.0.0.1"))
				if err != nil {
					return err
				}
				defer s.Close()
				return tc.run(t, s)
			}}
			res := runCase(context.Background(), env, c)
			if res.Verdict != tc.want || !strings.Contains(res.Actual, tc.says) {
				t.Errorf("verdict %s %q; want %s saying %q", res.Verdict, res.Actual, tc.want, tc.says)
			}
			if tc.name == "silence made a failure" && !strings.Contains(res.Actual, "it had found: expected a reply") {
				t.Errorf("actual %q does not say what it had found", res.Actual)
			}
		})
	}
}
