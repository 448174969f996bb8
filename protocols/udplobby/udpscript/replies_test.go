package udpscript

import (
	"testing"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// TestStaleReplies: the answer to the last request is fresh; a second
// reply to an answered request is stale and a U-REPLY-DUP; a first, late
// answer to an earlier request is stale without a violation; a reply to
// an id never sent, and an instance's event, are left to the expect.
func TestStaleReplies(t *testing.T) {
	s := Catalog.NewSession(nil)
	send := func(name string) {
		if _, err := Catalog.Encode(s, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	reply := func(seq uint16) []byte { return udpwire.AppendRoomCreated(nil, udpwire.ProfileSpec, seq, 7, 9000) }
	send("LOBBY_CREATE_ROOM") // seq 1
	send("LOBBY_CREATE_ROOM") // seq 2
	for _, tt := range []struct {
		name  string
		b     []byte
		stale bool
		rule  string
	}{
		{"the last request's answer", reply(2), false, ""},
		{"its duplicate", reply(2), true, udpclient.RuleUReplyDup},
		{"a late first answer to the earlier request", reply(1), true, ""},
		{"then its duplicate", reply(1), true, udpclient.RuleUReplyDup},
		{"an id never sent", reply(9), false, ""},
		{"an instance's event", allReady(t), false, ""},
	} {
		ch := "lobby"
		if tt.name == "an instance's event" {
			ch = "instance"
		}
		d := Catalog.Decode(s, ch, tt.b)
		rule := ""
		for _, v := range d.Violations {
			rule = v.Rule
		}
		if d.Stale != tt.stale || rule != tt.rule {
			t.Errorf("%s: stale %v, rule %q; want %v, %q (%+v)", tt.name, d.Stale, rule, tt.stale, tt.rule, d.Violations)
		}
		if d.Stale && d.Route != nil {
			t.Errorf("%s: a stale reply routes the client", tt.name)
		}
	}
}

func allReady(t *testing.T) []byte {
	b, err := udpwire.AppendEmpty(nil, udpwire.ProfileSpec, udpwire.ServerAllReady, 2)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
