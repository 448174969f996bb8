package udpcases

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §10 LOBBY_JOIN_FAILED and its failure reasons.

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/10/1", Protocol: ProtoUDP, Section: secJoinFailed, Level: conformance.Must,
		Owns:        []string{"LOBBY_JOIN_FAILED"},
		Desc:        "LOBBY_JOIN_ROOM of a missing room is answered with LOBBY_JOIN_FAILED (12 bytes, empty payload)",
		Requirement: "Failure Reasons: Room does not exist … Total Size: 8 + 4 = 12 bytes",
		Run: func(t *conformance.T) error {
			rs, err := replies(t)
			if err != nil {
				return err
			}
			m, err := expect(rs.joinMissing, rs.joinMissingErr, "LOBBY_JOIN_FAILED", udpwire.LobbyJoinFailed)
			if err != nil {
				return err
			}
			return checkEmpty(t, m)
		},
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/10/2", Protocol: ProtoUDP, Section: secJoinFailed, Rule: string(udpwire.RuleRoomID), Level: conformance.Must,
		Desc:        "LOBBY_JOIN_ROOM of roomId 0 is answered with LOBBY_JOIN_FAILED, or dropped (a warning)",
		Requirement: "if (roomId == 0 || roomId > MAX_ROOM_ID) { // Invalid room ID } (udp-lobby.md §14, input validation); invalid packets are dropped silently (§13); roomId 0 is invalid (udp-lobby.md §10)",
		Run: func(t *conformance.T) error {
			x, err := lobbyRequest(t, buildJoin(headerProfile(t.Env), 0), "LOBBY_JOIN_ROOM roomId 0")
			if x != nil {
				x.sock.Close()
			}
			if errors.Is(err, conformance.ErrSilence) {
				// §14 puts roomId 0 with input validation and §13 drops
				// invalid packets silently: a conforming server may do so.
				return conformance.Warnf("LOBBY_JOIN_FAILED (the better answer: the client learns at once that the room does not exist)",
					"no reply, twice (from two source addresses)%s: the request was dropped as invalid input, which udp-lobby.md §13-14 allow; the client waits for its timeout", conformance.SilenceDetail(err))
			}
			_, err = expect(x, err, "LOBBY_JOIN_FAILED", udpwire.LobbyJoinFailed)
			return err
		},
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/10/3", Protocol: ProtoUDP, Section: secJoinFailed, Level: conformance.Must,
		Desc:        "LOBBY_JOIN_ROOM of a full room (filled through the instance handshake) is answered with LOBBY_JOIN_FAILED",
		Requirement: "Failure Reasons: … Room is full (playerCount >= maxPlayers)",
		Run: func(t *conformance.T) error {
			fx, err := fullRoom(t)
			if err != nil {
				return err
			}
			x, err := lobbyRequest(t, buildJoin(headerProfile(t.Env), fx.id), "LOBBY_JOIN_ROOM of the full room")
			if x != nil {
				x.sock.Close()
			}
			_, err = expect(x, err, fmt.Sprintf("LOBBY_JOIN_FAILED (room %d holds %d of %d players)", fx.id, len(fx.players), fx.max), udpwire.LobbyJoinFailed)
			return err
		},
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/10/4", Protocol: ProtoUDP, Section: secJoinFailed, Level: conformance.Must,
		Desc:        "LOBBY_JOIN_ROOM of a Playing room (every player ready, SERVER_GAME_START received) is answered with LOBBY_JOIN_FAILED",
		Requirement: "Failure Reasons: … Room is not in Waiting or Countdown state",
		Run: func(t *conformance.T) error {
			fx, err := playingRoom(t)
			if err != nil {
				return err
			}
			if !fx.started {
				return conformance.Owned(ProtoUDP, "SERVER_GAME_START", conformance.Skipf("the game never started"))
			}
			x, err := lobbyRequest(t, buildJoin(headerProfile(t.Env), fx.id), "LOBBY_JOIN_ROOM of the Playing room")
			if x != nil {
				x.sock.Close()
			}
			what := fmt.Sprintf("LOBBY_JOIN_FAILED (room %d is playing with %d of %d players)", fx.id, len(fx.players), fx.max)
			_, err = expect(x, err, what, udpwire.LobbyJoinFailed)
			return err
		},
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/10/5", Protocol: ProtoUDP, Section: secJoinFailed, Level: conformance.Must, Phase: conformance.PhasePool,
		Owns:        []string{"LOBBY_JOIN_FAILED past the instance limit"},
		Desc:        "LOBBY_CREATE_ROOM past the instance limit is answered with LOBBY_JOIN_FAILED (reached when --instance-ports is small)",
		Requirement: "Failure Reasons: … Max instances limit reached (for create requests)",
		Run:         udpCreatePastLimit,
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/10/7", Protocol: ProtoUDP, Section: secSecurity, Level: conformance.Should, Phase: conformance.PhasePool,
		Desc:        "one source address cannot take every instance: the pool filling, from one address first, finds a per-address limit (reached when --instance-ports is small)",
		Requirement: "Lobby server should implement rate limiting per client IP to prevent abuse (udp-lobby.md §14): a source under its rate can still fill the pool, so one source must not get every instance",
		Run:         udpOneAddressTakesAll,
	})
}

