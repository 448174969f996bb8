package levcases

import (
	"testing"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// TestMissingNamesWhatCame: a case whose request drew none of the
// responses it wanted says what answered it instead, with the payload's
// bytes, and says "nothing answered it" only when nothing did.
func TestMissingNamesWhatCame(t *testing.T) {
	other := lv.Message{Kind: lv.KindResponse, Number: 9, Type: uint16(lv.ResServerStatus), ResponseTo: 4, Payload: []byte{1, 2}}
	elsewhere := lv.Message{Kind: lv.KindResponse, Number: 8, Type: uint16(lv.ResServerAllow), ResponseTo: 3}
	for _, tt := range []struct {
		name string
		msgs []lv.Message
		want string
	}{
		{"nothing", nil, "no ServerAllow/ServerDisallow answering JoinServer: nothing answered it (no response naming #4)"},
		{"another request's answer only", []lv.Message{elsewhere}, "no ServerAllow/ServerDisallow answering JoinServer: nothing answered it (no response naming #4)"},
		{"another response", []lv.Message{elsewhere, other}, "no ServerAllow/ServerDisallow answering JoinServer; it was answered by Response ServerStatus #9 to 4 (payload 01 02)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &levFlow{num: map[lv.RequestType]uint32{lv.ReqJoinServer: 4}, msgs: tt.msgs}
			if got := f.missing(lv.ReqJoinServer, "ServerAllow/ServerDisallow"); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
