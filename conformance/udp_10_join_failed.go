package conformance

import (
	"errors"
	"fmt"

	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// seed 003 §10 LOBBY_JOIN_FAILED and its failure reasons.

func init() {
	Register(&Case{
		ID: "udp/10/1", Protocol: ProtoUDP, Section: secJoinFailed, Level: Must,
		Desc:        "LOBBY_JOIN_ROOM of a missing room is answered with LOBBY_JOIN_FAILED (12 bytes, empty payload)",
		Requirement: "Failure Reasons: Room does not exist … Total Size: 8 + 4 = 12 bytes",
		Run: func(t *T) error {
			rs, err := replies(t)
			if err != nil {
				return err
			}
			m, err := expect(rs.joinMissing, rs.joinMissingErr, "LOBBY_JOIN_FAILED", udplobby.LobbyJoinFailed)
			if err != nil {
				return err
			}
			return checkEmpty(t, m)
		},
	})
	Register(&Case{
		ID: "udp/10/2", Protocol: ProtoUDP, Section: secJoinFailed, Rule: string(udplobby.RuleRoomID), Level: Must,
		Desc:        "LOBBY_JOIN_ROOM of roomId 0 is answered with LOBBY_JOIN_FAILED, or dropped (a warning)",
		Requirement: "if (roomId == 0 || roomId > MAX_ROOM_ID) { // Invalid room ID } (seed 003 §14, input validation); invalid packets are dropped silently (§13); roomId 0 is invalid (PROTOCOLS.md §1.2)",
		Run: func(t *T) error {
			x, err := lobbyRequest(t, buildJoin(t.Env.profile(), 0), "LOBBY_JOIN_ROOM roomId 0")
			if x != nil {
				x.sock.Close()
			}
			if errors.Is(err, errSilence) {
				// §14 puts roomId 0 with input validation and §13 drops
				// invalid packets silently: a conforming server may do so.
				return Warnf("LOBBY_JOIN_FAILED (the better answer: the client learns at once that the room does not exist)",
					"no reply, twice (from two source addresses)%s: the request was dropped as invalid input, which seed 003 §13-14 allow; the client waits for its timeout", silenceDetail(err))
			}
			_, err = expect(x, err, "LOBBY_JOIN_FAILED", udplobby.LobbyJoinFailed)
			return err
		},
	})
	Register(&Case{
		ID: "udp/10/3", Protocol: ProtoUDP, Section: secJoinFailed, Level: Must,
		Desc:        "LOBBY_JOIN_ROOM of a full room (filled through the instance handshake) is answered with LOBBY_JOIN_FAILED",
		Requirement: "Failure Reasons: … Room is full (playerCount >= maxPlayers)",
		Run: func(t *T) error {
			fx, err := fullRoom(t)
			if err != nil {
				return err
			}
			x, err := lobbyRequest(t, buildJoin(t.Env.profile(), fx.id), "LOBBY_JOIN_ROOM of the full room")
			if x != nil {
				x.sock.Close()
			}
			_, err = expect(x, err, fmt.Sprintf("LOBBY_JOIN_FAILED (room %d holds %d of %d players)", fx.id, len(fx.players), fx.max), udplobby.LobbyJoinFailed)
			return err
		},
	})
	Register(&Case{
		ID: "udp/10/4", Protocol: ProtoUDP, Section: secJoinFailed, Level: Must,
		Desc:        "LOBBY_JOIN_ROOM of a Playing room (every player ready, SERVER_GAME_START received) is answered with LOBBY_JOIN_FAILED",
		Requirement: "Failure Reasons: … Room is not in Waiting or Countdown state",
		Run: func(t *T) error {
			fx, err := playingRoom(t)
			if err != nil {
				return err
			}
			if !fx.started {
				return Skipf("the game never started (see inst/2/5)")
			}
			x, err := lobbyRequest(t, buildJoin(t.Env.profile(), fx.id), "LOBBY_JOIN_ROOM of the Playing room")
			if x != nil {
				x.sock.Close()
			}
			what := fmt.Sprintf("LOBBY_JOIN_FAILED (room %d is playing with %d of %d players)", fx.id, len(fx.players), fx.max)
			_, err = expect(x, err, what, udplobby.LobbyJoinFailed)
			return err
		},
	})
	Register(&Case{
		ID: "udp/10/5", Protocol: ProtoUDP, Section: secJoinFailed, Level: Must, Stage: StageSerial,
		Desc:        "LOBBY_CREATE_ROOM past the instance limit is answered with LOBBY_JOIN_FAILED (reached when --instance-ports is small)",
		Requirement: "Failure Reasons: … Max instances limit reached (for create requests)",
		Run:         udpCreatePastLimit,
	})
}

func checkEmpty(t *T, m rawMsg) error {
	want := t.Env.profile().PacketLen(0)
	if len(m.b) != want || m.psize != 0 {
		return Failf(fmt.Sprintf("%v of %d bytes, payloadSize 0", m.typ, want), "%d bytes, payloadSize %d", len(m.b), m.psize)
	}
	return nil
}

func udpCreatePastLimit(t *T) error {
	pr := t.Env.InstancePorts
	if pr.IsZero() {
		return Skipf("the instance limit is unknown: give --instance-ports LO-HI (at most %d ports) to let the suite reach it", t.Env.MaxFill)
	}
	rooms, err := listRooms(t)
	if err != nil {
		return err
	}
	need := pr.Size() - len(rooms)
	if need+1 > t.Env.MaxFill {
		return Skipf("reaching the limit of %d instances would take %d creates (bound %d)", pr.Size(), need+1, t.Env.MaxFill)
	}
	prof := t.Env.profile()
	created := 0
	for i := 0; i <= need+1; i++ {
		x, err := lobbyRequest(t, buildCreate(prof), fmt.Sprintf("LOBBY_CREATE_ROOM #%d", i+1))
		if x != nil {
			x.sock.Close()
		}
		m, err := expect(x, err, "LOBBY_ROOM_CREATED or LOBBY_JOIN_FAILED", udplobby.LobbyRoomCreated, udplobby.LobbyJoinFailed)
		if err != nil {
			return err
		}
		if m.typ == udplobby.LobbyJoinFailed {
			if created < need {
				t.Notef("LOBBY_JOIN_FAILED after %d creates, with %d rooms listed before: the limit is below the %d ports given", created, len(rooms), pr.Size())
			} else {
				t.Notef("LOBBY_JOIN_FAILED after %d creates (%d rooms listed before, %d ports)", created, len(rooms), pr.Size())
			}
			return nil
		}
		created++
	}
	return Failf(fmt.Sprintf("LOBBY_JOIN_FAILED once the %d instance ports %v are in use", pr.Size(), pr),
		"%d creates all answered LOBBY_ROOM_CREATED (%d rooms listed before)", created, len(rooms))
}
