package udpserver

import (
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// later is a janitor time past every hold and cleanup interval of
// testConfig: tidy(later, true) expires every hold and removes every empty
// room, without waiting for real time.
func later(s *Server) int64 { return s.now() + int64(2*time.Hour) }

// TestRoomsPerIP floods CREATE from one address: it is refused once the
// address holds MaxRoomsPerIP rooms (JOIN_FAILED, counted), while another
// address still creates; when the rooms close the quota is given back.
func TestRoomsPerIP(t *testing.T) {
	cfg := testConfig()
	cfg.MaxInstances = 10
	cfg.MaxRoomsPerIP = 3
	s := start(t, cfg)
	a := dialFrom(t, "127.0.0.1", s.Addr(), cfg.Profile)
	b := dialFrom(t, "127.0.0.2", s.Addr(), cfg.Profile)
	for range cfg.MaxRoomsPerIP {
		a.create()
	}
	for range 5 { // the flood goes on: every further CREATE is refused
		seq := a.next()
		a.send(udpwire.AppendCreateRoom(nil, cfg.Profile, seq))
		a.expect(udpwire.LobbyJoinFailed, seq)
	}
	if id, _ := b.create(); id == 0 {
		t.Fatal("another address could not create")
	}
	st := s.Stats()
	if st.Failures[FailRoomsPerIP] != 5 || st.Rooms != 4 || st.RoomOwners != 2 {
		t.Fatalf("rooms-per-ip failures %d (want 5), rooms %d (want 4), owners %d (want 2)",
			st.Failures[FailRoomsPerIP], st.Rooms, st.RoomOwners)
	}
	// Allocate (the TCP lobby's rooms) is not a source: never refused by it.
	addr, err := s.Allocate(2)
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	s.Release(addr)

	// The rooms stay empty for a cleanup interval and are removed: the
	// quota comes back.
	if !s.tidy(later(s), true) {
		t.Fatal("server closed")
	}
	if st := s.Stats(); st.Rooms != 0 || st.RoomOwners != 0 {
		t.Fatalf("after cleanup: rooms %d, owners %d; want 0, 0", st.Rooms, st.RoomOwners)
	}
	for range cfg.MaxRoomsPerIP {
		a.create()
	}
}

// TestRoomsPerIPOff: 0 disables the quota; one address may take the pool.
func TestRoomsPerIPOff(t *testing.T) {
	cfg := testConfig()
	cfg.MaxInstances = 5
	cfg.MaxRoomsPerIP = 0
	s := start(t, cfg)
	a := dial(t, s.Addr(), cfg.Profile)
	for range cfg.MaxInstances {
		a.create()
	}
	if st := s.Stats(); st.Failures[FailRoomsPerIP] != 0 || st.Rooms != cfg.MaxInstances {
		t.Fatalf("failures %v, rooms %d", st.Failures, st.Rooms)
	}
}

// TestHoldsPerIP: an address that JOINs rooms and never enters them holds at
// most MaxHoldsPerIP seats; others still join; a hold taken at the instance
// or expired is given back.
func TestHoldsPerIP(t *testing.T) {
	cfg := testConfig()
	cfg.MaxHoldsPerIP = 2
	s := start(t, cfg)
	owner := dialFrom(t, "127.0.0.3", s.Addr(), cfg.Profile)
	var ids [3]uint32
	var ports [3]uint16
	for i := range ids {
		ids[i], ports[i] = owner.create()
	}
	a := dialFrom(t, "127.0.0.1", s.Addr(), cfg.Profile)
	b := dialFrom(t, "127.0.0.2", s.Addr(), cfg.Profile)
	if a.join(ids[0]) == 0 || a.join(ids[1]) == 0 {
		t.Fatal("first holds refused")
	}
	if a.join(ids[2]) != 0 {
		t.Fatal("a third hold from one address was granted")
	}
	if b.join(ids[2]) == 0 {
		t.Fatal("another address could not join")
	}
	st := s.Stats()
	if st.Failures[FailHoldsPerIP] != 1 || st.HeldSeats != 3 || st.SeatHolders != 2 {
		t.Fatalf("holds-per-ip failures %d (want 1), held %d (want 3), holders %d (want 2)",
			st.Failures[FailHoldsPerIP], st.HeldSeats, st.SeatHolders)
	}

	// a takes its seat in room 0: the hold becomes a player and frees quota.
	ia := dialFrom(t, "127.0.0.1", at(ports[0]), cfg.Profile)
	ia.expect(udpwire.ServerJoinAccept, ia.inst(udpwire.ClientJoinRequest, 0))
	if a.join(ids[2]) == 0 {
		t.Fatal("quota not given back when the hold was taken")
	}

	// Every hold expires: nothing is held by anyone.
	if !s.tidy(later(s), false) {
		t.Fatal("server closed")
	}
	if st := s.Stats(); st.HeldSeats != 0 || st.SeatHolders != 0 {
		t.Fatalf("after expiry: held %d, holders %d; want 0, 0", st.HeldSeats, st.SeatHolders)
	}
}

// TestQuotasReleasedOnClose: rooms and holds removed by Close or Release
// leave nothing in the quota tables.
func TestQuotasReleasedOnClose(t *testing.T) {
	cfg := testConfig()
	s := start(t, cfg)
	a := dial(t, s.Addr(), cfg.Profile)
	id, _ := a.create()
	a.join(id)
	addr, err := s.Allocate(2)
	if err != nil {
		t.Fatal(err)
	}
	s.Release(addr)
	if st := s.Stats(); st.RoomOwners != 1 || st.SeatHolders != 1 || st.Rooms != 1 {
		t.Fatalf("before close: owners %d, holders %d, rooms %d", st.RoomOwners, st.SeatHolders, st.Rooms)
	}
	s.Close()
	if st := s.Stats(); st.RoomOwners != 0 || st.SeatHolders != 0 || st.Rooms != 0 {
		t.Fatalf("after close: owners %d, holders %d, rooms %d", st.RoomOwners, st.SeatHolders, st.Rooms)
	}
}
