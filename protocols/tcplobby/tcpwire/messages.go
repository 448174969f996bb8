package tcpwire

import (
	"bytes"
	"encoding/binary"
	"math"
	"unicode/utf8"
)

var le = binary.LittleEndian

// Options tune decoding. The zero value is strict decoding.
type Options struct {
	// Lenient accepts what a tolerant peer would: unterminated char[N]
	// strings (all N bytes kept), bool bytes other than 0/1 (read as true),
	// JOIN_ROOM_ACK statuses outside 0-3 (kept raw), PlayerInfo slot numbers
	// outside 1-4, and ERROR_MSG text that is not UTF-8. Sizes and counts are
	// always checked: without them a frame cannot be read at all.
	Lenient bool
	// Pedantic additionally rejects non-zero bytes after a string's NUL
	// (RuleStringPadding; seed §8.3 says unused bytes "should" be zero).
	Pedantic bool
}

// Message is implemented by a pointer to each of the 18 packet structs.
type Message interface {
	// Type returns the packet type.
	Type() Type
	// Size returns the payload size AppendPayload will append (type byte included).
	Size() int
	// AppendPayload appends the payload (type byte first, no length prefix) to dst.
	AppendPayload(dst []byte) []byte
	// DecodeOpts decodes payload p (type byte first) into the message,
	// overwriting every field. On error the message's content is unspecified.
	DecodeOpts(p []byte, o Options) error
}

// JoinStatus is JOIN_ROOM_ACK's Status (tcp-lobby.md §5.1).
type JoinStatus uint8

// JoinStatus values.
const (
	JoinSuccess      JoinStatus = 0x00
	JoinRoomFull     JoinStatus = 0x01
	JoinRoomNotFound JoinStatus = 0x02
	JoinRoomInGame   JoinStatus = 0x03
)

// String returns the seed's name of the status.
func (s JoinStatus) String() string {
	switch s {
	case JoinSuccess:
		return "SUCCESS"
	case JoinRoomFull:
		return "ROOM_FULL"
	case JoinRoomNotFound:
		return "ROOM_NOT_FOUND"
	case JoinRoomInGame:
		return "ROOM_IN_GAME"
	}
	return "JoinStatus(" + itoa(int(s)) + ")"
}

// ErrorCode is ERROR_MSG's code. The seed lists "common" codes 0x01-0x06;
// others are legal on the wire and are not rejected.
type ErrorCode uint8

// Common error codes of tcp-lobby.md §5.5 (tcp-lobby.md §5.4 uses 0x03 and 0x04 for
// START_REQ refusals).
const (
	ErrCodeRoomFull     ErrorCode = 0x01
	ErrCodeRoomNotFound ErrorCode = 0x02
	ErrCodeNotHost      ErrorCode = 0x03
	ErrCodeNotAllReady  ErrorCode = 0x04
	ErrCodeInvalidName  ErrorCode = 0x05
	ErrCodeServerError  ErrorCode = 0x06
)

// PlayerInfo is the 42-byte player structure (tcp-lobby.md §3.3).
type PlayerInfo struct {
	Number uint8 // slot 1-4 (0 in the unused GAME_START entries)
	Hash   uint64
	Name   Name
	Ready  bool
}

