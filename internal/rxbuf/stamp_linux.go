package rxbuf

import (
	"encoding/binary"
	"syscall"

	"golang.org/x/sys/unix"
)

// EnableStamps asks the kernel to stamp every datagram the socket
// receives with its arrival time (SO_TIMESTAMPNS), which Recv then hands
// to Stamp. An error (an older kernel, a refused option) leaves the
// socket without stamps.
func EnableStamps(raw syscall.RawConn) error {
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return err
	}
	return serr
}

// Stamp returns the kernel's receive stamp of the datagram Recv read, in
// nanoseconds since the Unix epoch on CLOCK_REALTIME, or 0 when none came
// with it.
func (s *Scratch) Stamp() int64 {
	return ParseStamp(s.oob[:min(int(s.hdr.Controllen), oobLen)])
}

// word is the size of the cmsghdr's length, of its alignment and of a
// timespec's fields: the platform's long.
const word = unix.SizeofPtr

// ParseStamp decodes the SCM_TIMESTAMPNS control message among the
// control messages oob holds (as recvmsg(2) wrote them on this platform):
// the stamp in nanoseconds since the Unix epoch, or 0 when oob holds none
// or is malformed. It allocates nothing.
func ParseStamp(oob []byte) int64 {
	for len(oob) >= unix.SizeofCmsghdr {
		n := readWord(oob)
		if n < unix.SizeofCmsghdr || n > uint64(len(oob)) {
			return 0
		}
		level := int32(binary.NativeEndian.Uint32(oob[word:]))
		typ := int32(binary.NativeEndian.Uint32(oob[word+4:]))
		data := oob[align(unix.SizeofCmsghdr):n]
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS && len(data) >= 2*word {
			sec, nsec := int64(readWord(data)), int64(readWord(data[word:]))
			if word == 4 {
				sec, nsec = int64(int32(sec)), int64(int32(nsec))
			}
			// Past 2242 (sec > 2^33) the nanoseconds overflow int64.
			if sec <= 0 || sec > 1<<33 || nsec < 0 || nsec >= 1e9 {
				return 0
			}
			return sec*1e9 + nsec
		}
		next := align(int(n))
		if next >= len(oob) {
			return 0
		}
		oob = oob[next:]
	}
	return 0
}

func readWord(b []byte) uint64 {
	if word == 8 {
		return binary.NativeEndian.Uint64(b)
	}
	return uint64(binary.NativeEndian.Uint32(b))
}

// align rounds n up to the control messages' alignment.
func align(n int) int { return (n + word - 1) &^ (word - 1) }
