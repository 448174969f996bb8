//go:build linux

package vflow

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fullPipe returns a pipe whose write end has no room left.
func fullPipe(t *testing.T) (r, w int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	buf := make([]byte, 1<<16)
	for {
		if _, err := unix.Write(p[1], buf); err == unix.EAGAIN {
			return p[0], p[1]
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// A Sender whose socket has no room waits for it, and gives up with EAGAIN
// once its bound is spent rather than waiting for ever.
func TestWaitRoom(t *testing.T) {
	tests := []struct {
		name  string
		drain bool
		want  unix.Errno
	}{
		{"room comes", true, 0},
		{"no room within the bound", false, unix.EAGAIN},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w := fullPipe(t)
			s := &Sender{fd: w, pfd: [1]unix.PollFd{{Fd: int32(w), Events: unix.POLLOUT}}, roomWait: 50 * time.Millisecond}
			if tt.drain {
				s.roomWait = time.Hour // the drain, not the bound, ends the wait
				go func() {
					buf := make([]byte, 1<<16)
					unix.Read(r, buf)
				}()
			}
			var waited time.Duration
			if got := s.waitRoom(&waited); got != tt.want {
				t.Fatalf("waitRoom = %v, want %v", got, tt.want)
			}
		})
	}
}
