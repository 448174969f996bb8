package simclient

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

func TestOpenFailure(t *testing.T) {
	wrap := func(e error) error { return fmt.Errorf("dial udp 127.0.0.1:0: %w", e) }
	tests := []struct {
		err    error
		reason string
		start  bool
	}{
		{wrap(syscall.EMFILE), ReasonNoFiles, true},
		{wrap(syscall.ENFILE), ReasonNoFiles, true},
		{wrap(syscall.EADDRNOTAVAIL), ReasonSocket, true},
		{wrap(syscall.EADDRINUSE), ReasonSocket, true},
		{wrap(syscall.ENETUNREACH), ReasonSocket, false},
		{errors.New("bad address"), ReasonSocket, false},
	}
	for _, tc := range tests {
		reason, err := OpenFailure(tc.err)
		if reason != tc.reason || IsFailedStart(err) != tc.start || !errors.Is(err, tc.err) {
			t.Errorf("%v: reason %q, failed start %v, want %q, %v (and the cause kept)", tc.err, reason, IsFailedStart(err), tc.reason, tc.start)
		}
		se := OpenError(tc.err)
		if ReasonOf(se) != tc.reason || IsFailedStart(se) != tc.start {
			t.Errorf("OpenError(%v) = %v: reason %q, failed start %v", tc.err, se, ReasonOf(se), IsFailedStart(se))
		}
	}
}
