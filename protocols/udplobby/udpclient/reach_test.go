package udpclient

import (
	"testing"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// TestEchoes: the reachability check takes a datagram from another port
// for the target's answer only when it echoes one of the check's own
// sequence ids, framed under either header profile, its CRC unjudged
// (U-REPLY-SOURCE's rule); a lobby datagram with another sequence id is
// a stray, and bytes of no protocol have none.
func TestEchoes(t *testing.T) {
	const seq = 0x1234
	reply := func(p udpwire.Profile, s uint16) []byte {
		b, err := udpwire.AppendRoomList(nil, p, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	badCRC := reply(udpwire.ProfileSpec, seq)
	badCRC[len(badCRC)-1] ^= 0xFF
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"spec reply to the spec request", reply(udpwire.ProfileSpec, seq), true},
		{"rtype17 reply to the rtype17 request", reply(udpwire.ProfileRType17, seq-1), true},
		{"its CRC wrong", badCRC, true},
		{"another sequence id", reply(udpwire.ProfileSpec, seq+1), false},
		{"the identify sequence id", reply(udpwire.ProfileSpec, identifySeq), false},
		{"bytes of no protocol", []byte{0xde, 0xad, 0xbe, 0xef}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := echoes(tc.b, seq); got != tc.want {
				t.Errorf("echoes = %v, want %v", got, tc.want)
			}
		})
	}
}
