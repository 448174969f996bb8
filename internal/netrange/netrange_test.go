package netrange

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParsePorts(t *testing.T) {
	tests := []struct {
		in      string
		want    PortRange
		wantErr string
	}{
		{"8081-8180", PortRange{8081, 8180}, ""},
		{"9000", PortRange{9000, 9000}, ""}, // a single port
		{" 1 - 2 ", PortRange{1, 2}, ""},    // spaces
		{"65535", PortRange{65535, 65535}, ""},
		{"8180-8081", PortRange{}, "first port is above the last"},
		{"0-10", PortRange{}, "not a port range"}, // port 0
		{"10-0", PortRange{}, "not a port range"},
		{"1-65536", PortRange{}, "not a port range"}, // too large
		{"a-b", PortRange{}, "not a port range"},
		{"", PortRange{}, "not a port range"},
		{"1-2-3", PortRange{}, "not a port range"},
		{"10x-20", PortRange{}, "not a port range"}, // trailing junk
		{"+1-2", PortRange{}, "not a port range"},   // a sign
		{"-5", PortRange{}, "not a port range"},
	}
	for _, tt := range tests {
		got, err := ParsePorts(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePorts(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParsePorts(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestPortRangeMethods(t *testing.T) {
	r := PortRange{10, 19}
	if r.Size() != 10 || !r.Contains(10) || !r.Contains(19) || r.Contains(20) || r.Contains(9) || r.String() != "10-19" || r.IsZero() {
		t.Errorf("PortRange methods wrong for %v", r)
	}
	if (PortRange{}).Size() != 0 || !(PortRange{}).IsZero() {
		t.Error("zero PortRange is not empty")
	}
}

func TestParseAddrs(t *testing.T) {
	tests := []struct {
		in      string
		want    string // addresses joined by spaces
		wantErr string
	}{
		{"127.0.0.1", "127.0.0.1", ""},
		{"127.0.0.1-127.0.0.3", "127.0.0.1 127.0.0.2 127.0.0.3", ""},
		{"127.0.0.1, 127.0.0.9 - 127.0.0.10", "127.0.0.1 127.0.0.9 127.0.0.10", ""},
		{"127.0.0.255-127.0.1.1", "127.0.0.255 127.0.1.0 127.0.1.1", ""},       // crosses a /24
		{"127.0.0.2,127.0.0.1-127.0.0.3", "127.0.0.2 127.0.0.1 127.0.0.3", ""}, // duplicate kept once, first place
		{"::ffff:127.0.0.1", "127.0.0.1", ""},                                  // unmapped
		{"::1-::3", "::1 ::2 ::3", ""},
		{"127.0.0.1,", "127.0.0.1", ""}, // empty part
		{"127.0.0.3-127.0.0.1", "", "first address is above the last"},
		{"127.0.0.1-::1", "", "mixes IPv4 and IPv6"},
		{"localhost", "", `"localhost" is not an IP address`},
		{"127.0.0.1-x", "", `"x" is not an IP address`},
		{"", "", "no address"},
		{" , ", "", "no address"},
		{"10.0.0.0-10.1.0.0", "", "more than 65536 addresses"}, // 65537
		{"10.0.0.0-10.0.255.255", "", ""},                      // exactly MaxAddrs: checked below
		{"10.0.0.0-10.0.255.255,127.0.0.1", "", "more than 65536 addresses"},
	}
	for _, tt := range tests {
		got, err := ParseAddrs(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseAddrs(%q) error %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseAddrs(%q): %v", tt.in, err)
			continue
		}
		if tt.want == "" {
			if len(got) != MaxAddrs {
				t.Errorf("ParseAddrs(%q) = %d addresses, want %d", tt.in, len(got), MaxAddrs)
			}
			continue
		}
		var s []string
		for _, a := range got {
			s = append(s, a.String())
		}
		if strings.Join(s, " ") != tt.want {
			t.Errorf("ParseAddrs(%q) = %v, want %s", tt.in, s, tt.want)
		}
	}
}

func TestDefaultSources(t *testing.T) {
	loop := netip.MustParseAddr("127.0.0.1")
	tests := []struct {
		target netip.Addr
		n      int
		count  int
		last   string
	}{
		{loop, ForClients(1), 1, "127.0.0.1"},
		{loop, ForClients(100), 1, "127.0.0.1"},
		{loop, ForClients(101), 2, "127.0.0.2"},
		{loop, ForClients(10000), 100, "127.0.0.100"},
		{loop, ForClients(1 << 20), 254, "127.0.0.254"},
		{loop, ForClients(0), 1, "127.0.0.1"},
		{loop, ConformSources, 32, "127.0.0.32"},
		{netip.MustParseAddr("127.9.9.9"), 3, 3, "127.0.0.3"},
		{netip.MustParseAddr("::ffff:127.0.0.1"), 2, 2, "127.0.0.2"},
		{netip.MustParseAddr("::1"), 5, 0, ""},
		{netip.MustParseAddr("192.0.2.1"), 5, 0, ""},
		{netip.Addr{}, 5, 0, ""},
	}
	for _, tc := range tests {
		got := DefaultSources(tc.target, tc.n)
		if len(got) != tc.count || (tc.count > 0 && got[len(got)-1].String() != tc.last) {
			t.Errorf("DefaultSources(%v, %d) = %v, want %d ending %s", tc.target, tc.n, got, tc.count, tc.last)
		}
		for i, a := range got {
			if want := netip.AddrFrom4([4]byte{127, 0, 0, byte(1 + i)}); a != want {
				t.Errorf("DefaultSources(%v, %d)[%d] = %v, want %v", tc.target, tc.n, i, a, want)
			}
		}
	}
}

// FuzzParseAddrs: the parser never panics, and what it accepts is a
// non-empty, duplicate-free list of at most MaxAddrs unmapped addresses.
func FuzzParseAddrs(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "127.0.0.1-127.0.0.32", "127.0.0.1, ::1-::3", "10.0.0.0-10.1.0.0", "a-b-c", ",,", "::ffff:1.2.3.4-1.2.3.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addrs, err := ParseAddrs(s)
		if err != nil {
			return
		}
		if len(addrs) == 0 || len(addrs) > MaxAddrs {
			t.Fatalf("ParseAddrs(%q) accepted %d addresses", s, len(addrs))
		}
		seen := map[netip.Addr]bool{}
		for _, a := range addrs {
			if seen[a] || a.Is4In6() || !a.IsValid() {
				t.Fatalf("ParseAddrs(%q): bad or repeated address %v", s, a)
			}
			seen[a] = true
		}
	})
}

// FuzzParsePorts: the parser never panics, and what it accepts is a
// non-empty range within 1-65535 whose String parses back to itself.
func FuzzParsePorts(f *testing.F) {
	for _, s := range []string{"8081-8180", "9000", " 1 - 2 ", "0-1", "1-2-3", "65535-65535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParsePorts(s)
		if err != nil {
			return
		}
		if r.First == 0 || r.First > r.Last || r.Size() < 1 {
			t.Fatalf("ParsePorts(%q) accepted %v", s, r)
		}
		if back, err := ParsePorts(r.String()); err != nil || back != r {
			t.Fatalf("ParsePorts(%q) = %v, but its String parses to %v, %v", s, r, back, err)
		}
	})
}
