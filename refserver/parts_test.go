package refserver_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	reflev "github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	reftcp "github.com/lobbybench/lobbybench/protocols/tcplobby/tcpserver"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
)

// TestOnlyAndAddr: Only keeps exactly the parts named (an unknown name is
// an error naming the parts), and a started server gives the address of
// each running part and the zero address for the others; its counters, in
// text (prefixed "<part>.") and in JSON (keyed "<part>" with '_' for '-'),
// hold the running parts only.
func TestOnlyAndAddr(t *testing.T) {
	if _, err := refserver.Loopback().Only("udp"); err == nil || !strings.Contains(err.Error(), strings.Join(refserver.PartNames(), ", ")) {
		t.Errorf("Only(unknown) = %v, want an error naming the parts %v", err, refserver.PartNames())
	}
	every := map[string]bool{}
	for _, p := range refserver.PartNames() {
		every[p] = true
	}
	for _, tc := range []struct {
		parts []string
		want  map[string]bool
	}{
		{[]string{udpwire.ProtocolName}, map[string]bool{udpwire.ProtocolName: true}},
		{[]string{tcpwire.ProtocolName, udpwire.ProtocolName}, map[string]bool{udpwire.ProtocolName: true, tcpwire.ProtocolName: true}},
		// The TCP lobby needs the UDP lobby's instances: Only keeps it.
		{[]string{tcpwire.ProtocolName}, map[string]bool{udpwire.ProtocolName: true, tcpwire.ProtocolName: true}},
		{[]string{lv.ProtocolName}, map[string]bool{lv.ProtocolName: true}},
		{refserver.PartNames(), every}, // whatever parts are linked
	} {
		c, err := refserver.Loopback().Only(tc.parts...)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := refserver.Start(context.Background(), c)
		if err != nil {
			t.Fatalf("%v: %v", tc.parts, err)
		}
		for _, p := range refserver.PartNames() {
			if got := srv.Addr(p).IsValid(); got != tc.want[p] {
				t.Errorf("%v: Addr(%s) valid %v, want %v", tc.parts, p, got, tc.want[p])
			}
		}
		st := srv.Stats()
		if (refudp.StatsOf(st) != nil) != tc.want[udpwire.ProtocolName] || (reftcp.StatsOf(st) != nil) != tc.want[tcpwire.ProtocolName] || (reflev.StatsOf(st) != nil) != tc.want[lv.ProtocolName] {
			t.Errorf("%v: Stats has parts udp %v tcp %v leviathan %v", tc.parts, refudp.StatsOf(st) != nil, reftcp.StatsOf(st) != nil, reflev.StatsOf(st) != nil)
		}
		var b strings.Builder
		if err := st.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, p := range refserver.PartNames() {
			if got := strings.Contains(b.String(), "\n"+p+".") || strings.HasPrefix(b.String(), p+"."); got != tc.want[p] {
				t.Errorf("%v: text has %s. lines %v, want %v", tc.parts, p, got, tc.want[p])
			}
		}
		for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if name, _, _ := strings.Cut(line, "."); !tc.want[name] {
				t.Errorf("%v: text line %q is not prefixed with a running part's name", tc.parts, line)
			}
		}
		js, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(js, &keys); err != nil {
			t.Fatal(err)
		}
		var wantKeys []string
		for p := range tc.want {
			wantKeys = append(wantKeys, strings.ReplaceAll(p, "-", "_"))
		}
		if got := slices.Sorted(maps.Keys(keys)); !slices.Equal(got, slices.Sorted(slices.Values(wantKeys))) {
			t.Errorf("%v: Stats JSON keys %v, want %v", tc.parts, got, slices.Sorted(slices.Values(wantKeys)))
		}
		srv.Close()
		srv.Close() // idempotent
	}
	if _, err := refserver.Start(context.Background(), refserver.Config{}); err == nil {
		t.Error("a server with no part started")
	}
}
