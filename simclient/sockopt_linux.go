package simclient

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// SetBuffers sets SO_RCVBUF and SO_SNDBUF of the socket behind c to n
// bytes, trying SO_RCVBUFFORCE/SO_SNDBUFFORCE first (root: bypasses
// rmem_max/wmem_max) and falling back silently to the plain options, which
// the kernel caps. n <= 0 does nothing. It returns the error of the plain
// options only.
func SetBuffers(c syscall.Conn, n int) error {
	if n <= 0 {
		return nil
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		f := int(fd)
		if unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n) != nil {
			if e := unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_RCVBUF, n); e != nil {
				serr = e
			}
		}
		if unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, n) != nil {
			if e := unix.SetsockoptInt(f, unix.SOL_SOCKET, unix.SO_SNDBUF, n); e != nil {
				serr = e
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	return serr
}
