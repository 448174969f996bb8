// Package stepkit holds the step kinds that more than one protocol of this
// repository takes, with the readers of their parameters: the lobbies'
// list_rooms, create_room, join, ready, wait_game_start; connect and
// disconnect; a counted series of requests (udp-lobby's ping, leviathan's
// echo). A protocol lists the ones it takes among its own step kinds
// (scenario.ProtocolSpec.Steps); the scenario package knows none of them.
package stepkit

import (
	"fmt"
	"strconv"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

// The shared kinds.
const (
	ListRooms     scenario.StepKind = "list_rooms"  // old tcp-lobby name: list
	CreateRoom    scenario.StepKind = "create_room" // old tcp-lobby name: create
	Join          scenario.StepKind = "join"
	Ready         scenario.StepKind = "ready"
	WaitGameStart scenario.StepKind = "wait_game_start"
	Connect       scenario.StepKind = "connect"
	Disconnect    scenario.StepKind = "disconnect" // old leviathan name: close
)

// Specs of the shared kinds.
var (
	ListRoomsSpec = scenario.StepSpec{Kind: ListRooms, Aliases: []string{"list"}, Request: true}
	// CreateRoomSpec creates a room of no name (udp-lobby's).
	CreateRoomSpec = scenario.StepSpec{Kind: CreateRoom, Aliases: []string{"create"}, Request: true, CreatesRoom: true}
	// CreateNamedRoomSpec creates a room of a name (tcp-lobby's): a Name.
	CreateNamedRoomSpec = scenario.StepSpec{Kind: CreateRoom, Aliases: []string{"create"}, Request: true, CreatesRoom: true,
		Params: []string{"name"}, Shorthand: "name", Parse: parseName}
	JoinSpec          = scenario.StepSpec{Kind: Join, Request: true, Params: []string{"room"}, Shorthand: "room", Parse: parseRoom}
	ReadySpec         = scenario.StepSpec{Kind: Ready, Request: true}
	WaitGameStartSpec = scenario.StepSpec{Kind: WaitGameStart, Wait: true, Shorthand: "timeout"}
	// ConnectSpec connects as a player of a name: a Name.
	ConnectSpec    = scenario.StepSpec{Kind: Connect, Request: true, Params: []string{"name"}, Parse: parseName}
	DisconnectSpec = scenario.StepSpec{Kind: Disconnect, Aliases: []string{"close"}}
)

// SeriesSpec is a kind that sends count requests interval apart (one by
// default, 100ms apart): a Series.
func SeriesSpec(kind scenario.StepKind) scenario.StepSpec {
	return scenario.StepSpec{Kind: kind, Request: true, Params: []string{"count", "interval"}, Shorthand: "count", Parse: parseSeries}
}

// RoomKind says which room a join targets.
type RoomKind string

// How a join chooses its room.
const (
	RoomID            RoomKind = "id"             // a fixed room id
	RoomRandomWaiting RoomKind = "random-waiting" // list rooms, pick a random Waiting room with space
	RoomCreated       RoomKind = "created"        // the room this client's group created (waits for it)
)

// Room is a join's parameters: the room it targets.
type Room struct {
	Kind RoomKind
	ID   uint32 // Kind == RoomID
}

// Describe names the room.
func (r Room) Describe() string {
	if r.Kind == RoomID {
		return "room " + strconv.FormatUint(uint64(r.ID), 10)
	}
	return "room " + string(r.Kind)
}

// parseRoom reads which room a join joins: a random waiting one (the
// default), the one the flow created (which an earlier step must create),
// or one by id.
func parseRoom(k *scenario.StepKeys) any {
	r := Room{Kind: RoomRandomWaiting}
	if k.Has("room") {
		r = readRoom(k)
	}
	if r.Kind == RoomCreated && !k.RoomCreated() {
		k.Errorf("", "%s: join room: created needs a create_room/create step earlier in the flow", k.Flow())
	}
	return r
}

func readRoom(k *scenario.StepKeys) Room {
	s, ok := k.String("room")
	if !ok {
		return Room{Kind: RoomRandomWaiting}
	}
	switch s {
	case string(RoomRandomWaiting), string(RoomCreated):
		return Room{Kind: RoomKind(s)}
	}
	id, err := strconv.ParseUint(s, 10, 32)
	if err != nil || id == 0 {
		k.Errorf("room", "%s: room must be a room id 1-4294967295, random-waiting or created, got %q%s", k.What(), s,
			scenario.Suggest(s, []string{string(RoomRandomWaiting), string(RoomCreated)}))
	}
	return Room{Kind: RoomID, ID: uint32(id)}
}

// Name is the parameters of a step that names something: the room a
// create_room creates, the player a connect connects as ("" for the
// client's own choice).
type Name struct{ Name string }

// maxName is the TCP lobby's limit on a name, in bytes.
const maxName = 31

// parseName reads the name: at most the TCP lobby's 31 bytes.
func parseName(k *scenario.StepKeys) any {
	var n Name
	if k.Has("name") {
		if s, ok := k.String("name"); ok {
			if len(s) > maxName {
				k.Errorf("name", "%s: name is %d bytes; the TCP lobby allows %d", k.What(), len(s), maxName)
			}
			n.Name = s
		}
	}
	return n
}

// Series is the parameters of a series of requests: Count of them,
// Interval apart.
type Series struct {
	Count    int
	Interval time.Duration
}

// Describe says how many, how often.
func (s Series) Describe() string { return fmt.Sprintf("%d× every %s", s.Count, s.Interval) }

// Waits is the series' own pauses: the gaps between its requests.
func (s Series) Waits() time.Duration { return time.Duration(max(s.Count-1, 0)) * s.Interval }

// parseSeries reads count and interval: one request by default, 100ms
// apart.
func parseSeries(k *scenario.StepKeys) any {
	s := Series{Count: 1, Interval: 100 * time.Millisecond}
	if k.Has("count") {
		if c, ok := k.Int("count", 1, 1_000_000); ok {
			s.Count = int(c)
		}
	}
	if k.Has("interval") {
		if iv, ok := k.Duration("interval"); ok {
			s.Interval = iv
		}
	}
	return s
}

// RoomOf returns the room a join step targets (the zero Room, a random
// waiting one, for another step).
func RoomOf(st *scenario.Step) Room { r, _ := st.Params.(Room); return r }

// NameOf returns the name a step gives ("" for none).
func NameOf(st *scenario.Step) string { n, _ := st.Params.(Name); return n.Name }

// SeriesOf returns a series step's count and interval (zero for another
// step).
func SeriesOf(st *scenario.Step) Series { s, _ := st.Params.(Series); return s }
