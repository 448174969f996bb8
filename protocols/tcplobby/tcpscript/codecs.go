package tcpscript

import (
	"encoding/binary"
	"math"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/script"
)

// codec is one packet type's fields for scripts, and how they are put
// into and got out of its tcpwire message. put may return a fix, applied
// to the payload tcpwire made (a count sent as given).
type codec struct {
	fromClient bool
	fields     []script.Field
	put        func(m tcpwire.Message, r *in) func([]byte)
	get        func(m tcpwire.Message) map[string]any
}

func intField(name string, width int) script.Field {
	return script.Field{Name: name, Kind: script.Int, Bits: width}
}

func textField(name string, max int) script.Field {
	return script.Field{Name: name, Kind: script.Text, Max: max}
}

func boolField(name string) script.Field { return script.Field{Name: name, Kind: script.Bool} }

func autoCount(name string) script.Field {
	f := intField(name, 8)
	f.Auto = true
	return f
}

// The fields of tcp-lobby.md §3.3's structures.
var (
	roomInfo = []script.Field{intField("id", 32), textField("name", tcpwire.NameSize),
		intField("playerCount", 8), intField("maxPlayers", 8), boolField("inGame")}
	playerInfo = []script.Field{intField("number", 8), intField("hash", 64),
		textField("name", tcpwire.NameSize), boolField("ready")}
	roomName   = textField("roomName", tcpwire.NameSize)
	playerName = textField("playerName", tcpwire.NameSize)
	roomID     = intField("roomId", 32)
	playerHash = intField("playerHash", 64)
	rooms      = script.Field{Name: "rooms", Kind: script.List, Max: tcpwire.MaxRooms, Elem: roomInfo}
	players    = script.Field{Name: "players", Kind: script.List, Max: tcpwire.MaxPlayers, Elem: playerInfo}
)

// codecs are the 18 types' codecs.
var codecs = map[tcpwire.Type]codec{
	tcpwire.TypeListRoomsReq: bare(true),
	tcpwire.TypeListRoomsAck: {fields: []script.Field{autoCount("roomCount"), rooms},
		put: putListRoomsAck, get: getListRoomsAck},
	tcpwire.TypeCreateRoomReq: {fromClient: true, fields: []script.Field{roomName, playerName},
		put: putCreateRoomReq, get: getCreateRoomReq},
	tcpwire.TypeCreateRoomAck: {fields: []script.Field{roomID, playerHash},
		put: putCreateRoomAck, get: getCreateRoomAck},
	tcpwire.TypeJoinRoomReq: {fromClient: true, fields: []script.Field{roomID, playerName},
		put: putJoinRoomReq, get: getJoinRoomReq},
	tcpwire.TypeJoinRoomAck: {fields: []script.Field{intField("status", 8), playerHash, autoCount("playerCount"), players},
		put: putJoinRoomAck, get: getJoinRoomAck},
	tcpwire.TypeRoomUpdate: {fields: []script.Field{autoCount("playerCount"), players},
		put: putRoomUpdate, get: getRoomUpdate},
	tcpwire.TypeConnectReq: {fromClient: true, fields: []script.Field{playerName},
		put: putConnectReq, get: getConnectReq},
	tcpwire.TypeConnectAck: {fields: []script.Field{boolField("success"), playerHash},
		put: putConnectAck, get: getConnectAck},
	tcpwire.TypePlayerJoin: {fields: playerInfo, put: putPlayerJoin, get: getPlayerJoin},
	tcpwire.TypeReadyReq:   bare(true),
	tcpwire.TypePlayerReady: {fields: []script.Field{playerHash, boolField("ready")},
		put: putPlayerReady, get: getPlayerReady},
	tcpwire.TypeStartReq: bare(true),
	tcpwire.TypeGameStart: {fields: []script.Field{textField("serverIp", tcpwire.IPSize), intField("udpPort", 16),
		autoCount("playerCount"), players, {Name: "spawnPositions", Kind: script.Bytes, Max: spawnSize}},
		put: putGameStart, get: getGameStart},
	tcpwire.TypeDisconnect: bare(true),
	tcpwire.TypePlayerLeft: {fields: []script.Field{playerHash}, put: putPlayerLeft, get: getPlayerLeft},
	tcpwire.TypeCountdown: {fields: []script.Field{intField("secondsRemaining", 8)},
		put: putCountdown, get: getCountdown},
	tcpwire.TypeErrorMsg: {fields: []script.Field{intField("errorCode", 8), textField("message", tcpwire.MaxErrorText)},
		put: putErrorMsg, get: getErrorMsg},
}

// bare is the codec of a type with no field but its type byte.
func bare(fromClient bool) codec {
	return codec{fromClient: fromClient,
		put: func(tcpwire.Message, *in) func([]byte) { return nil },
		get: func(tcpwire.Message) map[string]any { return map[string]any{} }}
}

