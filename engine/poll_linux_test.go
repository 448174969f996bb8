//go:build linux

package engine

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestClosedWaitSocket: a closed-model session suspended in a wait on its
// socket is resumed when a datagram makes the socket readable (one sent
// after it suspended, or already there), not at its wait's end (an hour
// away). A readiness event of an earlier suspension, whose wait ended by
// its time, starts nothing: a pause suspended since is resumed at the
// stop only. The run here lasts an hour; the test cancels it once it saw
// what it waits for (the 30 s bound only turns a hang into a failure).
func TestClosedWaitSocket(t *testing.T) {
	tests := []struct {
		name string
		// wait and nextPause as waiter's; early: the datagram is sent
		// before the session suspends, else once it was resumed or
		// suspended (stale: after the first wait ended by its time).
		wait, nextPause time.Duration
		early, stale    bool
	}{
		{"datagram during the wait", time.Hour, 0, false, false},
		{"datagram before the wait", time.Hour, 0, true, false},
		{"late datagram of an ended wait", 20 * time.Millisecond, time.Hour, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rx, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer rx.Close()
			tx, err := net.DialUDP("udp", nil, rx.LocalAddr().(*net.UDPAddr))
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			raw, err := rx.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			fd := -1
			raw.Control(func(f uintptr) { fd = int(f) })
			send := func() {
				if _, err := tx.Write([]byte("x")); err != nil {
					t.Error(err)
				}
			}
			suspended := make(chan struct{})
			resumed := make(chan resumeCall, 10)
			n := 0
			newS := func(st Start) (Session, error) {
				n++
				w := &waiter{first: n == 1, wait: tc.wait, nextPause: tc.nextPause, fd: fd, resumed: resumed}
				if n == 1 {
					w.before = func() {
						if tc.early {
							send()
						}
						close(suspended)
					}
				}
				return w, nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				if _, _, err := Execute(ctx, Options{Plan: closedPlan(1, nil, time.Hour, 1), New: newS, Grace: 100 * time.Millisecond}, nil); err != nil {
					t.Error(err)
				}
			}()
			<-suspended
			bound := time.After(30 * time.Second)
			if tc.stale {
				// The first wait ends by its time; then the datagram.
				select {
				case r := <-resumed:
					if r.stopped {
						t.Fatalf("the first wait was cut by the stop")
					}
				case <-bound:
					t.Fatal("the first wait was not resumed at its end")
				}
				send()
				// The stale event must not resume the pause: only the
				// stop does.
				time.Sleep(50 * time.Millisecond)
				cancel()
				select {
				case r := <-resumed:
					if !r.stopped {
						t.Errorf("the pause was resumed before the stop, by the earlier wait's event")
					}
				case <-bound:
					t.Fatal("the pause was not resumed at the stop")
				}
			} else {
				if !tc.early {
					send()
				}
				select {
				case r := <-resumed:
					if r.stopped {
						t.Errorf("resumed by the stop, not by the socket")
					}
				case <-bound:
					t.Fatal("not resumed when the socket became readable")
				}
				cancel()
			}
			<-done
		})
	}
}
