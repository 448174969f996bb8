package tcpcases

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/internal/sockbuf"
	"github.com/lobbybench/lobbybench/liveness"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// Names of the TCP lobby protocol (tcp-lobby.md) and its sections.
const (
	ProtoTCP = string(tcpwire.ProtocolName)

	secTCPFraming  = "tcp-lobby.md §2.2 Message framing"
	secTCPRoom     = "tcp-lobby.md §5.1 Room management"
	secTCPConn     = "tcp-lobby.md §5.2 Connection management"
	secTCPReady    = "tcp-lobby.md §5.3 Ready state management"
	secTCPStart    = "tcp-lobby.md §5.4 Game start"
	secTCPFlow     = "tcp-lobby.md §6 Connection flow"
	secTCPErrors   = "tcp-lobby.md §7 Error handling"
	secTCPSizes    = "tcp-lobby.md §A Packet size summary"
	secTCPRobust   = "tcp-lobby.md §R Robustness"
	maxTCPFrameLen = 1 << 20 // a length prefix above this is not read
)

// Group is the protocol's group of the suite: the conformance half
// of its descriptor (package protocols), which registers it.
func Group() conformance.Group {
	return conformance.Group{Name: ProtoTCP, Transport: "tcp", Reach: reachTCP,
		OldGroups: map[string]string{"tcp": ProtoTCP}, Cases: cases, ScriptTransport: scriptTransport,
	}
}

var tcpNames atomic.Uint32

// tcpClient is one TCP lobby connection of a case; every frame sent and
// received is logged, every payload received kept in frames.
type tcpClient struct {
	t            *conformance.T
	c            *net.TCPConn
	local, peer  string
	name         string
	pending      [][]byte
	frames       [][]byte
	hdr          [4]byte
	closedByPeer bool
	// hash is the client's PlayerHash once known (see ownHash).
	hash uint64
}

// dialTCP connects to the target from the next source address.
func dialTCP(t *conformance.T) (*tcpClient, error) { return dialTCPRead(t, 0) }

// dialTCPRead is dialTCP with a receive buffer of rcvbuf bytes from before
// the connection (0: the system's), so that the window it advertises is
// small from the handshake on (sockbuf.ReadControl).
func dialTCPRead(t *conformance.T, rcvbuf int) (*tcpClient, error) {
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		src, err := t.Env.Sources.Acquire(t.Ctx)
		if err != nil {
			return nil, err
		}
		c, err := dialTCPFromRead(t, src, rcvbuf)
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, fmt.Errorf("connect to %v: %w", t.Env.Addr, last)
}

// dialTCPFrom connects to the target from address src, once (the caller
// paces it).
func dialTCPFrom(t *conformance.T, src netip.Addr) (*tcpClient, error) {
	return dialTCPFromRead(t, src, 0)
}

func dialTCPFromRead(t *conformance.T, src netip.Addr, rcvbuf int) (*tcpClient, error) {
	d := net.Dialer{Timeout: t.Env.Timeout}
	if rcvbuf > 0 {
		d.Control = sockbuf.ReadControl(rcvbuf)
	}
	if src.IsValid() && !src.IsUnspecified() {
		d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
	}
	nc, err := d.DialContext(t.Ctx, "tcp", t.Env.Addr.String())
	if err != nil {
		return nil, err
	}
	c := &tcpClient{t: t, c: nc.(*net.TCPConn), local: nc.LocalAddr().String(), peer: nc.RemoteAddr().String(),
		name: fmt.Sprintf("lobbybench-%d", tcpNames.Add(1))}
	context.AfterFunc(t.Ctx, func() { nc.Close() })
	return c, nil
}

func (c *tcpClient) Close() { c.c.Close() }

// send writes m as one frame.
func (c *tcpClient) send(m tcpwire.Message, note string) error {
	return c.sendRaw(tcpwire.AppendFrame(nil, m), note)
}

// sendRaw writes bytes as they are (a frame, half a frame, garbage).
func (c *tcpClient) sendRaw(b []byte, note string) error {
	c.t.LogSent(c.local, c.peer, b, note)
	c.c.SetWriteDeadline(time.Now().Add(c.t.Env.Timeout))
	_, err := c.c.Write(b)
	return err
}

// errClosed is what read returns when the server ended the stream
// (errors.Is; the error itself is a *closedError saying whether it closed
// or reset it).
var errClosed = errors.New("the server closed the connection")

// closedError is the end of the stream by the server: a close (FIN, EOF)
// or a reset (RST). It wraps what the read met, so that
// liveness.Classify reads it as closed, not silent.
type closedError struct {
	reset bool
	err   error
}

func (e *closedError) Error() string {
	if e.reset {
		return "the server reset the connection"
	}
	return "the server closed the connection"
}