func putRoom(ri *tcpwire.RoomInfo, r *in) {
	ri.ID = uint32(r.uint("id", 32))
	r.chars(ri.Name[:], "name")
	ri.PlayerCount = uint8(r.uint("playerCount", 8))
	ri.MaxPlayers = uint8(r.uint("maxPlayers", 8))
	ri.InGame = r.flag("inGame")
}

func getRoom(ri *tcpwire.RoomInfo) map[string]any {
	return map[string]any{"id": uint64(ri.ID), "name": ri.Name.String(),
		"playerCount": uint64(ri.PlayerCount), "maxPlayers": uint64(ri.MaxPlayers), "inGame": ri.InGame}
}

func putPlayer(pi *tcpwire.PlayerInfo, r *in) {
	pi.Number = uint8(r.uint("number", 8))
	pi.Hash = r.uint("hash", 64)
	r.chars(pi.Name[:], "name")
	pi.Ready = r.flag("ready")
}

func getPlayer(pi *tcpwire.PlayerInfo) map[string]any {
	return map[string]any{"number": uint64(pi.Number), "hash": pi.Hash, "name": pi.Name.String(), "ready": pi.Ready}
}

func putPlayers(ps []tcpwire.PlayerInfo, r *in) int {
	return r.list("players", len(ps), func(i int, e *in) { putPlayer(&ps[i], e) })
}

func getPlayers(ps []tcpwire.PlayerInfo) []map[string]any {
	out := make([]map[string]any, len(ps))
	for i := range ps {
		out[i] = getPlayer(&ps[i])
	}
	return out
}

func putListRoomsAck(m tcpwire.Message, r *in) func([]byte) {
	a := m.(*tcpwire.ListRoomsAck)
	n := r.list("rooms", tcpwire.MaxRooms, func(i int, e *in) { putRoom(&a.Rooms[i], e) })
	var fix func([]byte)
	a.Count, fix = r.count("roomCount", n, 1)
	return fix
}

func getListRoomsAck(m tcpwire.Message) map[string]any {
	a := m.(*tcpwire.ListRoomsAck)
	rs := make([]map[string]any, a.Count)
	for i := range rs {
		rs[i] = getRoom(&a.Rooms[i])
	}
	return map[string]any{"roomCount": uint64(a.Count), "rooms": rs}
}

func putCreateRoomReq(m tcpwire.Message, r *in) func([]byte) {
	q := m.(*tcpwire.CreateRoomReq)
	r.chars(q.RoomName[:], "roomName")
	r.chars(q.PlayerName[:], "playerName")
	return nil
}

func getCreateRoomReq(m tcpwire.Message) map[string]any {
	q := m.(*tcpwire.CreateRoomReq)
	return map[string]any{"roomName": q.RoomName.String(), "playerName": q.PlayerName.String()}
}

func putCreateRoomAck(m tcpwire.Message, r *in) func([]byte) {
	a := m.(*tcpwire.CreateRoomAck)
	a.RoomID = uint32(r.uint("roomId", 32))
	a.PlayerHash = r.uint("playerHash", 64)
	return nil
}

func getCreateRoomAck(m tcpwire.Message) map[string]any {
	a := m.(*tcpwire.CreateRoomAck)
	return map[string]any{"roomId": uint64(a.RoomID), "playerHash": a.PlayerHash}
}

func putJoinRoomReq(m tcpwire.Message, r *in) func([]byte) {
	q := m.(*tcpwire.JoinRoomReq)
	q.RoomID = uint32(r.uint("roomId", 32))
	r.chars(q.PlayerName[:], "playerName")
	return nil
}

func getJoinRoomReq(m tcpwire.Message) map[string]any {
	q := m.(*tcpwire.JoinRoomReq)
	return map[string]any{"roomId": uint64(q.RoomID), "playerName": q.PlayerName.String()}
}

func putJoinRoomAck(m tcpwire.Message, r *in) func([]byte) {
	a := m.(*tcpwire.JoinRoomAck)
	a.Status = tcpwire.JoinStatus(r.uint("status", 8))
	a.PlayerHash = r.uint("playerHash", 64)
	n := putPlayers(a.Players[:], r)
	var fix func([]byte)
	a.Count, fix = r.count("playerCount", n, 10)
	return fix
}

func getJoinRoomAck(m tcpwire.Message) map[string]any {
	a := m.(*tcpwire.JoinRoomAck)
	return map[string]any{"status": uint64(a.Status), "playerHash": a.PlayerHash,
		"playerCount": uint64(a.Count), "players": getPlayers(a.Players[:a.Count])}
}

func putRoomUpdate(m tcpwire.Message, r *in) func([]byte) {
	a := m.(*tcpwire.RoomUpdate)
	n := putPlayers(a.Players[:], r)
	var fix func([]byte)
	a.Count, fix = r.count("playerCount", n, 1)
	return fix
}

