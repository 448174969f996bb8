//go:build !linux

package simclient

import (
	"net"
	"syscall"
)

// SetBuffers sets SO_RCVBUF and SO_SNDBUF of c to n bytes (the plain
// options; the FORCE variants are Linux-only). n <= 0 does nothing.
func SetBuffers(c syscall.Conn, n int) error {
	if n <= 0 {
		return nil
	}
	type bufs interface {
		SetReadBuffer(int) error
		SetWriteBuffer(int) error
	}
	if b, ok := c.(bufs); ok {
		if err := b.SetReadBuffer(n); err != nil {
			return err
		}
		return b.SetWriteBuffer(n)
	}
	_ = net.ErrClosed
	return nil
}
