package tcpcases

import (
	"errors"
	"fmt"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// tcp-lobby.md §5.4 Game start and §7.3 its errors.

func init() {
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.4/1", Protocol: ProtoTCP, Section: secTCPStart, Level: conformance.Must,
		Desc:        "START_REQ from a non-host (everyone ready) is refused with ERROR_MSG 0x03 Not host",
		Requirement: "Only host can send START_REQ (§8.6); START_REQ from non-host is ignored or returns error (§7.3); START_REQ from a non-host: ERROR_MSG 0x03 (tcp-lobby.md §5.4)",
		Run: func(t *conformance.T) error {
			host, ack, err := newRoom(t)
			if err != nil {
				return err
			}
			defer host.Close()
			guest, jack, err := joinRoom(t, ack.RoomID)
			if err != nil {
				return err
			}
			defer guest.Close()
			if err := host.ready(ack.PlayerHash); err != nil {
				return conformance.Precondition("host ready", err)
			}
			if err := guest.ready(jack.PlayerHash); err != nil {
				return conformance.Precondition("guest ready", err)
			}
			return startRefused(guest, tcpwire.ErrCodeNotHost, "START_REQ from the non-host")
		},
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.4/2", Protocol: ProtoTCP, Section: secTCPStart, Level: conformance.Must,
		Desc:        "START_REQ from the host with a player not ready is refused with ERROR_MSG 0x04 Not all players ready",
		Requirement: "START_REQ Host request to start game (requires all players ready); START_REQ with not all players ready fails (§7.3); ERROR_MSG 0x04 (tcp-lobby.md §5.4)",
		Run: func(t *conformance.T) error {
			host, ack, err := newRoom(t)
			if err != nil {
				return err
			}
			defer host.Close()
			guest, _, err := joinRoom(t, ack.RoomID)
			if err != nil {
				return err
			}
			defer guest.Close()
			if err := host.ready(ack.PlayerHash); err != nil {
				return conformance.Precondition("host ready", err)
			}
			return startRefused(host, tcpwire.ErrCodeNotAllReady, "START_REQ with the guest not ready")
		},
	})
}

// startRefused sends START_REQ from c and expects ERROR_MSG code; a
// COUNTDOWN or GAME_START is a failure, silence a warning (the seed lets
// a server ignore the request).
func startRefused(c *tcpClient, code tcpwire.ErrorCode, what string) error {
	if err := c.send(&tcpwire.StartReq{}, what); err != nil {
		return err
	}
	expected := fmt.Sprintf("ERROR_MSG 0x%02x", uint8(code))
	p, err := c.wait(c.t.Env.Timeout, tcpwire.TypeErrorMsg, tcpwire.TypeCountdown, tcpwire.TypeGameStart)
	switch {
	case errors.Is(err, conformance.ErrSilence):
		return conformance.Warnf(expected, "%s", conformance.ReplyWords(err, "no reply (ignored, which the RFC allows; tcp-lobby.md §5.4 asks for the error)"))
	case errors.Is(err, errClosed):
		return conformance.Failf(expected, "%v", err)
	case err != nil:
		return err
	}
	if tcpwire.Type(p[0]) != tcpwire.TypeErrorMsg {
		return conformance.Failf(expected, "%v: the game is starting", tcpwire.Type(p[0]))
	}
	var m tcpwire.ErrorMsg
	if err := decodeAs(p, &m); err != nil {
		return conformance.Failf(expected, "%v", err)
	}
	if m.Code != code {
		return conformance.Failf(expected, "ERROR_MSG 0x%02x %q", uint8(m.Code), m.Text)
	}
	c.t.Notef("ERROR_MSG 0x%02x %q", uint8(m.Code), m.Text)
	return nil
}
