//go:build linux

package udpclient

import (
	"math/rand/v2"

	"github.com/lobbybench/lobbybench/internal/impair"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestSendStampAtSyscall: a request's send stamp is taken after all of
// the client's work before the sendto (the hook stands for it, at the
// start of rawWrite, and lets the clock move on), so send lag counts it.
// With an outgoing impairment the stamp is when the impairment took the
// datagram, before it is written. No duration is asserted: only the
// order of two clock readings.
func TestSendStampAtSyscall(t *testing.T) {
	for _, tc := range []struct {
		name     string
		impaired bool
	}{
		{"plain", false},
		{"impaired", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEchoServer(t, 1)
			sh := benchShared(t, newEchoServer(t, 1).addr())
			s := benchSession(t, sh, 0, e)
			defer s.Close()
			if tc.impaired {
				s.tr.out = newTestImpairer(t)
			}
			var hookAt time.Time
			s.tr.writeHook = func() {
				if !hookAt.IsZero() {
					return // a later write (the impairment's), not the request's
				}
				t0 := time.Now()
				for range 1 << 20 { // bounded: until the clock moves on
					if hookAt = time.Now(); hookAt.After(t0) {
						break
					}
				}
			}
			sent, err := s.request(&pending{typ: udpwire.ClientPing, to: s.inst, inst: true, intended: instant.Now()}, scenario.DefaultPolicy)
			if err != nil {
				t.Fatal(err)
			}
			if hookAt.IsZero() {
				t.Fatal("the request was not written by rawWrite")
			}
			if before := sent.Before(hookAt); before != tc.impaired {
				t.Errorf("send stamp %v, rawWrite began %v: stamp before it %v, want %v", sent, hookAt, before, tc.impaired)
			}
		})
	}
}

// newTestImpairer is an outgoing impairment that lets every datagram
// through after a nanosecond (zero config is no impairment): the stamp
// is still the impairment's.
func newTestImpairer(t *testing.T) *impair.Impairer {
	t.Helper()
	return impair.New(impair.Config{Delay: time.Nanosecond}, rand.New(rand.NewPCG(1, 2)), 0)
}
