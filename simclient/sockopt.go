package simclient

import (
	"syscall"

	"github.com/lobbybench/lobbybench/internal/sockbuf"
)

// SetBuffers sets SO_RCVBUF and SO_SNDBUF of the socket behind c to n
// bytes, trying SO_RCVBUFFORCE/SO_SNDBUFFORCE first (root: bypasses
// rmem_max/wmem_max) and falling back silently to the plain options, which
// the kernel caps. n <= 0 does nothing. It returns the error of the plain
// options only.
func SetBuffers(c syscall.Conn, n int) error { return sockbuf.Set(c, n) }
