package target

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCheckAndResolve(t *testing.T) {
	for _, tt := range []struct {
		in, want, err string // want: Resolve's address; err: a part of the message
	}{
		{"127.0.0.1:8080", "127.0.0.1:8080", ""},
		{"[::ffff:127.0.0.1]:7777", "127.0.0.1:7777", ""},
		{"[::1]:7777", "[::1]:7777", ""},
		{"host:notaport", "", `port "notaport" is not 1-65535`},
		{"127.0.0.1:0", "", `port "0" is not 1-65535`},
		{"127.0.0.1:70000", "", `port "70000" is not 1-65535`},
		{":8080", "", "has no host"},
		{"127.0.0.1", "", "is not host:port"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			err := Check(tt.in)
			ap, rerr := Resolve(context.Background(), tt.in)
			if tt.err == "" {
				if err != nil || rerr != nil || ap.String() != tt.want {
					t.Errorf("Check = %v, Resolve = %v, %v; want %s", err, ap, rerr, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Check = %v, want an error containing %q", err, tt.err)
			}
			if rerr == nil || rerr.Error() != err.Error() {
				t.Errorf("Resolve = %v, want Check's error %v", rerr, err)
			}
		})
	}
}

func TestFollow(t *testing.T) {
	ap := netip.MustParseAddrPort
	loop := ap("127.0.0.1:8080")
	remote := ap("10.1.2.3:8080")
	for _, tt := range []struct {
		name   string
		target netip.AddrPort
		hosts  string // other addresses of the target's name
		allow  string
		dst    string
		want   string // the address followed, or "" with why
		why    string
	}{
		{"the target's IP", remote, "", "", "10.1.2.3:7778", "10.1.2.3:7778", ""},
		{"another IP of the target's name", remote, "10.1.2.4", "", "10.1.2.4:7778", "10.1.2.4:7778", ""},
		{"unspecified: the target's host", remote, "", "", "0.0.0.0:7778", "10.1.2.3:7778", ""},
		{"unspecified v6: the target's host", remote, "", "", "[::]:7778", "10.1.2.3:7778", ""},
		{"any loopback for a loopback target", loop, "", "", "127.0.0.2:7778", "127.0.0.2:7778", ""},
		{"TEST-NET from a loopback target", loop, "", "", "192.0.2.1:7778", "", "not the target's host"},
		{"another host", remote, "", "", "10.9.9.9:7778", "", "not the target's host"},
		{"loopback from a remote target", remote, "", "", "127.0.0.1:7778", "", "not the target's host"},
		{"an allowed host", remote, "", "10.9.9.9, 10.8.8.8", "10.9.9.9:7778", "10.9.9.9:7778", ""},
		{"a host not allowed", remote, "", "10.8.8.8", "10.9.9.9:7778", "", "not the target's host"},
		{"any", loop, "", "any", "192.0.2.1:7778", "192.0.2.1:7778", ""},
		{"port 0", loop, "", "any", "127.0.0.1:0", "", "port 0"},
		{"multicast even under any", loop, "", "any", "224.0.0.1:7778", "", "a multicast address"},
		{"broadcast even under any", loop, "", "any", "255.255.255.255:7778", "", "the broadcast address"},
		{"mapped v4 is the v4 address", remote, "", "", "[::ffff:10.1.2.3]:7778", "10.1.2.3:7778", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var hosts []netip.Addr
			if tt.hosts != "" {
				hosts = []netip.Addr{netip.MustParseAddr(tt.hosts)}
			}
			allow, err := ParseAllow(context.Background(), tt.allow)
			if err != nil {
				t.Fatal(err)
			}
			got, err := NewPolicy(tt.target, hosts, allow).Follow(ap(tt.dst))
			if tt.want != "" {
				if err != nil || got.String() != tt.want {
					t.Fatalf("Follow(%s) = %v, %v; want %s", tt.dst, got, err, tt.want)
				}
				return
			}
			var re *RedirectError
			if !errors.As(err, &re) || re.Why != tt.why {
				t.Fatalf("Follow(%s) = %v, %v; want a RedirectError %q", tt.dst, got, err, tt.why)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.dst) && !strings.Contains(msg, ap(tt.dst).String()) || !strings.Contains(msg, "--allow-redirect") {
				t.Errorf("message %q does not name the address and the flag", msg)
			}
		})
	}
}

func TestParseAllow(t *testing.T) {
	for _, tt := range []struct{ in, err string }{
		{"10.0.0.1,", "empty host"},
		{"10.0.0.1:80", "neither an IP address nor a host name"},
		{"any,10.0.0.1", `"any" stands alone`},
	} {
		if _, err := ParseAllow(context.Background(), tt.in); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseAllow(%q) = %v, want an error containing %q", tt.in, err, tt.err)
		}
	}
}
