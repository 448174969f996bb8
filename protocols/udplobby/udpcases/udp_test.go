package udpcases

import (
	"testing"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// FuzzParseRaw feeds arbitrary datagrams to every reader of untrusted bytes
// the UDP cases use: none may panic.
func FuzzParseRaw(f *testing.F) {
	f.Add(udpwire.AppendListRooms(nil, udpwire.ProfileSpec, 1))
	b, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, 2, []udpwire.Room{{ID: 1, Players: 1, MaxPlayers: 4, Port: 9000}})
	f.Add(b)
	f.Add(udpwire.AppendRoomCreated(nil, udpwire.ProfileRType17, 3, 1, 9000))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		crcDiagnosis(b)
		for _, p := range udpwire.Profiles {
			m, ok := parseRaw(b, p)
			if !ok {
				continue
			}
			m.rooms()
			m.roomRef()
			_ = m.String()
			listDiagnosis(p, m)
		}
	})
}
