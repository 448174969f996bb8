package udpcases

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §1 Overview: one request, one reply.

// dupWindow is how long udp-lobby/1/1 listens after a reply for a second
// datagram (at most the run's timeout): a server or proxy that sends its
// replies twice sends the copy at once.
const dupWindow = 500 * time.Millisecond

// missingRoom is the roomId udp-lobby/1/1 asks to join: no test lobby
// gets that far, so the answer is LOBBY_JOIN_FAILED.
const missingRoom = 0xFFFFFFF0

// maxExtra bounds the further datagrams udp-lobby/1/1 reads and names.
const maxExtra = 8

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/1/1", Protocol: ProtoUDP, Section: secOverview, Rule: "U-REPLY-DUP", Level: conformance.Must,
		Desc:        "a request sent once is answered with exactly one datagram: LOBBY_LIST_ROOMS and a LOBBY_JOIN_ROOM of a missing room get no second datagram after their reply",
		Requirement: "One request, one reply: the lobby answers each well-formed request with exactly one datagram",
		Run:         udpOneReply,
	})
}

func udpOneReply(t *conformance.T) error {
	prof := headerProfile(t.Env)
	reqs := []struct {
		name string
		b    []byte
	}{
		{"LOBBY_LIST_ROOMS", udpwire.AppendListRooms(nil, prof, 1)},
		{fmt.Sprintf("LOBBY_JOIN_ROOM of missing room %d", uint32(missingRoom)), udpwire.AppendJoinRoom(nil, prof, 1, missingRoom)},
	}
	window := min(dupWindow, t.Env.Timeout)
	var bad []string
	answered := 0
	for _, r := range reqs {
		extra, ok, err := countReplies(t, r.name, r.b, window)
		if err != nil {
			return err
		}
		if !ok {
			continue // no reply at all: the cases of its section judge that
		}
		answered++
		if len(extra) > 0 {
			bad = append(bad, fmt.Sprintf("%s sent once: its reply, then %s within %s", r.name, strings.Join(extra, ", "), window))
		}
	}
	if answered == 0 {
		return conformance.Skipf("neither request was answered: udp-lobby/4/1 and udp-lobby/10/1 judge that")
	}
	if len(bad) > 0 {
		return conformance.Fail("exactly one datagram per request", "a second datagram: "+strings.Join(bad, "; "))
	}
	t.Notef("%d requests answered once each (listened %s after each reply)", answered, window)
	return nil
}

// countReplies sends req once from a fresh socket, waits for its reply
// (ok false: none came) and then listens for window; it returns what else
// the lobby's host sent in that time.
func countReplies(t *conformance.T, name string, req []byte, window time.Duration) (extra []string, ok bool, err error) {
	s, err := t.OpenUDP()
	if err != nil {
		return nil, false, err
	}
	defer s.Close()
	if err := s.Send(t.Env.Addr, req, name); err != nil {
		return nil, false, err
	}
	if _, err := recvMessage(t, s, t.Env.Addr, name); err != nil {
		if errors.Is(err, conformance.ErrSilence) {
			return nil, false, nil
		}
		var v *conformance.VerifyError
		if errors.As(err, &v) {
			return nil, false, nil // junk and no reply: udp-lobby/3/5's
		}
		return nil, false, err
	}
	deadline := time.Now().Add(window)
	for left := window; left > 0 && len(extra) < maxExtra; left = time.Until(deadline) {
		b, err := s.Recv(t.Env.Addr, left)
		if errors.Is(err, conformance.ErrSilence) {
			break
		}
		if err != nil {
			return nil, true, err
		}
		m, ok := parseRaw(b, headerProfile(t.Env))
		junkOf(t.Env).note(name, b, ok)
		if !ok {
			continue // no message, no second reply: udp-lobby/3/5 judges it
		}
		extra = append(extra, fmt.Sprintf("%v seq %d [%s]", m.typ, m.seq, conformance.HexShort(b)))
	}
	return extra, true, nil
}
