//go:build linux

package vflow

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cmsg builds one control message as the kernel lays it out, padded.
func cmsg(level, typ int, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafePointer(b))
	h.Level, h.Type = int32(level), int32(typ)
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

func sockaddrBytes(ap netip.AddrPort) []byte {
	b := make([]byte, unix.SizeofSockaddrInet4)
	binary.NativeEndian.PutUint16(b, unix.AF_INET)
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	a := ap.Addr().As4()
	copy(b[4:], a[:])
	return b
}

func timespec(sec, nsec int64) []byte {
	b := make([]byte, 16)
	binary.NativeEndian.PutUint64(b, uint64(sec))
	binary.NativeEndian.PutUint64(b[8:], uint64(nsec))
	return b
}

// extendedErr is an IP_RECVERR message's data as the kernel writes it for
// an ICMP port unreachable: struct sock_extended_err, then the offender.
func extendedErr(e unix.Errno) []byte {
	b := make([]byte, unsafe.Sizeof(unix.SockExtendedErr{})+unix.SizeofSockaddrInet4)
	binary.NativeEndian.PutUint32(b, uint32(e))
	b[4], b[5], b[6] = unix.SO_EE_ORIGIN_ICMP, 3, 3
	copy(b[16:], sockaddrBytes(netip.MustParseAddrPort("127.0.0.1:0")))
	return b
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

func TestParseCmsgs(t *testing.T) {
	flow := netip.MustParseAddrPort("127.77.3.4:20001")
	orig := cmsg(unix.IPPROTO_IP, unix.IP_ORIGDSTADDR, sockaddrBytes(flow))
	ts := cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, timespec(1700000000, 123456789))
	when := time.Unix(1700000000, 123456789)
	other := cmsg(unix.IPPROTO_IP, unix.IP_TTL, []byte{64, 0, 0, 0})
	refused := cmsg(unix.IPPROTO_IP, unix.IP_RECVERR, extendedErr(unix.ECONNREFUSED))
	for _, tc := range []struct {
		name    string
		in      []byte
		want    ancillary
		wantErr string
	}{
		{name: "none", in: nil},
		{name: "both", in: cat(orig, ts), want: ancillary{origDst: flow, time: when}},
		{name: "reversed, another between", in: cat(ts, other, orig), want: ancillary{origDst: flow, time: when}},
		{name: "new timestamp", in: cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, timespec(5, 6)), want: ancillary{time: time.Unix(5, 6)}},
		{name: "last unpadded", in: cat(ts, orig[:unix.CmsgLen(unix.SizeofSockaddrInet4)]), want: ancillary{origDst: flow, time: when}},
		{name: "short header ignored", in: cat(orig, []byte{1, 2, 3}), want: ancillary{origDst: flow}},
		{name: "length past the end", in: orig[:20], wantErr: "control message of 32 bytes in 20 left"},
		{name: "header only, unknown kind", in: cmsg(0, 0, nil), want: ancillary{}},
		{name: "origdst of IPv6 family", in: cmsg(unix.IPPROTO_IP, unix.IP_ORIGDSTADDR, make([]byte, 16)), wantErr: "IP_ORIGDSTADDR of 16 bytes is not an IPv4 sockaddr"},
		{name: "origdst short", in: cmsg(unix.IPPROTO_IP, unix.IP_ORIGDSTADDR, sockaddrBytes(flow)[:8]), wantErr: "IP_ORIGDSTADDR of 8 bytes"},
		{name: "timestamp odd size", in: cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, make([]byte, 12)), wantErr: "SO_TIMESTAMPNS of 12 bytes"},
		{name: "timestamp nanoseconds", in: cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, timespec(1, 1e9)), wantErr: "nanoseconds 1000000000 out of range"},
		{name: "an error queue's report", in: cat(ts, orig, refused), want: ancillary{origDst: flow, time: when, errno: unix.ECONNREFUSED}},
		{name: "report short", in: cmsg(unix.IPPROTO_IP, unix.IP_RECVERR, extendedErr(unix.ECONNREFUSED)[:12]), wantErr: "IP_RECVERR of 12 bytes"},
		{name: "error keeps what came before", in: cat(orig, cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, make([]byte, 4))), want: ancillary{origDst: flow}, wantErr: "SO_TIMESTAMPNS of 4 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCmsgs(tc.in)
			if got.origDst != tc.want.origDst || !got.time.Equal(tc.want.time) || got.errno != tc.want.errno {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseCmsgsBelowHeader(t *testing.T) {
	b := cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, timespec(1, 2))
	binary.NativeEndian.PutUint64(b, 4) // cmsg_len 4, shorter than its header
	if _, err := parseCmsgs(b); err == nil || !strings.Contains(err.Error(), "control message of 4 bytes") {
		t.Errorf("error %v, want one naming the 4-byte message", err)
	}
}

func FuzzParseCmsgs(f *testing.F) {
	flow := netip.MustParseAddrPort("127.77.3.4:20001")
	f.Add(cat(cmsg(unix.IPPROTO_IP, unix.IP_ORIGDSTADDR, sockaddrBytes(flow)), cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, timespec(1, 2))))
	f.Add(cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, timespec(-1, 999999999)))
	f.Add(cmsg(unix.IPPROTO_IP, unix.IP_RECVERR, extendedErr(unix.ECONNREFUSED)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseCmsgs(b)
		if err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
		if a.origDst.IsValid() && !a.origDst.Addr().Is4() {
			t.Fatalf("original destination %s is not IPv4", a.origDst)
		}
		if !a.time.IsZero() && (a.time.Nanosecond() < 0 || a.time.Nanosecond() >= 1e9) {
			t.Fatalf("time %v", a.time)
		}
	})
}

func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
