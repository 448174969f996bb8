package udpwire_test

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// A client sends LIST_ROOMS and decodes the server's reply.
func Example() {
	p := udpwire.ProfileSpec
	buf := make([]byte, 0, 1500)
	req := udpwire.AppendListRooms(buf[:0], p, 1)
	fmt.Printf("request % x\n", req)

	reply, _ := udpwire.AppendRoomList(nil, p, 1, []udpwire.Room{
		{ID: 1, Players: 1, MaxPlayers: 4, Port: 8081, State: udpwire.Waiting},
	})
	client := udpwire.Decoder{Profile: p, Dir: udpwire.ServerToClient, Channel: udpwire.ChannelLobby}
	var m udpwire.Message
	if err := client.Decode(reply, &m); err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < m.Rooms.Len(); i++ {
		r := m.Rooms.At(i)
		fmt.Printf("%v seq %d: room %d %d/%d port %d %v\n", m.Type, m.Seq, r.ID, r.Players, r.MaxPlayers, r.Port, r.State)
	}
	// Output:
	// request 01 40 00 01 00 00 00 00 d0 e3 83 3e
	// LOBBY_ROOM_LIST seq 1: room 1 1/4 port 8081 Waiting
}

// A ROOM_LIST in the Lobby System layout (udp-lobby.md §5) is rejected with a diagnosis.
func ExampleError() {
	payload := binary.BigEndian.AppendUint32(nil, 1) // u32 roomCount
	payload = append(payload, 0, 0, 0, 1, 0x1f, 0x91, 0, 0, 0, 0, 1, 0, 0, 0, 4)
	b := udpwire.AppendRaw(nil, udpwire.ProfileSpec, udpwire.Header{
		PacketType: udpwire.ServerToClient, Type: udpwire.LobbyRoomList, Seq: 9,
		PayloadSize: uint16(len(payload)), OriginalSize: uint16(len(payload)),
	}, payload)
	var m udpwire.Message
	err := udpwire.Decoder{Dir: udpwire.ServerToClient}.Decode(b, &m)
	var e *udpwire.Error
	if errors.As(err, &e) {
		fmt.Println(e.Rule, e.Diagnosis, e.Header.Seq)
		fmt.Println(err)
	}
	// Output:
	// U-ROOMLIST-COUNT lobby-system-layout 9
	// udplobby: U-ROOMLIST-COUNT: ROOM_LIST roomCount disagrees with payloadSize = 2 + 11×roomCount (roomCount 0 needs payloadSize 2, got 19; offset 8; S→C LOBBY_ROOM_LIST seq 9; payload fits the layout of the Lobby System page (u32 roomCount, 15-byte entries), not the layout of udp-lobby.md §5)
}

// GuessProfile tells the header profile from one reply.
func ExampleGuessProfile() {
	for _, p := range []udpwire.Profile{udpwire.ProfileSpec, udpwire.ProfileRType17} {
		b := udpwire.AppendJoinFailed(nil, p, 3)
		g, ok := udpwire.GuessProfile(b)
		fmt.Println(len(b), g, ok)
	}
	// Output:
	// 12 spec true
	// 21 rtype17 true
}