func (e *closedError) Is(target error) bool { return target == errClosed }
func (e *closedError) Unwrap() error        { return e.err }

// read reads one frame within d and returns its payload.
func (c *tcpClient) read(d time.Duration) ([]byte, error) {
	if err := c.t.ReadFull(c.c, c.hdr[:], d); err != nil {
		return nil, c.readErr(err)
	}
	n := binary.LittleEndian.Uint32(c.hdr[:])
	if n > maxTCPFrameLen {
		c.t.LogRecv(c.local, c.peer, c.hdr[:], "length prefix too large to read")
		return nil, conformance.Failf("a frame of at most 4096 bytes", "length prefix %d (% x)", n, c.hdr[:])
	}
	buf := make([]byte, 4+n)
	copy(buf, c.hdr[:])
	if err := c.t.ReadFull(c.c, buf[4:], c.t.Env.Timeout); err != nil {
		c.t.LogRecv(c.local, c.peer, c.hdr[:], "length prefix; the payload never came")
		return nil, c.readErr(err)
	}
	note := ""
	if n > 0 {
		note = tcpwire.Type(buf[4]).String()
	}
	c.t.LogRecv(c.local, c.peer, buf, note)
	p := buf[4:]
	c.frames = append(c.frames, p)
	return p, nil
}

func (c *tcpClient) readErr(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if c.t.Ctx.Err() != nil {
			return c.t.Ctx.Err()
		}
		return conformance.ErrSilence
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
		c.closedByPeer = true
		return &closedError{reset: errors.Is(err, syscall.ECONNRESET), err: err}
	}
	return err
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "read"
}

// wait returns the first payload (pending first) whose type is one of
// types, within d; others are kept in pending.
func (c *tcpClient) wait(d time.Duration, types ...tcpwire.Type) ([]byte, error) {
	p, err := c.waitFor(d, func(p []byte) bool { return len(p) > 0 && hasTCPType(types, tcpwire.Type(p[0])) })
	var s *conformance.Silence
	if errors.As(err, &s) && len(types) > 0 && len(types) <= 3 {
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = t.String()
		}
		s.Want = strings.Join(names, " or ") + " within the timeout"
	}
	return p, err
}

// drain reads what arrives within d (a quiet period ends it early).
func (c *tcpClient) drain(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		p, err := c.read(time.Until(deadline))
		if err != nil {
			return
		}
		c.pending = append(c.pending, p)
	}
}

func hasTCPType(ts []tcpwire.Type, t tcpwire.Type) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// request sends m and waits for a reply of one of types.
func (c *tcpClient) request(m tcpwire.Message, types ...tcpwire.Type) ([]byte, error) {
	if err := c.send(m, m.Type().String()); err != nil {
		return nil, err
	}
	return c.wait(c.t.Env.Timeout, types...)
}

// tcpExpect turns a request's outcome into a reply or a VerifyError, owned
// by the case that judges the reply what (Case.Owns).
func tcpExpect(p []byte, err error, what string) ([]byte, error) {
	switch {
	case errors.Is(err, conformance.ErrSilence):
		return nil, conformance.Owned(ProtoTCP, what, conformance.Failf(what, "%s", conformance.ReplyWords(err, "no reply within the timeout")))
	case errors.Is(err, errClosed):
		return nil, conformance.Owned(ProtoTCP, what, conformance.Failf(what, "%v", err))
	case err != nil:
		return nil, err
	}
	return p, nil
}

// decodeAs decodes p leniently into m (sizes and counts checked, field
// values tolerated), for cases that read fields of a frame whose exact
// form another case owns.
func decodeAs(p []byte, m tcpwire.Message) error {
	return m.DecodeOpts(p, tcpwire.Options{Lenient: true})
}

func (c *tcpClient) create() (*tcpwire.CreateRoomAck, error) {
	room := "room-" + c.name
	req := &tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName(room), PlayerName: tcpwire.MakeName(c.name)}
	p, err := c.request(req, tcpwire.TypeCreateRoomAck)
	p, err = tcpExpect(p, err, "CREATE_ROOM_ACK")
	if err != nil {
		return nil, err
	}
	var ack tcpwire.CreateRoomAck
	if derr := decodeAs(p, &ack); derr != nil {
		// Malformed (tcp-lobby/5.1/2 judges it): the room, if it was made,
		// is in the list under the unique name the suite gave it.
		id, lerr := findTCPRoom(c.t, room)
		if lerr != nil {
			return nil, conformance.Owned(ProtoTCP, "CREATE_ROOM_ACK", conformance.Failf("a CREATE_ROOM_ACK of 13 bytes", "%v (% x); and the room list could not be read: %v", derr, p, lerr))
		}
		if id == 0 {
			c.t.Notef("CREATE_ROOM_ACK is malformed (% x, see tcp-lobby/5.1/2) and room %q is not listed: read as a failed creation (RoomID 0)", p, room)
		} else {
			c.t.Notef("CREATE_ROOM_ACK is malformed (% x, see tcp-lobby/5.1/2); went on with room %d, found by its name in LIST_ROOMS_ACK", p, id)
		}
		return &tcpwire.CreateRoomAck{RoomID: id}, nil
	}
	c.hash = ack.PlayerHash
	return &ack, nil
}

