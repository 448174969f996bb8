package udpserver

import (
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// testConfig is a loopback config with short intervals.
func testConfig() Config {
	c := DefaultConfig()
	c.Addr = "127.0.0.1:0"
	c.BasePort = 0
	c.SocketBuffer = 0
	c.CleanupInterval = time.Hour
	c.IdleTimeout = time.Hour
	c.SeatHold = time.Hour
	c.CountdownInterval = 10 * time.Millisecond
	return c
}

func start(t testing.TB, c Config) *Server {
	t.Helper()
	s, err := Listen(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// client is a test client on its own loopback socket.
type client struct {
	t    testing.TB
	conn *net.UDPConn
	to   netip.AddrPort
	p    udpwire.Profile
	seq  uint16
	buf  []byte
	from netip.AddrPort // source of the last datagram received
}

func dial(t testing.TB, to netip.AddrPort, p udpwire.Profile) *client {
	return dialFrom(t, "127.0.0.1", to, p)
}

func dialFrom(t testing.TB, ip string, to netip.AddrPort, p udpwire.Profile) *client {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, conn: c, to: to, p: p, buf: make([]byte, 65536)}
}

func (c *client) send(b []byte) {
	c.t.Helper()
	if _, err := c.conn.WriteToUDPAddrPort(b, c.to); err != nil {
		c.t.Fatal(err)
	}
}

// recv waits up to d for a datagram from the address the client talks
// to; ok is false on timeout. Datagrams from any other address are
// dropped: another package's tests run beside these on the same loopback,
// and a server of theirs resending to a port that has since been reused
// here (a Leviathan endpoint does) is not this server's reply.
func (c *client) recv(d time.Duration) (raw []byte, ok bool) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(d))
	for {
		n, from, err := c.conn.ReadFromUDPAddrPort(c.buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, false
			}
			c.t.Fatal(err)
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if from != c.to {
			c.t.Logf("dropped a datagram from %s, not %s: % x", from, c.to, c.buf[:min(n, 32)])
			continue
		}
		c.from = from
		return append([]byte(nil), c.buf[:n]...), true
	}
}

const wait = 5 * time.Second // generous: a loaded 2-core machine

// reply waits for one server datagram and decodes it strictly.
func (c *client) reply() udpwire.Message {
	c.t.Helper()
	raw, ok := c.recv(wait)
	if !ok {
		c.t.Fatal("no reply within", wait)
	}
	var m udpwire.Message
	d := udpwire.Decoder{Profile: c.p, Dir: udpwire.ServerToClient}
	if err := d.Decode(raw, &m); err != nil {
		c.t.Fatalf("bad reply % x: %v", raw, err)
	}
	return m
}

// expect waits for a reply of type t with sequence seq.
func (c *client) expect(t udpwire.MsgType, seq uint16) udpwire.Message {
	c.t.Helper()
	m := c.reply()
	if m.Type != t || m.Seq != seq {
		c.t.Fatalf("got %v seq %d, want %v seq %d", m.Type, m.Seq, t, seq)
	}
	return m
}

// expectNone checks that nothing arrives within d.
func (c *client) expectNone(d time.Duration) {
	c.t.Helper()
	if raw, ok := c.recv(d); ok {
		c.t.Fatalf("unexpected datagram % x", raw)
	}
}

func (c *client) next() uint16 { c.seq++; return c.seq }

func (c *client) list() []udpwire.Room {
	c.t.Helper()
	seq := c.next()
	c.send(udpwire.AppendListRooms(nil, c.p, seq))
	m := c.expect(udpwire.LobbyRoomList, seq)
	return m.Rooms.AppendRooms(nil)
}

func (c *client) create() (uint32, uint16) {
	c.t.Helper()
	seq := c.next()
	c.send(udpwire.AppendCreateRoom(nil, c.p, seq))
	m := c.expect(udpwire.LobbyRoomCreated, seq)
	return m.RoomID, m.Port
}

// join returns the port, or 0 after JOIN_FAILED.
func (c *client) join(id uint32) uint16 {
	c.t.Helper()
	seq := c.next()
	c.send(udpwire.AppendJoinRoom(nil, c.p, seq, id))
	m := c.reply()
	if m.Seq != seq {
		c.t.Fatalf("reply seq %d, want %d", m.Seq, seq)
	}
	switch m.Type {
	case udpwire.LobbyJoinSuccess:
		if m.RoomID != id {
			c.t.Fatalf("JOIN_SUCCESS for room %d, asked %d", m.RoomID, id)
		}
		return m.Port
	case udpwire.LobbyJoinFailed:
		return 0
	}
	c.t.Fatalf("unexpected %v", m.Type)
	return 0
}

// inst sends an instance message and returns its sequence.
func (c *client) inst(t udpwire.MsgType, v uint32) uint16 {
	c.t.Helper()
	seq := c.next()
	b, err := udpwire.Append(nil, c.p, &udpwire.Message{Header: udpwire.Header{Type: t, Seq: seq}, Value: v})
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(b)
	return seq
}

// eventually polls cond until it holds or the wait expires.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func at(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
}
