//go:build !linux

package rxbuf

import (
	"errors"
	"syscall"
)

// EnableStamps reports that kernel receive stamps are not read here.
func EnableStamps(syscall.RawConn) error {
	return errors.New("kernel receive stamps are read on Linux only")
}

// Stamp returns 0: no kernel receive stamps here.
func (s *Scratch) Stamp() int64 { return 0 }
