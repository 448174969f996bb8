//go:build linux

package vflow

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ancillary is what the control messages of one received datagram tell.
type ancillary struct {
	origDst netip.AddrPort // IP_ORIGDSTADDR: the flow the datagram was for
	time    time.Time      // SO_TIMESTAMPNS: when the kernel received it
	errno   syscall.Errno  // IP_RECVERR (an error queue's message): what the kernel reported
}

// cmsgLenSize is the size of cmsghdr.cmsg_len (size_t); level and type, two
// ints, follow it, and each message is aligned to it.
const cmsgLenSize = int(unsafe.Sizeof(unix.Cmsghdr{}.Len))

// parseCmsgs decodes a received datagram's control messages, keeping the
// ones it asks for and skipping others. It stops at the first malformed
// header and says why, returning what it decoded before.
func parseCmsgs(b []byte) (ancillary, error) {
	var a ancillary
	hdr := cmsgLenSize + 8
	for len(b) >= hdr {
		var n int
		if cmsgLenSize == 8 {
			v := binary.NativeEndian.Uint64(b)
			if v > uint64(len(b)) {
				return a, fmt.Errorf("control message of %d bytes in %d left", v, len(b))
			}
			n = int(v)
		} else {
			n = int(binary.NativeEndian.Uint32(b))
		}
		if n < hdr || n > len(b) {
			return a, fmt.Errorf("control message of %d bytes in %d left (header %d)", n, len(b), hdr)
		}
		level := int32(binary.NativeEndian.Uint32(b[cmsgLenSize:]))
		typ := int32(binary.NativeEndian.Uint32(b[cmsgLenSize+4:]))
		if err := a.take(level, typ, b[hdr:n]); err != nil {
			return a, err
		}
		n = (n + cmsgLenSize - 1) &^ (cmsgLenSize - 1)
		if n >= len(b) {
			break
		}
		b = b[n:]
	}
	return a, nil
}

func (a *ancillary) take(level, typ int32, data []byte) error {
	switch {
	case level == unix.IPPROTO_IP && typ == unix.IP_ORIGDSTADDR:
		ap, ok := sockaddr4(data)
		if !ok {
			return fmt.Errorf("IP_ORIGDSTADDR of %d bytes is not an IPv4 sockaddr", len(data))
		}
		a.origDst = ap
	case level == unix.SOL_SOCKET && (typ == unix.SO_TIMESTAMPNS || typ == unix.SO_TIMESTAMPNS_NEW):
		var sec, nsec int64
		switch len(data) {
		case 16:
			sec, nsec = int64(binary.NativeEndian.Uint64(data)), int64(binary.NativeEndian.Uint64(data[8:]))
		case 8:
			sec, nsec = int64(int32(binary.NativeEndian.Uint32(data))), int64(int32(binary.NativeEndian.Uint32(data[4:])))
		default:
			return fmt.Errorf("SO_TIMESTAMPNS of %d bytes is not a timespec", len(data))
		}
		if nsec < 0 || nsec >= 1e9 {
			return fmt.Errorf("SO_TIMESTAMPNS nanoseconds %d out of range", nsec)
		}
		a.time = time.Unix(sec, nsec)
	case level == unix.IPPROTO_IP && typ == unix.IP_RECVERR:
		// struct sock_extended_err: ee_errno first (host order), then
		// origin, type, code, a pad, info and data; the offender follows.
		if len(data) < int(unsafe.Sizeof(unix.SockExtendedErr{})) {
			return fmt.Errorf("IP_RECVERR of %d bytes is shorter than sock_extended_err", len(data))
		}
		a.errno = syscall.Errno(binary.NativeEndian.Uint32(data))
	}
	return nil
}

// sockaddr4 decodes a struct sockaddr_in: family (host order), port and
// address (network order).
func sockaddr4(b []byte) (netip.AddrPort, bool) {
	if len(b) < unix.SizeofSockaddrInet4 || binary.NativeEndian.Uint16(b) != unix.AF_INET {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:])), true
}
