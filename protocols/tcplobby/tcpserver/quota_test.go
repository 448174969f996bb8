package tcpserver

import (
	"testing"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// TestRoomsPerIP: connections from one address create rooms until the
// address has MaxRoomsPerIP; further CREATEs get RoomID 0 (counted), while
// another address still creates; a removed room gives its quota back.
func TestRoomsPerIP(t *testing.T) {
	cfg := testConfig(nil)
	cfg.MaxRoomsPerIP = 2
	s := startServer(t, cfg)
	var hosts []*client
	for i := range 2 {
		c := dialFrom(t, s, "127.0.0.1")
		if ack := c.create("r", "a"); ack.RoomID == 0 {
			t.Fatalf("create %d refused", i)
		}
		c.expect(tcpwire.TypeRoomUpdate)
		hosts = append(hosts, c)
	}
	flood := dialFrom(t, s, "127.0.0.1")
	for range 3 {
		if ack := flood.create("r", "a"); ack.RoomID != 0 {
			t.Fatalf("room %d created beyond the per-IP quota", ack.RoomID)
		}
	}
	// The host of a room it alone is in may re-create: it frees its own room.
	if ack := hosts[0].create("r2", "a"); ack.RoomID == 0 {
		t.Fatal("a host re-creating its own room was refused")
	}
	other := dialFrom(t, s, "127.0.0.2")
	if ack := other.create("r", "b"); ack.RoomID == 0 {
		t.Fatal("another address could not create")
	}
	st := s.Stats()
	if st.Errors["rooms-per-ip"] != 3 || st.RoomsActive != 3 || st.RoomOwners != 2 {
		t.Fatalf("rooms-per-ip %d (want 3), rooms %d (want 3), owners %d (want 2)",
			st.Errors["rooms-per-ip"], st.RoomsActive, st.RoomOwners)
	}
	// The last member leaves: the room goes, and the quota with it.
	hosts[1].send(&tcpwire.Disconnect{})
	waitFor(t, "room removed", func() bool { return s.Stats().RoomsActive == 2 })
	if ack := flood.create("r", "a"); ack.RoomID == 0 {
		t.Fatal("quota not given back when the room was removed")
	}
}

// TestConnsPerIP: beyond MaxConnsPerIP from one address a connection gets
// ERROR_MSG and is closed (counted apart from MaxConns), another address
// still connects, and a closed connection gives its quota back.
func TestConnsPerIP(t *testing.T) {
	cfg := testConfig(nil)
	cfg.MaxConnsPerIP = 2
	s := startServer(t, cfg)
	a1, a2 := dialFrom(t, s, "127.0.0.1"), dialFrom(t, s, "127.0.0.1")
	for _, c := range []*client{a1, a2} { // both served
		c.send(&tcpwire.ListRoomsReq{})
		c.expect(tcpwire.TypeListRoomsAck)
	}
	extra := dialFrom(t, s, "127.0.0.1")
	e := extra.expectError(tcpwire.ErrCodeServerError)
	if got := e.Text; got != "too many connections from your address" {
		t.Errorf("error text %q", got)
	}
	extra.expectEOF()
	b := dialFrom(t, s, "127.0.0.2")
	b.send(&tcpwire.ListRoomsReq{})
	b.expect(tcpwire.TypeListRoomsAck)
	st := s.Stats()
	if st.ConnsRejectedPerIP != 1 || st.ConnsRejected != 0 || st.ConnIPs != 2 {
		t.Fatalf("rejected per ip %d (want 1), rejected %d (want 0), source ips %d (want 2)",
			st.ConnsRejectedPerIP, st.ConnsRejected, st.ConnIPs)
	}
	a1.send(&tcpwire.Disconnect{})
	a1.expectEOF()
	waitFor(t, "connection released", func() bool { return s.Stats().ConnsActive == 2 })
	again := dialFrom(t, s, "127.0.0.1")
	again.send(&tcpwire.ListRoomsReq{})
	again.expect(tcpwire.TypeListRoomsAck)
}