func getRoomUpdate(m tcpwire.Message) map[string]any {
	a := m.(*tcpwire.RoomUpdate)
	return map[string]any{"playerCount": uint64(a.Count), "players": getPlayers(a.Players[:a.Count])}
}

func putConnectReq(m tcpwire.Message, r *in) func([]byte) {
	r.chars(m.(*tcpwire.ConnectReq).PlayerName[:], "playerName")
	return nil
}

func getConnectReq(m tcpwire.Message) map[string]any {
	return map[string]any{"playerName": m.(*tcpwire.ConnectReq).PlayerName.String()}
}

func putConnectAck(m tcpwire.Message, r *in) func([]byte) {
	a := m.(*tcpwire.ConnectAck)
	a.Success = r.flag("success")
	a.PlayerHash = r.uint("playerHash", 64)
	return nil
}

func getConnectAck(m tcpwire.Message) map[string]any {
	a := m.(*tcpwire.ConnectAck)
	return map[string]any{"success": a.Success, "playerHash": a.PlayerHash}
}

func putPlayerJoin(m tcpwire.Message, r *in) func([]byte) {
	putPlayer(&m.(*tcpwire.PlayerJoin).Player, r)
	return nil
}

func getPlayerJoin(m tcpwire.Message) map[string]any {
	return getPlayer(&m.(*tcpwire.PlayerJoin).Player)
}

func putPlayerReady(m tcpwire.Message, r *in) func([]byte) {
	a := m.(*tcpwire.PlayerReady)
	a.PlayerHash = r.uint("playerHash", 64)
	a.Ready = r.flag("ready")
	return nil
}

func getPlayerReady(m tcpwire.Message) map[string]any {
	a := m.(*tcpwire.PlayerReady)
	return map[string]any{"playerHash": a.PlayerHash, "ready": a.Ready}
}

// spawnSize is GameStartInfo's SpawnPositions, float[4][2].
const spawnSize = tcpwire.MaxPlayers * 2 * 4

func putGameStart(m tcpwire.Message, r *in) func([]byte) {
	g := m.(*tcpwire.GameStart)
	r.chars(g.ServerIP[:], "serverIp")
	g.UDPPort = uint16(r.uint("udpPort", 16))
	n := putPlayers(g.Players[:], r)
	g.PlayerCount = uint8(r.uint("playerCount", 8))
	if !r.seen {
		g.PlayerCount = uint8(n)
	}
	var sp [spawnSize]byte
	copy(sp[:], r.raw("spawnPositions", spawnSize))
	for i := range g.Spawn {
		g.Spawn[i][0] = math.Float32frombits(binary.LittleEndian.Uint32(sp[8*i:]))
		g.Spawn[i][1] = math.Float32frombits(binary.LittleEndian.Uint32(sp[8*i+4:]))
	}
	return nil
}

func getGameStart(m tcpwire.Message) map[string]any {
	g := m.(*tcpwire.GameStart)
	sp := make([]byte, 0, spawnSize)
	for _, xy := range g.Spawn {
		sp = binary.LittleEndian.AppendUint32(sp, math.Float32bits(xy[0]))
		sp = binary.LittleEndian.AppendUint32(sp, math.Float32bits(xy[1]))
	}
	return map[string]any{"serverIp": g.ServerIP.String(), "udpPort": uint64(g.UDPPort),
		"playerCount": uint64(g.PlayerCount), "players": getPlayers(g.Players[:]), "spawnPositions": sp}
}

func putPlayerLeft(m tcpwire.Message, r *in) func([]byte) {
	m.(*tcpwire.PlayerLeft).PlayerHash = r.uint("playerHash", 64)
	return nil
}

func getPlayerLeft(m tcpwire.Message) map[string]any {
	return map[string]any{"playerHash": m.(*tcpwire.PlayerLeft).PlayerHash}
}

func putCountdown(m tcpwire.Message, r *in) func([]byte) {
	m.(*tcpwire.Countdown).Seconds = uint8(r.uint("secondsRemaining", 8))
	return nil
}

func getCountdown(m tcpwire.Message) map[string]any {
	return map[string]any{"secondsRemaining": uint64(m.(*tcpwire.Countdown).Seconds)}
}

func putErrorMsg(m tcpwire.Message, r *in) func([]byte) {
	e := m.(*tcpwire.ErrorMsg)
	e.Code = tcpwire.ErrorCode(r.uint("errorCode", 8))
	e.Text = r.text("message", tcpwire.MaxErrorText)
	return nil
}

func getErrorMsg(m tcpwire.Message) map[string]any {
	e := m.(*tcpwire.ErrorMsg)
	return map[string]any{"errorCode": uint64(e.Code), "message": e.Text}
}
