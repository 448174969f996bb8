// Package sockbuf sizes socket buffers, the one socket option every UDP
// path of lobbybench sets: with the default 208 KiB receive buffer a lobby
// loses 13-15 % of requests at 10k clients.
package sockbuf

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Set sets SO_RCVBUF and SO_SNDBUF of the socket behind c to n bytes,
// trying SO_RCVBUFFORCE/SO_SNDBUFFORCE first (as root they bypass
// rmem_max/wmem_max) and falling back to the plain options, which the
// kernel caps silently. n <= 0 does nothing. It returns the error of the
// plain options only.
func Set(c syscall.Conn, n int) error {
	return set(c, n, true)
}

// SetRead is Set for the receive buffer alone.
func SetRead(c syscall.Conn, n int) error {
	return set(c, n, false)
}

func set(c syscall.Conn, n int, send bool) error {
	if n <= 0 {
		return nil
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	return setRaw(rc, n, send)
}

// setRaw is set on the socket's raw connection.
func setRaw(rc syscall.RawConn, n int, send bool) error {
	var serr error
	try := func(fd, force, plain int) {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, force, n) != nil {
			if e := unix.SetsockoptInt(fd, unix.SOL_SOCKET, plain, n); e != nil {
				serr = e
			}
		}
	}
	if cerr := rc.Control(func(fd uintptr) {
		try(int(fd), unix.SO_RCVBUFFORCE, unix.SO_RCVBUF)
		if send {
			try(int(fd), unix.SO_SNDBUFFORCE, unix.SO_SNDBUF)
		}
	}); cerr != nil {
		return cerr
	}
	return serr
}

// ReadControl is a net.Dialer's Control that sets the receive buffer to
// n bytes before the socket connects: a TCP receive window is advertised
// from the handshake on, and a buffer shrunk after it takes effect only
// once the window already offered is used up.
func ReadControl(n int) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error { return setRaw(c, n, false) }
}
