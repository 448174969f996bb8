// Package rxbuf reads UDP datagrams whole, whatever their size, while a
// reader keeps only a small buffer between reads.
//
// Every read goes into a Scratch of 64 KiB, taken from a pool for the
// read alone (one system call, no parking in between on Linux): any UDP
// datagram fits, so none is truncated and none has to be asked for again.
// What was read is then kept in the reader's Buf: copied into a small
// pooled buffer when it fits (the common case: a reply of tens of bytes),
// or, for a larger datagram (a long room list), the Scratch itself, held
// until the reader's next datagram or Release. A thousand idle readers
// thus hold no 64 KiB buffers, and a reader that received a large one
// holds it only until it reads again.
package rxbuf

import (
	"sync"
	"time"
)

const (
	// Size is a Scratch's capacity: more than the largest UDP payload
	// (65,507 bytes over IPv4, 65,527 over IPv6 without jumbograms).
	Size = 64 << 10
	// Small is the size of the buffer a reader keeps a datagram in when
	// it fits (a room list of up to ~180 rooms).
	Small = 2048
)

var (
	scratchPool = sync.Pool{New: func() any { return newScratch() }}
	smallPool   = sync.Pool{New: func() any { return new([Small]byte) }}
)

// Get returns a Scratch for one read. Hand it to Buf.Keep once a datagram
// is in it, or give it back with Put.
func Get() *Scratch { return scratchPool.Get().(*Scratch) }

// Put gives s back to the pool; s must not be used after.
func (s *Scratch) Put() { scratchPool.Put(s) }

// Bytes is the whole of s's datagram room, to read into where the
// package's own Recv is not available (the net package's calls).
func (s *Scratch) Bytes() []byte { return s.b[:] }

// Buf holds a reader's last datagram. The zero Buf holds nothing.
type Buf struct {
	small *[Small]byte
	big   *Scratch
}

// Keep returns the n bytes read into s as a datagram that stays valid
// until r's next Keep or Release. It takes s: s goes back to the pool at
// once when the datagram fits r's small buffer, or is held by r until its
// next Keep or Release.
func (r *Buf) Keep(s *Scratch, n int) []byte {
	n = min(n, Size) // a UDP datagram never exceeds it; a peek past it would
	if r.big != nil {
		r.big.Put()
		r.big = nil
	}
	if n > Small {
		r.big = s
		return s.b[:n]
	}
	if r.small == nil {
		r.small = smallPool.Get().(*[Small]byte)
	}
	copy(r.small[:], s.b[:n])
	s.Put()
	return r.small[:n]
}

// Release gives back the buffers r holds; the datagram Keep last returned
// is no longer valid.
func (r *Buf) Release() {
	if r.small != nil {
		smallPool.Put(r.small)
		r.small = nil
	}
	if r.big != nil {
		r.big.Put()
		r.big = nil
	}
}

// Held reports how many bytes of buffer r holds (tests and memory checks).
func (r *Buf) Held() int {
	n := 0
	if r.small != nil {
		n += Small
	}
	if r.big != nil {
		n += Size
	}
	return n
}

// maxStampAge bounds how long before At a kernel receive stamp can be:
// longer than any wait for a reply. An older stamp, or one from the
// future, means the wall clock stepped in between.
const maxStampAge = time.Minute

// At returns when a datagram with the kernel receive stamp ns (Stamp; 0:
// none) reached this host, as a time comparable with Go's (kernel), or
// now when it has no usable stamp.
//
// The kernel stamps on CLOCK_REALTIME; the intended send times latencies
// start from carry Go's monotonic reading, which does not step with the
// wall clock. So the stamp is not used as a time of its own: now (wall
// and monotonic) is read once, the datagram's age is the difference of
// the two wall clocks (now.Sub of a time without a monotonic reading
// compares wall clocks), and the result is now less that age: a time on
// both clocks. Only a wall clock step in the microseconds between the
// stamp and now could bend it; an age out of bounds (maxStampAge) is
// taken as one, and now is used.
func At(ns int64) (at time.Time, kernel bool) {
	return since(time.Now(), ns, 0)
}

// readSlack bounds how long after the clock reading given to AtRead the
// datagram may have been stamped: the read's own few hundred
// nanoseconds, or a precise client's polling window (50 µs).
const readSlack = time.Millisecond

// AtRead is At for a datagram read without parking just after the clock
// reading before (the reader's own, taken anyway): the stamp is mapped
// with it, with no clock read of its own. The stamp may come up to
// readSlack after before (the datagram arrived during the read); kernel
// is false, and at zero, when there is no usable stamp: the caller then
// asks At.
func AtRead(before time.Time, ns int64) (at time.Time, kernel bool) {
	if at, kernel = since(before, ns, readSlack); !kernel {
		return time.Time{}, false
	}
	return at, true
}

// since maps the stamp ns with the clock reading now, taken up to ahead
// before the stamp or up to maxStampAge after it (At).
func since(now time.Time, ns int64, ahead time.Duration) (time.Time, bool) {
	if ns == 0 {
		return now, false
	}
	age := now.Sub(time.Unix(0, ns))
	if age < -ahead || age > maxStampAge {
		return now, false
	}
	return now.Add(-age), true
}
