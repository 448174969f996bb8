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

// TestSentIDs: the ring finds an id's latest send, forgets the oldest past
// maxTracked, and an id sent again awaits its answer again, wherever the
// ring had wrapped to.
func TestSentIDs(t *testing.T) {
	for _, tt := range []struct {
		name     string
		sends    int // ids 1..sends, each answered
		resend   uint16
		find     uint16
		want     bool // found
		answered bool // its latest send answered
	}{
		{"the latest", 3, 0, 3, true, true},
		{"the first, not yet forgotten", maxTracked, 0, 1, true, true},
		{"the first, forgotten past maxTracked", maxTracked + 1, 0, 1, false, false},
		{"the oldest kept", maxTracked + 5, 0, 6, true, true},
		{"an id never sent", 10, 0, 11, false, false},
		{"sent again, not answered again", maxTracked + 70, 100, 100, true, false},
		{"sent again before the ring is full", 5, 2, 2, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r sentIDs
			for id := 1; id <= tt.sends; id++ {
				r.add(uint16(id))
				r.answer(r.find(uint16(id)))
			}
			if tt.resend != 0 {
				r.add(tt.resend)
			}
			i := r.find(tt.find)
			if (i >= 0) != tt.want || (i >= 0 && r.isAnswered(i) != tt.answered) {
				t.Errorf("find(%d) = %d (answered %v); want found %v, answered %v", tt.find, i, i >= 0 && r.isAnswered(i), tt.want, tt.answered)
			}
			if len(r.ids) > maxTracked {
				t.Errorf("%d ids kept, more than %d", len(r.ids), maxTracked)
			}
		})
	}
}
