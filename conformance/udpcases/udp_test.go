package udpcases

import (
	"testing"

	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// FuzzParseRaw feeds arbitrary datagrams to every reader of untrusted bytes
// the UDP cases use: none may panic.
func FuzzParseRaw(f *testing.F) {
	f.Add(udplobby.AppendListRooms(nil, udplobby.ProfileSpec, 1))
	b, _ := udplobby.AppendRoomList(nil, udplobby.ProfileSpec, 2, []udplobby.Room{{ID: 1, Players: 1, MaxPlayers: 4, Port: 9000}})
	f.Add(b)
	f.Add(udplobby.AppendRoomCreated(nil, udplobby.ProfileRType17, 3, 1, 9000))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		crcDiagnosis(b)
		for _, p := range udplobby.Profiles {
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
