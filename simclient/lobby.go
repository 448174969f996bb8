package simclient

import (
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/scenario"
)

// Game says, for one protocol, where the lobby's own measures
// (result/lobby.go) see a player reach a game and enter a room: a
// protocol's client (Client.Game) is the one place that says it. Time to
// game ends, for the protocols of this repository, at:
//
//	protocol   flow (member) with wait_game_start      otherwise: the join of the game's room
//	udp-lobby  SERVER_GAME_START from the instance     SERVER_JOIN_ACCEPT (instance_join), else SERVER_HELLO (hello)
//	tcp-lobby  GAME_START                              JOIN_ROOM_ACK (join), else the creator's CREATE_ROOM_ACK
//	leviathan  (no game start: join_game is the game)  JoinGame answered (ServerAllow and StartWorldReceive)
//
// It starts at the session's intended start (its due time), so a late
// start counts. A member records it once, when it gets there; a session
// that never does (failed, cut) records nothing.
//
// A player is in a room from the success of a step that puts it there
// (join; tcp-lobby's create_room; leviathan's join_game) until a leave or
// disconnect step, or its session's end; in a game from the game start it
// received (GameStarted; leviathan: join_game) until it leaves the room
// or, udp-lobby, SERVER_GAME_END.
//
// A room's fill time runs from its creator's reply (Group.SetRoom) to the
// success of the last join of the group's members that run a join step,
// for flows with group_size above 1.
type Game struct {
	// TTGJoin are the steps whose success ends time to game in a flow
	// without wait_game_start, first found first.
	TTGJoin []scenario.StepKind
	// Room are the steps whose success puts the player in a room.
	Room []scenario.StepKind
	// Game are the steps whose success is the game start (no event).
	Game []scenario.StepKind
	// Fill are the steps whose success is a member's join of its group's
	// room (room fill time).
	Fill []scenario.StepKind
	// WaitStart are the steps that wait for the game start: a member that
	// runs one reaches its game at the start, not at a join (TTGJoin).
	WaitStart []scenario.StepKind
	// Leave are the steps whose success takes the player out of its room.
	Leave []scenario.StepKind
}

// IOCount counts the payload bytes a session's socket sent and received
// since they were last handed to the recorder (Base.flushIO). A
// protocol's transport adds to it for every datagram or read and write
// (atomic adds, no allocation); Base hands the counts over once per step.
// A nil *IOCount counts nothing.
type IOCount struct{ sent, received atomic.Int64 }

// Sent counts n bytes written.
func (c *IOCount) Sent(n int) {
	if c != nil && n > 0 {
		c.sent.Add(int64(n))
	}
}

// Received counts n bytes read.
func (c *IOCount) Received(n int) {
	if c != nil && n > 0 {
		c.received.Add(int64(n))
	}
}

// lobbyState is a session's part in the lobby measures.
type lobbyState struct {
	start   instant.Instant   // the session's intended start
	def     *Game             // the protocol's (nil: none)
	ttgJoin scenario.StepKind // the step ending time to game ("": a game start does)
	ttgGame bool              // a game start ends it (the member waits for one)
	ttgDone bool              // recorded
	inRoom  bool
	inGame  bool
}

// lobbyFor returns the part in the lobby measures of member idx of flow,
// a session of a protocol whose Game is def.
func lobbyFor(def *Game, flow *scenario.Flow, idx int) lobbyState {
	if def == nil {
		return lobbyState{}
	}
	l := lobbyState{def: def}
	if runsAny(flow, idx, def.WaitStart) {
		l.ttgGame = true
		return l
	}
	for _, k := range def.TTGJoin {
		if runsAny(flow, idx, []scenario.StepKind{k}) {
			l.ttgJoin = k
			break
		}
	}
	return l
}

// runsAny reports whether member idx of flow runs a step of one of kinds.
func runsAny(flow *scenario.Flow, idx int, kinds []scenario.StepKind) bool {
	for i := range flow.Steps {
		if st := &flow.Steps[i]; hasKind(kinds, st.Kind) && st.Only.Runs(idx) {
			return true
		}
	}
	return false
}

