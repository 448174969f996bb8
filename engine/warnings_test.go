package engine

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// overlapWriter records whether two writes were ever inside Write at once.
type overlapWriter struct {
	in      atomic.Int32
	overlap atomic.Bool
	buf     bytes.Buffer // written only while alone, if serialised
}

func (o *overlapWriter) Write(p []byte) (int, error) {
	if o.in.Add(1) > 1 {
		o.overlap.Store(true)
	}
	defer o.in.Add(-1)
	for range 20 {
		runtime.Gosched() // widen the window another writer could enter
	}
	return o.buf.Write(p)
}

// TestSerialWarnings: writes from many goroutines reach the caller's
// writer one at a time, whole, and wrapping twice adds no second lock.
func TestSerialWarnings(t *testing.T) {
	if serialWarnings(nil) != nil {
		t.Fatal("nil Warnings must stay nil: the engine tests it to print nothing")
	}
	var o overlapWriter
	w := serialWarnings(&o)
	if serialWarnings(w) != w {
		t.Error("wrapping a serialised writer again made a new one")
	}
	const writers, lines = 8, 50
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range lines {
				w.Write([]byte(strings.Repeat(string(rune('a'+g)), 16) + "\n"))
			}
		}()
	}
	wg.Wait()
	if o.overlap.Load() {
		t.Fatal("two writes were in the caller's writer at once")
	}
	got := strings.Split(strings.TrimSuffix(o.buf.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for _, l := range got {
		if len(l) != 16 || strings.Count(l, l[:1]) != 16 {
			t.Fatalf("a line was torn: %q", l)
		}
	}
}