// findTCPRoom lists the rooms on a connection of its own and returns the id
// of the room named name (0 when none is).
func findTCPRoom(t *conformance.T, name string) (uint32, error) {
	lc, err := dialTCP(t)
	if err != nil {
		return 0, err
	}
	defer lc.Close()
	p, err := lc.request(&tcpwire.ListRoomsReq{}, tcpwire.TypeListRoomsAck)
	if p, err = tcpExpect(p, err, "LIST_ROOMS_ACK"); err != nil {
		return 0, err
	}
	var l tcpwire.ListRoomsAck
	if err := decodeAs(p, &l); err != nil {
		return 0, err
	}
	for _, r := range l.Rooms[:min(int(l.Count), len(l.Rooms))] {
		if r.Name.String() == name {
			return r.ID, nil
		}
	}
	return 0, nil
}

// join sends JOIN_ROOM_REQ for room id. A malformed JOIN_ROOM_ACK whose
// status byte is there is read for its status (and hash, when present) and
// returned without error: tcp-lobby/5.1/3 and tcp-lobby/A/1 judge its layout, and the
// cases that need only the status go on.
func (c *tcpClient) join(id uint32) (*tcpwire.JoinRoomAck, []byte, error) {
	req := &tcpwire.JoinRoomReq{RoomID: id, PlayerName: tcpwire.MakeName(c.name)}
	p, err := c.request(req, tcpwire.TypeJoinRoomAck)
	p, err = tcpExpect(p, err, "JOIN_ROOM_ACK")
	if err != nil {
		return nil, nil, err
	}
	var ack tcpwire.JoinRoomAck
	if derr := decodeAs(p, &ack); derr != nil {
		if len(p) < 2 {
			return nil, p, conformance.Failf("a JOIN_ROOM_ACK of 11 + 42 × PlayerCount bytes", "%v (% x)", derr, p)
		}
		ack = tcpwire.JoinRoomAck{Status: tcpwire.JoinStatus(p[1])}
		if len(p) >= 10 {
			ack.PlayerHash = binary.LittleEndian.Uint64(p[2:10])
		}
		c.t.Notef("JOIN_ROOM_ACK is malformed (%s, see tcp-lobby/5.1/3 and tcp-lobby/A/1); went on with its status %v", conformance.HexShort(p), ack.Status)
	}
	c.hash = ack.PlayerHash
	return &ack, p, nil
}

// learnHash returns ownHash, waiting (at most the timeout) for a frame
// that tells it when the ACK did not; 0 when none came. Frames read
// meanwhile stay pending.
func (c *tcpClient) learnHash() uint64 {
	if h := c.ownHash(); h != 0 {
		return h
	}
	if p, err := c.waitFor(c.t.Env.Timeout, func([]byte) bool { return c.ownHash() != 0 }); err == nil {
		c.pending = append([][]byte{p}, c.pending...) // still there for whoever waits for it
	}
	return c.hash
}

// ownHash is the client's PlayerHash: from its ACK, or else from a
// ROOM_UPDATE (or JOIN_ROOM_ACK) entry that carries its name; 0 when
// neither told it.
func (c *tcpClient) ownHash() uint64 {
	if c.hash != 0 {
		return c.hash
	}
	for _, p := range c.frames {
		if len(p) == 0 {
			continue
		}
		var players []tcpwire.PlayerInfo
		switch tcpwire.Type(p[0]) {
		case tcpwire.TypeRoomUpdate:
			var m tcpwire.RoomUpdate
			if decodeAs(p, &m) == nil {
				players = m.Players[:min(int(m.Count), len(m.Players))]
			}
		case tcpwire.TypeJoinRoomAck:
			var m tcpwire.JoinRoomAck
			if decodeAs(p, &m) == nil {
				players = m.Players[:min(int(m.Count), len(m.Players))]
			}
		}
		for _, pi := range players {
			if pi.Name.String() == c.name && pi.Hash != 0 {
				c.hash = pi.Hash
				return c.hash
			}
		}
	}
	return 0
}

