package tcpcases

import (
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// tcpGame is a room of four clients played through to GAME_START, with
// everything each client received; several cases judge parts of it.
type tcpGame struct {
	clients  []*tcpClient
	roomID   uint32
	hashes   []uint64
	create   []byte   // CREATE_ROOM_ACK payload
	joins    [][]byte // JOIN_ROOM_ACK payloads of clients 1-3
	fullJoin []byte   // JOIN_ROOM_ACK to a fifth client (nil: none came)
	fullErr  error
	// readyEcho[i]: client i got its own PLAYER_READY (or ROOM_UPDATE).
	readyEcho []bool
	startErr  error
	// startRefused is the ERROR_MSG a member got instead of GAME_START
	// (say, the server had no game instance left), "" if none.
	startRefused string
	// started[i]: client i received GAME_START; gameStart its payload.
	started   []bool
	gameStart [][]byte
	inGame    []byte // JOIN_ROOM_ACK to a client joining after GAME_START
	inGameErr error
}

// tcpStartWait bounds the wait for GAME_START after START_REQ (a 3-2-1
// countdown of one second per tick by default, and margin).
const tcpStartWait = 10 * time.Second

func tcpGameFx(t *conformance.T) (*tcpGame, error) {
	v, err := t.Fixture("tcp-game", func(ft *conformance.T) (any, error) {
		g := &tcpGame{}
		host, ack, err := newRoom(ft)
		if err != nil {
			return nil, err
		}
		g.clients = append(g.clients, host)
		ft.Env.Cleanup(func() {
			for _, c := range g.clients {
				c.Close()
			}
		})
		g.create = host.frames[len(host.frames)-1]
		g.roomID = ack.RoomID
		g.hashes = append(g.hashes, ack.PlayerHash)
		for i := 1; i < tcpwire.MaxPlayers; i++ {
			c, err := dialTCP(ft)
			if err != nil {
				return nil, err
			}
			g.clients = append(g.clients, c)
			ja, p, err := c.join(g.roomID)
			if err != nil {
				return nil, conformance.Precondition("join the room", err)
			}
			if ja.Status != tcpwire.JoinSuccess {
				return nil, conformance.Owned(ProtoTCP, "JOIN_ROOM_ACK", conformance.Skipf("JOIN_ROOM_ACK status %v for player %d of an open room", ja.Status, i+1))
			}
			g.joins = append(g.joins, p)
			g.hashes = append(g.hashes, ja.PlayerHash)
		}
		// A fifth client: the room is full.
		if c, err := dialTCP(ft); err == nil {
			_, g.fullJoin, g.fullErr = c.join(g.roomID)
			c.Close()
		} else {
			g.fullErr = err
		}
		g.readyEcho = make([]bool, len(g.clients))
		for i, c := range g.clients {
			g.readyEcho[i] = c.ready(g.hashes[i]) == nil
			if g.hashes[i] == 0 { // a short ACK: learnt from ROOM_UPDATE
				g.hashes[i] = c.ownHash()
			}
		}
		g.startErr = g.clients[0].send(&tcpwire.StartReq{}, "START_REQ (host, all ready)")
		g.started = make([]bool, len(g.clients))
		g.gameStart = make([][]byte, len(g.clients))
		deadline := time.Now().Add(tcpStartWait)
		for i, c := range g.clients {
			p, err := c.wait(time.Until(deadline), tcpwire.TypeGameStart, tcpwire.TypeErrorMsg)
			switch {
			case err != nil && ft.Ctx.Err() != nil:
				return nil, err // interrupted: not the server's fault
			case err != nil:
			case tcpwire.Type(p[0]) == tcpwire.TypeGameStart:
				g.started[i] = true
				g.gameStart[i] = p
			default:
				var m tcpwire.ErrorMsg
				if decodeAs(p, &m) == nil {
					g.startRefused = fmt.Sprintf("ERROR_MSG 0x%02x %q", uint8(m.Code), m.Text)
				}
			}
		}
		if g.started[0] {
			if c, err := dialTCP(ft); err == nil {
				_, g.inGame, g.inGameErr = c.join(g.roomID)
				c.Close()
			} else {
				g.inGameErr = err
			}
		}
		for _, c := range g.clients {
			c.drain(50 * time.Millisecond)
		}
		return g, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*tcpGame), nil
}

// received returns the payloads of type typ client i received, in order.
func (g *tcpGame) received(i int, typ tcpwire.Type) [][]byte {
	var out [][]byte
	for _, p := range g.clients[i].frames {
		if len(p) > 0 && tcpwire.Type(p[0]) == typ {
			out = append(out, p)
		}
	}
	return out
}