func checkEmpty(t *conformance.T, m rawMsg) error {
	want := headerProfile(t.Env).PacketLen(0)
	if len(m.b) != want || m.psize != 0 {
		return conformance.Failf(fmt.Sprintf("%v of %d bytes, payloadSize 0", m.typ, want), "%d bytes, payloadSize %d", len(m.b), m.psize)
	}
	return nil
}

// poolFill is the shared filling of the instance pool (udp-lobby/10/5 and
// udp-lobby/10/7): creates from one source address until the server refuses it,
// then from the others until the pool is full.
type poolFill struct {
	ports  conformance.PortRange
	listed int // rooms listed before
	need   int // creates that should fill the pool
	// one is the address of the first phase; byOne the rooms it obtained;
	// oneRefused: the server answered it JOIN_FAILED.
	one        netip.Addr
	byOne      int
	oneRefused bool
	// afterOne is what the first create from another address got once
	// one was refused (0: none was sent).
	afterOne udpwire.MsgType
	// otherAgain is what another address's next create got when afterOne
	// was a room (confirm; 0: not asked).
	otherAgain udpwire.MsgType
	// created counts every room made; refusedAt is created when the first
	// JOIN_FAILED came from an address other than one (-1: none came).
	created   int
	refusedAt int
	// relisted is how many rooms were listed again after relistedAt
	// creates, all answered (-1: not listed again).
	relisted, relistedAt int
	// err is a wrong answer to a create (udp-lobby/10/5 fails with it).
	err error
}

