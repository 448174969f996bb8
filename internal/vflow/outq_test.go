//go:build linux

package vflow

import (
	"errors"
	"net/netip"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestWriteQueued: queued writes of many flows at once all reach the
// server, each reply to its flow, and each write's send stamp is replaced
// by the one taken before its system call, taken after the writer's and before the reply came.
func TestWriteQueued(t *testing.T) {
	h := openHub(t, 64)
	srv := echoServer(t)
	conns := make([]*Conn, 64)
	stamps := make([]atomic.Int64, len(conns))
	queued := time.Now().Add(-time.Second).UnixNano()
	for i := range conns {
		c, err := h.Conn()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
		stamps[i].Store(queued)
		if _, err := c.WriteQueued([]byte{byte(i)}, srv, &stamps[i]); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 8)
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, _, from, err := c.ReadMsgUDPAddrPort(buf, nil)
		if err != nil || n != 1 || buf[0] != byte(i) || from != srv {
			t.Fatalf("flow %d read %v from %s (%v), want its own byte from %s", i, buf[:n], from, err, srv)
		}
		if s := stamps[i].Load(); s <= queued || s > time.Now().UnixNano() {
			t.Errorf("flow %d: send stamp %d, want one after the writer's %d and before now", i, s, queued)
		}
	}
}

// TestSendChunkStamps: the flusher stamps a datagram's writer only if the
// writer's stamp is still the one it had when the datagram was queued (a
// late flush never overwrites a later request's stamp), and a datagram the
// kernel refuses fails its own flow's next read, not another's, while the
// ones after it go.
func TestSendChunkStamps(t *testing.T) {
	h := openHub(t, 4)
	srv := echoServer(t)
	var conns [4]*Conn
	for i := range conns {
		c, err := h.Conn()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	var kept, stamped, after atomic.Int64
	kept.Store(5) // the writer stamped again since: 5, not the 1 queued with
	stamped.Store(1)
	after.Store(1)
	broadcast := netip.MustParseAddrPort("255.255.255.255:9") // refused: no SO_BROADCAST
	arena := []byte("abcd")
	part := []outgoing{
		{c: conns[0], dst: srv, off: 0, n: 1, sent: &kept, was: 1},
		{c: conns[1], dst: broadcast, off: 1, n: 1, sent: &stamped, was: 1},
		{c: conns[2], dst: srv, off: 2, n: 1, sent: &after, was: 1},
		{c: conns[3], dst: srv, off: 3, n: 1}, // WriteToUDPAddrPort's: no stamp
	}
	h.sendChunk(part, arena)
	if kept.Load() != 5 {
		t.Errorf("a later stamp was overwritten: %d", kept.Load())
	}
	if stamped.Load() == 1 || after.Load() == 1 {
		t.Errorf("stamps %d and %d, want the flusher's", stamped.Load(), after.Load())
	}
	buf := make([]byte, 8)
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, _, _, err := c.ReadMsgUDPAddrPort(buf, nil)
		switch {
		case i == 1 && !errors.Is(err, syscall.EACCES):
			t.Errorf("the refused datagram's flow read %q, %v; want EACCES", buf[:n], err)
		case i != 1 && (err != nil || string(buf[:n]) != string(arena[i])):
			t.Errorf("flow %d read %q, %v; want its datagram echoed", i, buf[:n], err)
		}
	}
}

// TestWriteNowFailsNextRead: a write with no stamp (WriteToUDPAddrPort)
// goes through the same queue, and the kernel's refusal of it fails the
// flow's next read, as a socket's pending error does, and only that one.
func TestWriteNowFailsNextRead(t *testing.T) {
	h := openHub(t, 4)
	srv := echoServer(t)
	c := mustConn(t, h)
	if _, err := c.WriteToUDPAddrPort([]byte("x"), netip.MustParseAddrPort("255.255.255.255:9")); err != nil {
		t.Fatalf("write: %v, want the refusal at the next read", err)
	}
	buf := make([]byte, 8)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, _, _, err := c.ReadMsgUDPAddrPort(buf, nil); !errors.Is(err, syscall.EACCES) {
		t.Fatalf("read after a refused write: %v, want EACCES", err)
	}
	if _, err := c.WriteToUDPAddrPort([]byte("y"), srv); err != nil {
		t.Fatal(err)
	}
	if n, _, _, _, err := c.ReadMsgUDPAddrPort(buf, nil); err != nil || string(buf[:n]) != "y" {
		t.Fatalf("read %q, %v; want the next write echoed", buf[:n], err)
	}
}

// TestFlushHandsOff: a writer that holds the flush sends the queue, but
// not for ever: while another goroutine keeps queueing, it hands the
// flush on (maxRounds) and returns, its own client going on.
func TestFlushHandsOff(t *testing.T) {
	h := openHub(t, 4)
	srv := echoServer(t)
	feeder := mustConn(t, h)
	q := &h.out
	q.mu.Lock()
	q.flushing = true // this goroutine's, as a writer that found none under way
	q.mu.Unlock()
	var fed atomic.Int64
	feed := make([]byte, 1024) // few to drain at the end: the queue holds at most maxOutBytes
	done := make(chan struct{})
	stopped := make(chan bool, 1) // true: the feeder stopped because the flush returned
	go func() {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
			select {
			case <-done:
				stopped <- true
				return
			default:
			}
			if _, err := feeder.WriteQueued(feed, srv, &fed); err != nil {
				t.Error(err)
				break
			}
		}
		stopped <- false
	}()
	for queued := 0; queued == 0; {
		runtime.Gosched()
		q.mu.Lock()
		queued = len(q.pend)
		q.mu.Unlock()
	}
	h.flushQueue()
	close(done)
	if !<-stopped {
		t.Error("the flush returned only once the feeder had stopped: it sent the feeder's datagrams for as long as they came")
	}
}

func mustConn(t *testing.T, h *Hub) *Conn {
	t.Helper()
	c, err := h.Conn()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