// RoomInfo is the 39-byte room structure (tcp-lobby.md §3.3).
type RoomInfo struct {
	ID          uint32
	Name        Name
	PlayerCount uint8
	MaxPlayers  uint8
	InGame      bool
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func appendPlayer(dst []byte, p *PlayerInfo) []byte {
	dst = append(dst, p.Number)
	dst = le.AppendUint64(dst, p.Hash)
	dst = append(dst, p.Name[:]...)
	return appendBool(dst, p.Ready)
}

func appendRoom(dst []byte, r *RoomInfo) []byte {
	dst = le.AppendUint32(dst, r.ID)
	dst = append(dst, r.Name[:]...)
	dst = append(dst, r.PlayerCount, r.MaxPlayers)
	return appendBool(dst, r.InGame)
}

func decodeBool(b byte, t Type, off int, o *Options) (bool, error) {
	if b > 1 && !o.Lenient {
		return false, errf(RuleBool, t, off, "bool byte is 0x%02x, want 0 or 1", b)
	}
	return b != 0, nil
}

// decodePlayer decodes the PlayerInfo at p[off:off+42]. occupied enables the
// slot number check (1-4).
func decodePlayer(pi *PlayerInfo, p []byte, t Type, off int, occupied bool, o *Options) error {
	b := p[off : off+PlayerInfoSize]
	pi.Number = b[0]
	if occupied && (b[0] < 1 || b[0] > MaxPlayers) && !o.Lenient {
		return errf(RulePlayerNumber, t, off, "player slot number %d outside 1-%d", b[0], MaxPlayers)
	}
	pi.Hash = le.Uint64(b[1:9])
	if err := checkString(b[9:41], t, off+9, o); err != nil {
		return err
	}
	copy(pi.Name[:], b[9:41])
	var err error
	pi.Ready, err = decodeBool(b[41], t, off+41, o)
	return err
}

func decodeRoom(r *RoomInfo, p []byte, t Type, off int, o *Options) error {
	b := p[off : off+RoomInfoSize]
	r.ID = le.Uint32(b[0:4])
	if err := checkString(b[4:36], t, off+4, o); err != nil {
		return err
	}
	copy(r.Name[:], b[4:36])
	r.PlayerCount = b[36]
	r.MaxPlayers = b[37]
	var err error
	r.InGame, err = decodeBool(b[38], t, off+38, o)
	return err
}

// begin checks that p is a well-sized payload of type t.
func begin(p []byte, t Type) error {
	if len(p) > 0 && Type(p[0]) != t && Type(p[0]).Known() {
		return errf(RuleTypeMismatch, t, 0, "payload is a %v", Type(p[0]))
	}
	_, err := CheckSize(p)
	return err
}

// ---- type-only messages ----

// ListRoomsReq is LIST_ROOMS_REQ (0x01), 1 byte.
type ListRoomsReq struct{}

// ReadyReq is READY_REQ (0x13), 1 byte.
type ReadyReq struct{}

// StartReq is START_REQ (0x15), 1 byte.
type StartReq struct{}

// Disconnect is DISCONNECT (0x17), 1 byte.
type Disconnect struct{}

func (*ListRoomsReq) Type() Type { return TypeListRoomsReq }
func (*ReadyReq) Type() Type     { return TypeReadyReq }
func (*StartReq) Type() Type     { return TypeStartReq }
func (*Disconnect) Type() Type   { return TypeDisconnect }

func (*ListRoomsReq) Size() int { return 1 }
func (*ReadyReq) Size() int     { return 1 }
func (*StartReq) Size() int     { return 1 }
func (*Disconnect) Size() int   { return 1 }

func (*ListRoomsReq) AppendPayload(dst []byte) []byte { return append(dst, byte(TypeListRoomsReq)) }
func (*ReadyReq) AppendPayload(dst []byte) []byte     { return append(dst, byte(TypeReadyReq)) }
func (*StartReq) AppendPayload(dst []byte) []byte     { return append(dst, byte(TypeStartReq)) }
func (*Disconnect) AppendPayload(dst []byte) []byte   { return append(dst, byte(TypeDisconnect)) }

func (*ListRoomsReq) DecodeOpts(p []byte, _ Options) error { return begin(p, TypeListRoomsReq) }
func (*ReadyReq) DecodeOpts(p []byte, _ Options) error     { return begin(p, TypeReadyReq) }
func (*StartReq) DecodeOpts(p []byte, _ Options) error     { return begin(p, TypeStartReq) }
func (*Disconnect) DecodeOpts(p []byte, _ Options) error   { return begin(p, TypeDisconnect) }

// ---- LIST_ROOMS_ACK ----

// ListRoomsAck is LIST_ROOMS_ACK (0x02): 2 + 39 × Count bytes. Only
// Rooms[:Count] is on the wire. Count above MaxRooms is encoded as given with
// only the 16 available entries, producing a deliberately malformed packet.
type ListRoomsAck struct {
	Count uint8
	Rooms [MaxRooms]RoomInfo
}

func (*ListRoomsAck) Type() Type { return TypeListRoomsAck }

// Size returns the payload size.
func (m *ListRoomsAck) Size() int {
	return SizeListRoomsAckHeader + min(int(m.Count), MaxRooms)*RoomInfoSize
}

// AppendPayload appends the payload to dst.
func (m *ListRoomsAck) AppendPayload(dst []byte) []byte {
	dst = append(dst, byte(TypeListRoomsAck), m.Count)
	for i := range min(int(m.Count), MaxRooms) {
		dst = appendRoom(dst, &m.Rooms[i])
	}
	return dst
}

// DecodeOpts decodes p into m.
func (m *ListRoomsAck) DecodeOpts(p []byte, o Options) error {
	if err := begin(p, TypeListRoomsAck); err != nil {
		return err
	}
	m.Count = p[1]
	for i := range int(m.Count) {
		if err := decodeRoom(&m.Rooms[i], p, TypeListRoomsAck, 2+i*RoomInfoSize, &o); err != nil {
			return err
		}
	}
	clear(m.Rooms[m.Count:])
	return nil
}

// ---- CREATE_ROOM_REQ ----

// CreateRoomReq is CREATE_ROOM_REQ (0x03), 65 bytes.
type CreateRoomReq struct {
	RoomName   Name
	PlayerName Name
}

func (*CreateRoomReq) Type() Type { return TypeCreateRoomReq }
func (*CreateRoomReq) Size() int  { return SizeCreateRoomReq }

// AppendPayload appends the payload to dst.
func (m *CreateRoomReq) AppendPayload(dst []byte) []byte {
	dst = append(dst, byte(TypeCreateRoomReq))
	dst = append(dst, m.RoomName[:]...)
	return append(dst, m.PlayerName[:]...)
}

// DecodeOpts decodes p into m.
func (m *CreateRoomReq) DecodeOpts(p []byte, o Options) error {
	if err := begin(p, TypeCreateRoomReq); err != nil {
		return err
	}
	if err := checkString(p[1:33], TypeCreateRoomReq, 1, &o); err != nil {
		return err
	}
	if err := checkString(p[33:65], TypeCreateRoomReq, 33, &o); err != nil {
		return err
	}
	copy(m.RoomName[:], p[1:33])
	copy(m.PlayerName[:], p[33:65])
	return nil
}

// ---- CREATE_ROOM_ACK ----

// CreateRoomAck is CREATE_ROOM_ACK (0x04), 13 bytes. RoomID 0 means failure.
type CreateRoomAck struct {
	RoomID     uint32
	PlayerHash uint64
}

func (*CreateRoomAck) Type() Type { return TypeCreateRoomAck }
func (*CreateRoomAck) Size() int  { return SizeCreateRoomAck }

// AppendPayload appends the payload to dst.
func (m *CreateRoomAck) AppendPayload(dst []byte) []byte {
	dst = append(dst, byte(TypeCreateRoomAck))
	dst = le.AppendUint32(dst, m.RoomID)
	return le.AppendUint64(dst, m.PlayerHash)
}

// DecodeOpts decodes p into m.
func (m *CreateRoomAck) DecodeOpts(p []byte, _ Options) error {
	if err := begin(p, TypeCreateRoomAck); err != nil {
		return err
	}
	m.RoomID = le.Uint32(p[1:5])
	m.PlayerHash = le.Uint64(p[5:13])
	return nil
}

// ---- JOIN_ROOM_REQ ----

// JoinRoomReq is JOIN_ROOM_REQ (0x05), 37 bytes.
type JoinRoomReq struct {
	RoomID     uint32
	PlayerName Name
}

func (*JoinRoomReq) Type() Type { return TypeJoinRoomReq }
func (*JoinRoomReq) Size() int  { return SizeJoinRoomReq }

// AppendPayload appends the payload to dst.
func (m *JoinRoomReq) AppendPayload(dst []byte) []byte {
	dst = append(dst, byte(TypeJoinRoomReq))
	dst = le.AppendUint32(dst, m.RoomID)
	return append(dst, m.PlayerName[:]...)
}

// DecodeOpts decodes p into m.
func (m *JoinRoomReq) DecodeOpts(p []byte, o Options) error {
	if err := begin(p, TypeJoinRoomReq); err != nil {
		return err
	}
	if err := checkString(p[5:37], TypeJoinRoomReq, 5, &o); err != nil {
		return err
	}
	m.RoomID = le.Uint32(p[1:5])
	copy(m.PlayerName[:], p[5:37])
	return nil
}

// ---- JOIN_ROOM_ACK ----

// JoinRoomAck is JOIN_ROOM_ACK (0x06): 11 + 42 × Count bytes. Only
// Players[:Count] is on the wire (Count above 4: see ListRoomsAck).
type JoinRoomAck struct {
	Status     JoinStatus
	PlayerHash uint64 // 0 if failed
	Count      uint8
	Players    [MaxPlayers]PlayerInfo
}

func (*JoinRoomAck) Type() Type { return TypeJoinRoomAck }

// Size returns the payload size.
func (m *JoinRoomAck) Size() int {
	return SizeJoinRoomAckHeader + min(int(m.Count), MaxPlayers)*PlayerInfoSize
}

// AppendPayload appends the payload to dst.
func (m *JoinRoomAck) AppendPayload(dst []byte) []byte {
	dst = append(dst, byte(TypeJoinRoomAck), byte(m.Status))
	dst = le.AppendUint64(dst, m.PlayerHash)
	dst = append(dst, m.Count)
	for i := range min(int(m.Count), MaxPlayers) {
		dst = appendPlayer(dst, &m.Players[i])
	}
	return dst
}

// DecodeOpts decodes p into m.
func (m *JoinRoomAck) DecodeOpts(p []byte, o Options) error {
	const t = TypeJoinRoomAck
	if err := begin(p, t); err != nil {
		return err
	}
	m.Status = JoinStatus(p[1])
	if m.Status > JoinRoomInGame && !o.Lenient {
		return errf(RuleJoinStatus, t, 1, "status 0x%02x outside 0x00-0x03", p[1])
	}
	m.PlayerHash = le.Uint64(p[2:10])
	m.Count = p[10]
	for i := range int(m.Count) {
		if err := decodePlayer(&m.Players[i], p, t, SizeJoinRoomAckHeader+i*PlayerInfoSize, true, &o); err != nil {
			return err
		}
	}
	clear(m.Players[m.Count:])
	return nil
}

// ---- ROOM_UPDATE ----

// RoomUpdate is ROOM_UPDATE (0x07): 2 + 42 × Count bytes. Only
// Players[:Count] is on the wire (Count above 4: see ListRoomsAck).
type RoomUpdate struct {
	Count   uint8
	Players [MaxPlayers]PlayerInfo
}

func (*RoomUpdate) Type() Type { return TypeRoomUpdate }

// Size returns the payload size.
func (m *RoomUpdate) Size() int {
	return SizeRoomUpdateHeader + min(int(m.Count), MaxPlayers)*PlayerInfoSize
}

// AppendPayload appends the payload to dst.
func (m *RoomUpdate) AppendPayload(dst []byte) []byte {
	dst = append(dst, byte(TypeRoomUpdate), m.Count)
	for i := range min(int(m.Count), MaxPlayers) {
		dst = appendPlayer(dst, &m.Players[i])
	}
	return dst
}

// DecodeOpts decodes p into m.
func (m *RoomUpdate) DecodeOpts(p []byte, o Options) error {
	if err := begin(p, TypeRoomUpdate); err != nil {
		return err
	}
	m.Count = p[1]
	for i := range int(m.Count) {
		if err := decodePlayer(&m.Players[i], p, TypeRoomUpdate, SizeRoomUpdateHeader+i*PlayerInfoSize, true, &o); err != nil {
			return err
		}
	}
	clear(m.Players[m.Count:])
	return nil
}

// ---- CONNECT_REQ / CONNECT_ACK ----

// ConnectReq is CONNECT_REQ (0x10), 33 bytes.
type ConnectReq struct {
	PlayerName Name
}

func (*ConnectReq) Type() Type { return TypeConnectReq }
func (*ConnectReq) Size() int  { return SizeConnectReq }

// AppendPayload appends the payload to dst.
func (m *ConnectReq) AppendPayload(dst []byte) []byte {
	return append(append(dst, byte(TypeConnectReq)), m.PlayerName[:]...)
}

// DecodeOpts decodes p into m.
func (m *ConnectReq) DecodeOpts(p []byte, o Options) error {
	if err := begin(p, TypeConnectReq); err != nil {
		return err
	}
	if err := checkString(p[1:33], TypeConnectReq, 1, &o); err != nil {
		return err
	}
	copy(m.PlayerName[:], p[1:33])
	return nil
}

// ConnectAck is CONNECT_ACK (0x11), 10 bytes.
type ConnectAck struct {
	Success    bool
	PlayerHash uint64
}

func (*ConnectAck) Type() Type { return TypeConnectAck }
func (*ConnectAck) Size() int  { return SizeConnectAck }

// AppendPayload appends the payload to dst.
func (m *ConnectAck) AppendPayload(dst []byte) []byte {
	dst = appendBool(append(dst, byte(TypeConnectAck)), m.Success)
	return le.AppendUint64(dst, m.PlayerHash)
}

// DecodeOpts decodes p into m.
func (m *ConnectAck) DecodeOpts(p []byte, o Options) error {
	if err := begin(p, TypeConnectAck); err != nil {
		return err
	}
	var err error
	if m.Success, err = decodeBool(p[1], TypeConnectAck, 1, &o); err != nil {
		return err
	}
	m.PlayerHash = le.Uint64(p[2:10])
	return nil
}

// ---- PLAYER_JOIN ----

// PlayerJoin is PLAYER_JOIN (0x12), 43 bytes.
type PlayerJoin struct {
	Player PlayerInfo
}

func (*PlayerJoin) Type() Type { return TypePlayerJoin }
func (*PlayerJoin) Size() int  { return SizePlayerJoin }

// AppendPayload appends the payload to dst.
func (m *PlayerJoin) AppendPayload(dst []byte) []byte {
	return appendPlayer(append(dst, byte(TypePlayerJoin)), &m.Player)
}

// DecodeOpts decodes p into m.
func (m *PlayerJoin) DecodeOpts(p []byte, o Options) error {
	if err := begin(p, TypePlayerJoin); err != nil {
		return err
	}
	return decodePlayer(&m.Player, p, TypePlayerJoin, 1, true, &o)
}

// ---- PLAYER_READY ----

// PlayerReady is PLAYER_READY (0x14), 10 bytes.
type PlayerReady struct {
	PlayerHash uint64
	Ready      bool
}

func (*PlayerReady) Type() Type { return TypePlayerReady }
func (*PlayerReady) Size() int  { return SizePlayerReady }

// AppendPayload appends the payload to dst.
func (m *PlayerReady) AppendPayload(dst []byte) []byte {
	dst = le.AppendUint64(append(dst, byte(TypePlayerReady)), m.PlayerHash)
	return appendBool(dst, m.Ready)
}

// DecodeOpts decodes p into m.
func (m *PlayerReady) DecodeOpts(p []byte, o Options) error {
	if err := begin(p, TypePlayerReady); err != nil {
		return err
	}
	m.PlayerHash = le.Uint64(p[1:9])
	var err error
	m.Ready, err = decodeBool(p[9], TypePlayerReady, 9, &o)
	return err
}

// ---- GAME_START ----

// GameStart is GAME_START (0x16), 220 bytes: the type and GameStartInfo
// (219 bytes). All four Players entries are on the wire; those at and beyond
// PlayerCount are "empty" (seed Appendix B.3) and their slot number is not
// checked. Spawn holds [x, y] float32 pairs (little-endian IEEE-754).
type GameStart struct {
	ServerIP    IP
	UDPPort     uint16
	PlayerCount uint8
	Players     [MaxPlayers]PlayerInfo
	Spawn       [MaxPlayers][2]float32
}

func (*GameStart) Type() Type { return TypeGameStart }
func (*GameStart) Size() int  { return SizeGameStart }

// AppendPayload appends the payload to dst.
func (m *GameStart) AppendPayload(dst []byte) []byte {
	dst = append(dst, byte(TypeGameStart))
	dst = append(dst, m.ServerIP[:]...)
	dst = le.AppendUint16(dst, m.UDPPort)
	dst = append(dst, m.PlayerCount)
	for i := range m.Players {
		dst = appendPlayer(dst, &m.Players[i])
	}
	for i := range m.Spawn {
		dst = le.AppendUint32(dst, math.Float32bits(m.Spawn[i][0]))
		dst = le.AppendUint32(dst, math.Float32bits(m.Spawn[i][1]))
	}
	return dst
}

// DecodeOpts decodes p into m.
func (m *GameStart) DecodeOpts(p []byte, o Options) error {
	const t = TypeGameStart
	if err := begin(p, t); err != nil {
		return err
	}
	if err := checkString(p[1:17], t, 1, &o); err != nil {
		return err
	}
	copy(m.ServerIP[:], p[1:17])
	m.UDPPort = le.Uint16(p[17:19])
	m.PlayerCount = p[19]
	if m.PlayerCount > MaxPlayers {
		return errf(RuleCountPlayers, t, 19, "count %d exceeds %d", m.PlayerCount, MaxPlayers)
	}
	for i := range m.Players {
		if err := decodePlayer(&m.Players[i], p, t, 20+i*PlayerInfoSize, i < int(m.PlayerCount), &o); err != nil {
			return err
		}
	}
	off := 20 + MaxPlayers*PlayerInfoSize
	for i := range m.Spawn {
		m.Spawn[i][0] = math.Float32frombits(le.Uint32(p[off:]))
		m.Spawn[i][1] = math.Float32frombits(le.Uint32(p[off+4:]))
		off += 8
	}
	return nil
}

// ---- PLAYER_LEFT / COUNTDOWN ----

// PlayerLeft is PLAYER_LEFT (0x18), 9 bytes.
type PlayerLeft struct {
	PlayerHash uint64
}

func (*PlayerLeft) Type() Type { return TypePlayerLeft }
func (*PlayerLeft) Size() int  { return SizePlayerLeft }

// AppendPayload appends the payload to dst.
func (m *PlayerLeft) AppendPayload(dst []byte) []byte {
	return le.AppendUint64(append(dst, byte(TypePlayerLeft)), m.PlayerHash)
}

// DecodeOpts decodes p into m.
func (m *PlayerLeft) DecodeOpts(p []byte, _ Options) error {
	if err := begin(p, TypePlayerLeft); err != nil {
		return err
	}
	m.PlayerHash = le.Uint64(p[1:9])
	return nil
}

// Countdown is COUNTDOWN (0x19), 2 bytes.
type Countdown struct {
	Seconds uint8
}

func (*Countdown) Type() Type { return TypeCountdown }
func (*Countdown) Size() int  { return SizeCountdown }

// AppendPayload appends the payload to dst.
func (m *Countdown) AppendPayload(dst []byte) []byte {
	return append(dst, byte(TypeCountdown), m.Seconds)
}

// DecodeOpts decodes p into m.
func (m *Countdown) DecodeOpts(p []byte, _ Options) error {
	if err := begin(p, TypeCountdown); err != nil {
		return err
	}
	m.Seconds = p[1]
	return nil
}

// ---- ERROR_MSG ----

// ErrorMsg is ERROR_MSG (0x1F): type, code, then the message text, which is
// the rest of the frame (tcp-lobby.md §5.5: UTF-8, no NUL needed; the seed says
// "Variable" with no length field, so the frame length delimits it).
//
// Reading: trailing NUL bytes are tolerated and dropped (a C peer sending a
// terminated char buffer), so Text never contains a NUL; strict decoding
// rejects text that is not UTF-8 or has non-NUL bytes after a NUL
// (RuleErrorText). AppendPayload writes Text verbatim with no NUL. Use
// NewErrorMsg to cap the text so the frame fits DefaultMaxFrame.
type ErrorMsg struct {
	Code ErrorCode
	Text string
}

// NewErrorMsg returns an ERROR_MSG whose text is truncated on a rune boundary
// to MaxErrorText bytes and cut at any NUL.
func NewErrorMsg(code ErrorCode, text string) *ErrorMsg {
	if i := indexNUL(text); i >= 0 {
		text = text[:i]
	}
	return &ErrorMsg{Code: code, Text: truncateRunes(text, MaxErrorText)}
}

func indexNUL(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return i
		}
	}
	return -1
}