// newRoom connects a host and creates a room; a RoomID of 0 (no free room)
// is a skip.
func newRoom(t *conformance.T) (*tcpClient, *tcpwire.CreateRoomAck, error) {
	h, err := dialTCP(t)
	if err != nil {
		return nil, nil, err
	}
	ack, err := h.create()
	if err != nil {
		h.Close()
		return nil, nil, conformance.Precondition("create a room", err)
	}
	if ack.RoomID == 0 {
		h.Close()
		return nil, nil, conformance.Skipf("CREATE_ROOM_ACK RoomID 0: the server has no free room")
	}
	if ack.PlayerHash == 0 {
		ack.PlayerHash = h.learnHash()
	}
	return h, ack, nil
}

// joinRoom connects a client and joins room id; a refusal is a skip.
func joinRoom(t *conformance.T, id uint32) (*tcpClient, *tcpwire.JoinRoomAck, error) {
	c, err := dialTCP(t)
	if err != nil {
		return nil, nil, err
	}
	ack, _, err := c.join(id)
	if err != nil {
		c.Close()
		return nil, nil, conformance.Precondition("join a room", err)
	}
	if ack.Status != tcpwire.JoinSuccess {
		c.Close()
		return nil, nil, conformance.Owned(ProtoTCP, "JOIN_ROOM_ACK", conformance.Skipf("JOIN_ROOM_ACK status %v joining room %d", ack.Status, id))
	}
	if ack.PlayerHash == 0 {
		ack.PlayerHash = c.learnHash()
	}
	return c, ack, nil
}

// ready sends READY_REQ and waits for the PLAYER_READY about the sender
// (hash, or when 0 the hash ownHash learns), which every member including
// the sender gets.
func (c *tcpClient) ready(hash uint64) error {
	if err := c.send(&tcpwire.ReadyReq{}, "READY_REQ"); err != nil {
		return err
	}
	_, err := c.waitFor(c.t.Env.Timeout, func(p []byte) bool {
		var m tcpwire.PlayerReady
		if len(p) == 0 || tcpwire.Type(p[0]) != tcpwire.TypePlayerReady || decodeAs(p, &m) != nil {
			return false
		}
		h := hash
		if h == 0 {
			h = c.ownHash()
		}
		return h != 0 && m.PlayerHash == h
	})
	_, err = tcpExpect(nil, err, "PLAYER_READY")
	return err
}

// waitFor is wait with a predicate.
func (c *tcpClient) waitFor(d time.Duration, match func([]byte) bool) ([]byte, error) {
	for i, p := range c.pending {
		if match(p) {
			c.pending = append(c.pending[:i:i], c.pending[i+1:]...)
			return p, nil
		}
	}
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, c.silence()
		}
		p, err := c.read(left)
		if errors.Is(err, conformance.ErrSilence) {
			return nil, c.silence()
		}
		if err != nil {
			return nil, err
		}
		if match(p) {
			return p, nil
		}
		c.pending = append(c.pending, p)
	}
}

// silence is the silence of a wait that matched nothing: what came
// instead, the frames left unread, is said (never "no reply" when the
// server sent something).
func (c *tcpClient) silence() error {
	var names []string
	for _, p := range c.pending {
		name := "an empty frame"
		if len(p) > 0 {
			name = tcpwire.Type(p[0]).String()
		}
		names = append(names, name)
	}
	return conformance.Instead("awaited reply within the timeout", names, c.pending)
}

// reachTCP checks the lobby accepts a connection and answers
// LIST_ROOMS_REQ with a frame.
func reachTCP(ctx context.Context, env *conformance.Env) (string, error) {
	t := conformance.NewT(ctx, env, &conformance.Case{ID: "reach", Protocol: ProtoTCP, Level: conformance.Info})
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		c, err := dialTCP(t)
		if err != nil {
			last = err
			continue
		}
		_, err = c.request(&tcpwire.ListRoomsReq{}, tcpwire.Types...)
		c.Close()
		if err == nil {
			return "", nil
		}
		last = err
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	switch {
	case errors.Is(last, syscall.ECONNREFUSED):
		return "", fmt.Errorf("%w: %s: connection refused (nothing listens): %w", conformance.ErrUnreachable, env.Target, last)
	case errors.Is(last, errClosed), errors.Is(last, syscall.ECONNRESET), errors.Is(last, syscall.EPIPE):
		// Never "no answer": a FIN or an RST came.
		return "", fmt.Errorf("%w: %s: %w", conformance.ErrUnreachable, env.Target, liveness.Closed("LIST_ROOMS_REQ", last))
	}
	return "", fmt.Errorf("%w: %s: no answer to LIST_ROOMS_REQ (%w)", conformance.ErrUnreachable, env.Target, last)
}
