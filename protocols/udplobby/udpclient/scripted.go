package udpclient

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/lobbybench/lobbybench/script"
)

// scriptTransport plays a session's scripted steps on its socket: the
// lobby's channel to the target, the instance's to the port the last
// ROOM_CREATED or JOIN_SUCCESS named (script.Router), on the lobby's host.
// A datagram from any other address is stray (counted in the harness
// section), not a reply.
type scriptTransport struct{ s *session }

// ScriptTransport implements simclient.Scripter.
func (s *session) ScriptTransport(ctx context.Context) (script.Transport, error) {
	s.tr.watch(ctx)
	return scriptTransport{s}, nil
}

func (t scriptTransport) Send(channel string, b []byte) (time.Time, error) {
	to := t.s.lobby
	if channel == "instance" {
		if !t.s.inst.IsValid() {
			return time.Time{}, errors.New("no instance yet: no ROOM_CREATED or JOIN_SUCCESS named one")
		}
		to = t.s.inst
	}
	err := t.s.tr.send(to, b)
	return t.s.tr.sent, err
}

// Recv waits as a built-in request's wait does: with waits that may
// suspend (simclient.Base.MayAwait), when nothing is there yet it
// suspends the session (simclient.Base.Await) and returns
// script.ErrSuspended; the script's next Recv, once Resume plays the
// step again, goes on with the same wait.
func (t scriptTransport) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	for {
		t.s.tr.noPark = t.s.MayAwait(deadline)
		data, from, err := t.s.tr.recv(deadline)
		at := time.Now()
		if err == nil {
			at = t.s.replyAt()
		}
		switch {
		case err == errWouldBlock:
			_ = t.s.Await(t.s.tr.waitFD(), deadline) // simclient.ErrSuspended
			return "", nil, at, script.ErrSuspended
		case errors.Is(err, errTimeout):
			return "", nil, at, os.ErrDeadlineExceeded
		case err != nil:
			return "", nil, at, err
		case from == t.s.lobby:
			return "lobby", data, at, nil
		case t.s.inst.IsValid() && from == t.s.inst:
			return "instance", data, at, nil
		}
		t.s.Shared.StrayDatagram()
	}
}

// Route points the instance's channel at the port a reply named, on the
// lobby's host.
func (t scriptTransport) Route(r script.Route) error {
	if r.Channel != "instance" {
		return nil
	}
	port := r.Port
	if r.Addr.IsValid() {
		port = r.Addr.Port()
	}
	t.s.setInstance(port)
	return nil
}

var _ script.Router = scriptTransport{}
