//go:build linux

package udpclient

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/internal/rxbuf"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// TestReplyAtFromRead: a reply read without parking is timed by its kernel
// stamp mapped with recv's own clock reading before the read (no clock
// read of its own); one read after parking is timed as before (At).
func TestReplyAtFromRead(t *testing.T) {
	sh := benchShared(t, newEchoServer(t, 1).addr())
	r := newPreciseRig(t, 0)
	r.reply([]byte("pong"))
	r.waitQueued()
	if _, _, err := r.tr.recv(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if r.tr.kns == 0 || r.tr.readAt.IsZero() {
		t.Fatalf("a queued reply read with stamp %d, recv's reading %v: want both", r.tr.kns, r.tr.readAt)
	}
	// recv's own reading is only a few hundred nanoseconds before the
	// read, unless the scheduler took the thread in between: then the
	// stamp may come after it by more than AtRead allows, and replyAt
	// rightly asks At. So the reading is replaced by one the test
	// chooses, half a millisecond after the stamp: only a mapping with it
	// gives a time on it (At's carries its own clock read).
	r.tr.readAt = instant.Of(time.Unix(0, r.tr.kns).Add(time.Millisecond / 2))
	want, ok := rxbuf.AtRead(r.tr.readAt.Time(), r.tr.kns)
	if got := r.tr.replyAt(sh); !ok || got != want { // == on purpose: Equal ignores the monotonic reading
		t.Errorf("replyAt = %v, want the stamp mapped with recv's reading, %v (%v)", got, want, ok)
	}

	// A read that parks (nothing comes, its deadline ends the wait)
	// leaves no reading: the next reply would be timed by At.
	r.tr.readAt = instant.Now()
	if err := r.tr.c.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.tr.read(time.Time{}); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read = %v, want the deadline's error", err)
	}
	if !r.tr.readAt.IsZero() {
		t.Errorf("a read that parked kept recv's reading %v", r.tr.readAt)
	}
}

// BenchmarkReplyAt measures timing a reply read without parking.
func BenchmarkReplyAt(b *testing.B) {
	e := newEchoServer(b, 1)
	sh := benchShared(b, newEchoServer(b, 1).addr())
	s := benchSession(b, sh, 0, e)
	defer s.Close()
	s.obuf = s.encode(s.obuf[:0], &pending{typ: udpwire.ClientPing, seq: 1}, udpwire.ProfileSpec)
	if err := s.tr.send(s.inst, s.obuf); err != nil {
		b.Fatal(err)
	}
	waitQueued(b, s.tr.c)
	if _, _, err := s.tr.recv(time.Now().Add(time.Minute)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = s.replyAt()
	}
}