func hasKind(ks []scenario.StepKind, k scenario.StepKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// flushIO hands the bytes counted since the last call to the recorder,
// under step i (< 0: no step).
func (b *Base) flushIO(i int) {
	if b.IO == nil || b.Rec == nil {
		return
	}
	sent, recv := b.IO.sent.Swap(0), b.IO.received.Swap(0)
	if sent == 0 && recv == 0 {
		return
	}
	k := metrics.Key(-1)
	if i >= 0 {
		k = b.StepKey(i)
	}
	b.Rec.Bytes(k, sent, recv)
}

// stepEnded updates the lobby measures after step i (st) ended with err.
func (b *Base) stepEnded(i int, st *scenario.Step, err error) {
	b.flushIO(i)
	if err != nil || b.lob.def == nil || b.Rec == nil {
		return
	}
	now := b.Next
	if now.IsZero() {
		now = time.Now()
	}
	d := b.lob.def
	switch {
	case hasKind(d.Leave, st.Kind):
		b.leaveRoom(now)
		return
	case hasKind(d.Room, st.Kind):
		b.enterRoom(now)
		if hasKind(d.Fill, st.Kind) {
			b.groupJoined(now)
		}
	}
	if hasKind(d.Game, st.Kind) {
		b.GameStarted(now)
	}
	if !b.lob.ttgGame && st.Kind == b.lob.ttgJoin {
		b.reachedGame(now)
	}
}

// reachedGame records time to game at now, once per session.
func (b *Base) reachedGame(now time.Time) {
	if b.lob.ttgDone || b.lob.start.IsZero() {
		return
	}
	b.lob.ttgDone = true
	b.Rec.Measure(metrics.TimeToGame, now.Sub(b.lob.start.Time()))
}

func (b *Base) enterRoom(now time.Time) {
	if !b.lob.inRoom {
		b.lob.inRoom = true
		b.Rec.Players(now, 1, 0)
	}
}

// leaveRoom takes the player out of its room and game.
func (b *Base) leaveRoom(now time.Time) {
	var room, game int64
	if b.lob.inRoom {
		room = -1
	}
	if b.lob.inGame {
		game = -1
	}
	b.lob.inRoom, b.lob.inGame = false, false
	b.Rec.Players(now, room, game)
}

// GameStarted is what a protocol's session calls when it receives its
// game's start (udp-lobby SERVER_GAME_START, tcp-lobby GAME_START), at
// at: the player is in a game, and a member that waits for the game start
// has reached it (time to game). Later calls do nothing.
func (b *Base) GameStarted(at time.Time) {
	if b.lob.def == nil || b.lob.inGame || b.Rec == nil {
		return
	}
	b.lob.inGame = true
	if b.lob.inRoom {
		b.Rec.Players(at, 0, 1)
	} else {
		b.lob.inRoom = true
		b.Rec.Players(at, 1, 1)
	}
	if b.lob.ttgGame {
		b.reachedGame(at)
	}
}

// GameEnded is what a session calls when its game ended (udp-lobby
// SERVER_GAME_END): it is no longer in a started game.
func (b *Base) GameEnded(at time.Time) {
	if b.lob.inGame {
		b.lob.inGame = false
		b.Rec.Players(at, 0, -1)
	}
}

// groupJoined counts a join of the session's group's room, recording the
// room's fill time when it was the last one expected.
func (b *Base) groupJoined(now time.Time) {
	g := b.Member.Group
	if g == nil || g.Size <= 1 {
		return
	}
	if d, ok := g.joinedRoom(now, b.joiners); ok {
		b.Rec.Measure(metrics.RoomFill, d)
	}
}

// joiners counts the members of a group of the session's flow that run a
// join of the group's room (Game.Fill).
func (b *Base) joiners() int {
	n := 0
	for idx := range b.Member.Group.Size {
		if runsAny(b.Flow, idx, b.lob.def.Fill) {
			n++
		}
	}
	return n
}

// joinedRoom counts one member's join of g's room at now; when it is the
// last of want() joins and the room was created, it returns the time from
// the room's creation (ok).
func (g *Group) joinedRoom(now time.Time, want func() int) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.roomJoins++
	if g.roomAt.IsZero() || g.roomJoins != want() {
		return 0, false
	}
	return now.Sub(g.roomAt), true
}

// lobbyEnd ends the session's part: its bytes are handed over and it
// leaves its room.
func (b *Base) lobbyEnd() {
	b.flushIO(b.CurStep)
	if (b.lob.inRoom || b.lob.inGame) && b.Rec != nil {
		b.leaveRoom(time.Now())
	}
}
