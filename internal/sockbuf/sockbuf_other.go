//go:build !linux

// Package sockbuf sizes socket buffers, the one socket option every UDP
// path of lobbybench sets.
package sockbuf

import "syscall"

type buffers interface {
	SetReadBuffer(int) error
	SetWriteBuffer(int) error
}

// Set sets the receive and send buffers of c to n bytes (the plain
// options; the FORCE variants are Linux-only). n <= 0 does nothing.
func Set(c syscall.Conn, n int) error {
	if err := SetRead(c, n); err != nil || n <= 0 {
		return err
	}
	if b, ok := c.(buffers); ok {
		return b.SetWriteBuffer(n)
	}
	return nil
}

// SetRead is Set for the receive buffer alone.
func SetRead(c syscall.Conn, n int) error {
	if b, ok := c.(buffers); ok && n > 0 {
		return b.SetReadBuffer(n)
	}
	return nil
}

// ReadControl is a net.Dialer's Control that sets the receive buffer
// before the socket connects; elsewhere than Linux it does nothing (the
// caller sizes the buffer after connecting).
func ReadControl(int) func(network, address string, c syscall.RawConn) error { return nil }