func (*ErrorMsg) Type() Type { return TypeErrorMsg }

// Size returns the payload size.
func (m *ErrorMsg) Size() int { return SizeErrorMsgHeader + len(m.Text) }

// AppendPayload appends the payload to dst.
func (m *ErrorMsg) AppendPayload(dst []byte) []byte {
	return append(append(dst, byte(TypeErrorMsg), byte(m.Code)), m.Text...)
}

// DecodeOpts decodes p into m.
func (m *ErrorMsg) DecodeOpts(p []byte, o Options) error {
	const t = TypeErrorMsg
	if err := begin(p, t); err != nil {
		return err
	}
	m.Code = ErrorCode(p[1])
	text := p[2:]
	if i := bytes.IndexByte(text, 0); i >= 0 {
		for j := i + 1; j < len(text); j++ {
			if text[j] != 0 && !o.Lenient {
				return errf(RuleErrorText, t, 2+j, "byte 0x%02x after the NUL ending the message", text[j])
			}
		}
		text = text[:i]
	}
	if !o.Lenient && !utf8.Valid(text) {
		return errf(RuleErrorText, t, 2, "message is not valid UTF-8")
	}
	m.Text = string(text)
	return nil
}

// ---- generic helpers ----

// New returns a new zero message of type t, or nil for an unknown type.
func New(t Type) Message {
	switch t {
	case TypeListRoomsReq:
		return &ListRoomsReq{}
	case TypeListRoomsAck:
		return &ListRoomsAck{}
	case TypeCreateRoomReq:
		return &CreateRoomReq{}
	case TypeCreateRoomAck:
		return &CreateRoomAck{}
	case TypeJoinRoomReq:
		return &JoinRoomReq{}
	case TypeJoinRoomAck:
		return &JoinRoomAck{}
	case TypeRoomUpdate:
		return &RoomUpdate{}
	case TypeConnectReq:
		return &ConnectReq{}
	case TypeConnectAck:
		return &ConnectAck{}
	case TypePlayerJoin:
		return &PlayerJoin{}
	case TypeReadyReq:
		return &ReadyReq{}
	case TypePlayerReady:
		return &PlayerReady{}
	case TypeStartReq:
		return &StartReq{}
	case TypeGameStart:
		return &GameStart{}
	case TypeDisconnect:
		return &Disconnect{}
	case TypePlayerLeft:
		return &PlayerLeft{}
	case TypeCountdown:
		return &Countdown{}
	case TypeErrorMsg:
		return &ErrorMsg{}
	}
	return nil
}

// Decode decodes payload p strictly into a newly allocated message of the
// type named by p[0]. Hot paths should switch on CheckSize's type and reuse
// their own structs with DecodeOpts instead.
func Decode(p []byte) (Message, error) { return DecodeOpts(p, Options{}) }

// DecodeOpts is Decode with options.
func DecodeOpts(p []byte, o Options) (Message, error) {
	t, err := CheckSize(p)
	if err != nil {
		return nil, err
	}
	m := New(t)
	if err := m.DecodeOpts(p, o); err != nil {
		return nil, err
	}
	return m, nil
}

// AppendFrame appends m with its u32 little-endian length prefix to dst.
func AppendFrame(dst []byte, m Message) []byte {
	dst = le.AppendUint32(dst, uint32(m.Size()))
	return m.AppendPayload(dst)
}

// Marshal returns m's payload (type byte first, no length prefix).
func Marshal(m Message) []byte { return m.AppendPayload(make([]byte, 0, m.Size())) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [8]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