// fillPool runs (once per run) the pool filling; it skips when the pool
// is unknown or too large for MaxFill. A server that cleans up lazily may
// drop rooms it listed while the pool fills: when every create was
// answered, the rooms are listed again and the filling goes on for the
// ports those freed (once, within MaxFill), so that a refusal still due is
// not taken for a missing one.
func fillPool(t *conformance.T) (*poolFill, error) {
	v, err := t.Fixture("udp-pool-fill", func(ft *conformance.T) (any, error) {
		pr := udpOptions(ft.Env).InstancePorts
		if pr.IsZero() {
			return nil, conformance.Skipf("the instance limit is unknown: give --instance-ports LO-HI, the target's instance ports, to let the suite reach it (a pool of %d or more also needs --max-fill, its size + 1)", ft.Env.MaxFill)
		}
		rooms, err := listRooms(ft)
		if err != nil {
			return nil, err
		}
		f := &poolFill{ports: pr, listed: len(rooms), need: pr.Size() - len(rooms), refusedAt: -1, relisted: -1}
		if f.need+1 > ft.Env.MaxFill {
			return nil, conformance.Skipf("reaching the limit of %d instances would take %d creates (bound %d): give --max-fill %d", pr.Size(), f.need+1, ft.Env.MaxFill, f.need+1)
		}
		if err := f.fromOne(ft); err != nil || f.err != nil {
			return f, err
		}
		if err := f.fromOthers(ft); err != nil || f.err != nil || f.refusedAt >= 0 || f.oneRefused {
			return f, err
		}
		if rooms, err = listRooms(ft); err != nil {
			return f, keepVerify(err)
		}
		f.relisted, f.relistedAt = len(rooms), f.created
		if freed := pr.Size() - len(rooms); freed >= 0 && f.created+freed+1 <= ft.Env.MaxFill {
			f.need = f.created + freed
			return f, f.fromOthers(ft)
		}
		return f, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*poolFill), nil
}

// fromOne is the filling's first phase: one source address, one socket,
// as an attacker would, until the server refuses it or the pool is full.
func (f *poolFill) fromOne(ft *conformance.T) error {
	var err error
	if f.one, err = ft.Env.Sources.Acquire(ft.Ctx); err != nil {
		return err
	}
	s, err := ft.OpenUDPOn(f.one)
	if err != nil {
		return err
	}
	defer s.Close()
	s.FirstSendPaid() // Acquire's token pays for the first send
	for f.created <= f.need {
		m, err := createFrom(ft, s, fmt.Sprintf("LOBBY_CREATE_ROOM #%d (all from %v)", f.created+1, f.one))
		if err != nil {
			f.err = err
			return keepVerify(err)
		}
		if m.typ == udpwire.LobbyJoinFailed {
			f.oneRefused = true
			return nil
		}
		f.created++
		f.byOne++
	}
	return nil
}

// fromOthers is the second phase: the other addresses, until the pool is
// full (a create past f.need) or the server refuses one.
func (f *poolFill) fromOthers(ft *conformance.T) error {
	for f.created <= f.need {
		m, err := f.createOther(ft, fmt.Sprintf("LOBBY_CREATE_ROOM #%d", f.created+1))
		if err != nil || f.err != nil {
			return err
		}
		first := f.afterOne == 0
		if first {
			f.afterOne = m.typ
		}
		if m.typ == udpwire.LobbyJoinFailed {
			f.refusedAt = f.created
			return nil
		}
		f.created++
		if first && f.oneRefused && f.created+1 <= ft.Env.MaxFill {
			if err := f.confirm(ft); err != nil || f.err != nil || f.refusedAt >= 0 {
				return err
			}
		}
	}
	return nil
}

// confirm tells a per-address limit from a pool that was full when one
// was refused and had a room freed before another address asked (a
// server that cleans up lazily frees an earlier case's room at any
// moment): another address asks once more. A limit below the pool
// leaves it a room as a rule; a full pool that freed one room refuses
// it. (Asking from one again tells nothing: a lazy cleanup may as well
// have freed one of its own rooms, under its limit again.)
func (f *poolFill) confirm(ft *conformance.T) error {
	m, err := f.createOther(ft, fmt.Sprintf("LOBBY_CREATE_ROOM #%d (another address again: %v's limit, or was the pool full?)", f.created+1, f.one))
	if err != nil || f.err != nil {
		return err
	}
	if f.otherAgain = m.typ; m.typ == udpwire.LobbyJoinFailed {
		f.refusedAt = f.created
		return nil
	}
	f.created++
	return nil
}

// createOther creates a room from another address than one's (a socket
// of its own, closed after): ROOM_CREATED or JOIN_FAILED. Any other
// answer is f.err (udp-lobby/10/5 fails with it), and the error returned
// only a harness problem (keepVerify).
func (f *poolFill) createOther(ft *conformance.T, note string) (rawMsg, error) {
	x, err := lobbyRequest(ft, buildCreate(headerProfile(ft.Env)), note)
	if x != nil {
		x.sock.Close()
	}
	m, err := expect(x, err, "LOBBY_ROOM_CREATED or LOBBY_JOIN_FAILED", udpwire.LobbyRoomCreated, udpwire.LobbyJoinFailed)
	if err != nil {
		f.err = err
		return m, keepVerify(err)
	}
	return m, nil
}

// keepVerify returns nil for a *VerifyError (a finding the fixture keeps
// for its owning case) and err otherwise (a harness problem).
func keepVerify(err error) error {
	var v *conformance.VerifyError
	if errors.As(err, &v) {
		return nil
	}
	return err
}

// createFrom sends LOBBY_CREATE_ROOM from s (once more, same sequence, on
// silence) and returns ROOM_CREATED or JOIN_FAILED; anything else is a
// failure of the caller's case.
func createFrom(t *conformance.T, s *conformance.UDPSocket, note string) (rawMsg, error) {
	seq := nextSeq()
	req := buildCreate(headerProfile(t.Env))(seq)
	var last error = conformance.ErrSilence
	for attempt := 0; attempt < 2; attempt++ {
		if err := s.Send(t.Env.Addr, req, note); err != nil {
			return rawMsg{}, err
		}
		m, err := recvMessage(t, s, t.Env.Addr, note)
		if errors.Is(err, conformance.ErrSilence) {
			last = conformance.MergeSilence(last, err)
			continue
		}
		if err != nil {
			return rawMsg{}, err
		}
		if m.typ != udpwire.LobbyRoomCreated && m.typ != udpwire.LobbyJoinFailed {
			return rawMsg{}, conformance.Failf("LOBBY_ROOM_CREATED or LOBBY_JOIN_FAILED", "%d bytes (%s)", len(m.b), conformance.HexShort(m.b))
		}
		if id, _, ok := m.roomRef(); ok && m.typ == udpwire.LobbyRoomCreated {
			t.Env.NoteRoom(id)
		}
		return m, nil
	}
	return rawMsg{}, conformance.Failf("LOBBY_ROOM_CREATED or LOBBY_JOIN_FAILED", "no reply, twice%s", conformance.SilenceDetail(last))
}

func udpCreatePastLimit(t *conformance.T) error {
	f, err := fillPool(t)
	if err != nil {
		return err
	}
	if f.err != nil {
		return f.err
	}
	pr := f.ports
	switch {
	case f.refusedAt >= 0 || (f.oneRefused && f.created >= f.need):
		n := f.created
		if n < f.need {
			t.Notef("LOBBY_JOIN_FAILED after %d creates, with %d rooms listed before: the limit is below the %d ports given", n, f.listed, pr.Size())
		} else {
			t.Notef("LOBBY_JOIN_FAILED after %d creates (%d rooms listed before, %d ports)", n, f.listed, pr.Size())
		}
		return nil
	}
	relisted := ""
	if f.relisted >= 0 {
		relisted = fmt.Sprintf(", %d listed again after %d creates", f.relisted, f.relistedAt)
	}
	return conformance.Failf(fmt.Sprintf("LOBBY_JOIN_FAILED once the %d instance ports %v are in use", pr.Size(), pr),
		"%d creates all answered LOBBY_ROOM_CREATED (%d rooms listed before%s)", f.created, f.listed, relisted)
}

// udpOneAddressTakesAll: the one-address attack, judged on the pool filling.
func udpOneAddressTakesAll(t *conformance.T) error {
	f, err := fillPool(t)
	if err != nil {
		return err
	}
	if f.err != nil {
		return conformance.Owned(ProtoUDP, "LOBBY_JOIN_FAILED past the instance limit", conformance.Skipf("the pool filling met a wrong answer"))
	}
	if f.oneRefused && f.byOne == 0 {
		return conformance.Skipf("no free instance to take: the pool was full before the filling began (%d rooms listed, %d ports; this run made %d rooms itself)", f.listed, f.ports.Size(), t.Env.RoomsMade())
	}
	t.Notef("one address (%v) obtained %d rooms; %d were free (%d ports, %d rooms listed before)", f.one, f.byOne, f.need, f.ports.Size(), f.listed)
	switch {
	case !f.oneRefused:
		return conformance.Warnf("a per-address limit on rooms, below the pool",
			"%v obtained %d rooms without a refusal, every free instance (%d ports, %d listed before): one source can deny the lobby to everyone until the server's cleanup", f.one, f.byOne, f.ports.Size(), f.listed)
	case f.afterOne == udpwire.LobbyJoinFailed:
		return conformance.Warnf("a per-address limit on rooms, below the pool",
			"%v obtained %d rooms, then LOBBY_JOIN_FAILED, and another address was refused too: the one address took every free instance (%d ports, %d listed before)", f.one, f.byOne, f.ports.Size(), f.listed)
	case f.otherAgain == udpwire.LobbyJoinFailed:
		return conformance.Inconclusivef("%v was refused after %d rooms, another address then got a room and was refused the next: a per-address limit cannot be told from a pool that had one room free (%d ports, %d listed before)", f.one, f.byOne, f.ports.Size(), f.listed)
	case f.byOne >= f.need:
		// The one address filled what the list showed free: its refusal
		// is the full pool's, and the other addresses' rooms were freed
		// after it (a lazy cleanup can free several at once).
		return conformance.Inconclusivef("%v was refused after %d rooms, as many as the list showed free (%d ports, %d listed before), and other addresses then got rooms the server freed meanwhile: a per-address limit cannot be told from a pool the one address had filled", f.one, f.byOne, f.ports.Size(), f.listed)
	}
	t.Notef("then %v was refused while another address could still create a room: a per-address limit of %d rooms", f.one, f.byOne)
	return nil
}
