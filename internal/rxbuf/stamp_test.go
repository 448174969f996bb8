//go:build linux

package rxbuf

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
)

// cmsg builds one control message as recvmsg(2) lays it out here.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, align(unix.SizeofCmsghdr+len(data)))
	n := uint64(unix.SizeofCmsghdr + len(data))
	if word == 8 {
		binary.NativeEndian.PutUint64(b, n)
	} else {
		binary.NativeEndian.PutUint32(b, uint32(n))
	}
	binary.NativeEndian.PutUint32(b[word:], uint32(level))
	binary.NativeEndian.PutUint32(b[word+4:], uint32(typ))
	copy(b[unix.SizeofCmsghdr:], data)
	return b
}

func timespec(sec, nsec int64) []byte {
	b := make([]byte, 2*word)
	if word == 8 {
		binary.NativeEndian.PutUint64(b, uint64(sec))
		binary.NativeEndian.PutUint64(b[8:], uint64(nsec))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(sec))
		binary.NativeEndian.PutUint32(b[4:], uint32(nsec))
	}
	return b
}

func join(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestParseStamp(t *testing.T) {
	const sec, nsec = 1_790_000_000, 123_456_789
	stamp := cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(sec, nsec))
	other := cmsg(unix.IPPROTO_IP, unix.IP_PKTINFO, make([]byte, 12))
	for _, tc := range []struct {
		name string
		oob  []byte
		want int64
	}{
		{"none", nil, 0},
		{"the stamp alone", stamp, sec*1e9 + nsec},
		{"after another message", join(other, stamp), sec*1e9 + nsec},
		{"before another message", join(stamp, other), sec*1e9 + nsec},
		{"another message only", other, 0},
		{"microsecond stamp (SO_TIMESTAMP), not ours", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMP, timespec(sec, nsec)), 0},
		{"header cut short", stamp[:unix.SizeofCmsghdr-1], 0},
		{"timespec cut short", stamp[:unix.SizeofCmsghdr+word], 0},
		{"length past the buffer", func() []byte { b := join(stamp); b[0] = 0xff; return b }(), 0},
		{"length below the header", func() []byte { b := join(stamp); b[0] = 1; return b }(), 0},
		{"nanoseconds out of range", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(sec, 1e9)), 0},
		{"zero time", cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(0, 0)), 0},
	} {
		if got := ParseStamp(tc.oob); got != tc.want {
			t.Errorf("%s: ParseStamp = %d, want %d", tc.name, got, tc.want)
		}
	}
	both := join(other, stamp)
	if n := memfig.Allocs(100, func() { ParseStamp(both) }); n != 0 {
		t.Errorf("ParseStamp allocates %.0f times", n)
	}
}

func FuzzParseStamp(f *testing.F) {
	f.Add(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(1_790_000_000, 5)))
	f.Add(join(cmsg(unix.IPPROTO_IP, unix.IP_PKTINFO, make([]byte, 12)), cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespec(1, 1))))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, oob []byte) {
		ns := ParseStamp(oob)
		if ns < 0 {
			t.Fatalf("ParseStamp = %d: a stamp before 1970", ns)
		}
	})
}

// TestRecvStamp: a socket with stamps enabled gets the kernel's receive
// stamp with each datagram, on the wall clock, before the reader saw it;
// without, none.
func TestRecvStamp(t *testing.T) {
	for _, enable := range []bool{true, false} {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		raw, err := c.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		if enable {
			if err := EnableStamps(raw); err != nil {
				t.Fatalf("EnableStamps: %v", err)
			}
		}
		before := time.Now().UnixNano()
		if _, err := c.WriteToUDPAddrPort([]byte("hello"), c.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
			t.Fatal(err)
		}
		r := NewConn(c)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		data, _, err := r.Read()
		stamp := r.Stamp
		after := time.Now().UnixNano()
		if err != nil || string(data) != "hello" {
			t.Fatalf("Read = %q, %v", data, err)
		}
		switch {
		case enable && (stamp < before || stamp > after):
			t.Errorf("stamp %d not between the send (%d) and the read's return (%d)", stamp, before, after)
		case !enable && stamp != 0:
			t.Errorf("a stamp (%d) on a socket without them", stamp)
		}
	}
}
