package udplobby_test

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// A client sends LIST_ROOMS and decodes the server's reply.
func Example() {
	p := udplobby.ProfileSpec
	buf := make([]byte, 0, 1500)
	req := udplobby.AppendListRooms(buf[:0], p, 1)
	fmt.Printf("request % x\n", req)

	reply, _ := udplobby.AppendRoomList(nil, p, 1, []udplobby.Room{
		{ID: 1, Players: 1, MaxPlayers: 4, Port: 8081, State: udplobby.Waiting},
	})
	client := udplobby.Decoder{Profile: p, Dir: udplobby.ServerToClient, Channel: udplobby.ChannelLobby}
	var m udplobby.Message
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
	b := udplobby.AppendRaw(nil, udplobby.ProfileSpec, udplobby.Header{
		PacketType: udplobby.ServerToClient, Type: udplobby.LobbyRoomList, Seq: 9,
		PayloadSize: uint16(len(payload)), OriginalSize: uint16(len(payload)),
	}, payload)
	var m udplobby.Message
	err := udplobby.Decoder{Dir: udplobby.ServerToClient}.Decode(b, &m)
	var e *udplobby.Error
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
	for _, p := range []udplobby.Profile{udplobby.ProfileSpec, udplobby.ProfileRType17} {
		b := udplobby.AppendJoinFailed(nil, p, 3)
		g, ok := udplobby.GuessProfile(b)
		fmt.Println(len(b), g, ok)
	}
	// Output:
	// 12 spec true
	// 21 rtype17 true
}
