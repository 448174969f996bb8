package udpclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Spec is the UDP lobby protocol as the scenario loader knows it: the
// scenario half of its descriptor (protocols/udplobby).
var Spec = scenario.ProtocolSpec{
	Name: udpwire.ProtocolName, Order: 1, Transport: "udp", VirtualFlows: true,
	Steps: steps,
	Malformed: []scenario.MalformedKind{scenario.BadCRC, scenario.Truncated, scenario.WrongLength, scenario.UnknownType,
		scenario.WrongDirection, scenario.RandomBytes},
	ProbeRequests: []scenario.StepKind{stepkit.ListRooms, stepkit.CreateRoom, stepkit.Join},
	MalformedTo:   []string{"instance"}, // the game instance a join returned
	// A step's packets take ids first..first+count-1 and its liveness
	// request the next: count at most 2^16-1 keeps them all apart.
	MaxMalformed: 1<<16 - 1,
	ProbeScripts: true,
	Keys:         keys,
	Options:      parseOptions,
	Flags:        flags,
}

// Client is how a run plays the UDP lobby protocol: the client half of its
// descriptor.
var Client = simclient.Client{
	Rules:    rules(),
	Identify: identify(),
	Game: &simclient.Game{
		TTGJoin:   []scenario.StepKind{InstanceJoin, Hello},
		Room:      []scenario.StepKind{stepkit.Join},
		Fill:      []scenario.StepKind{stepkit.Join},
		WaitStart: []scenario.StepKind{stepkit.WaitGameStart},
		Leave:     []scenario.StepKind{Leave, stepkit.Disconnect},
	},
	Precise:   true, // its sessions poll under run --precise (PollWindow)
	Occupancy: occupancy,
	RoomCheck: checkRooms,
	Reach:     reach,
	New:       New,
}

// identifySeq is the sequence id of the LOBBY_LIST_ROOMS another
// protocol's reachability check sends last to name a UDP lobby found at
// its address (Client.Identify): 0xFFFE in the spec header profile, one
// less in the rtype17 one.
const identifySeq = 0xFFFE

// reachListRooms returns a reachability check's LOBBY_LIST_ROOMS in the
// spec and the rtype17 header profile, with sequence ids seq and seq-1.
func reachListRooms(seq uint16) (spec, rtype17 []byte) {
	return udpwire.AppendListRooms(nil, udpwire.ProfileSpec, seq),
		udpwire.AppendListRooms(nil, udpwire.ProfileRType17, seq-1)
}

// echoes reports whether datagram b, framed under some header profile
// (its CRC and the rest unjudged), carries sequence id seq or seq-1: a
// reply to reachListRooms(seq), as a lobby's reply echoes its request's
// sequenceId (udp-lobby.md §12). A datagram from another port that does
// not is a stray, not an answer from another port (U-REPLY-SOURCE's rule).
func echoes(b []byte, seq uint16) bool {
	for _, p := range udpwire.Profiles {
		h, err := udpwire.DecodeHeader(b, p)
		var e *udpwire.Error
		if err == nil || errors.As(err, &e) && e.HaveHeader {
			if h.Seq == seq || h.Seq == seq-1 {
				return true
			}
		}
	}
	return false
}

// identify tells a UDP lobby: it answers a LOBBY_LIST_ROOMS in either
// header profile with a datagram that frames under one.
func identify() *simclient.Identify {
	spec, rtype17 := reachListRooms(identifySeq)
	return &simclient.Identify{Title: "UDP lobby", Packets: [][]byte{spec, rtype17},
		Is: func(b []byte) bool { _, ok := udpwire.GuessProfile(b); return ok }}
}

// reach checks a UDP lobby: a LOBBY_LIST_ROOMS must draw a datagram back
// that is a lobby's, framed under a header profile or at least with a
// length field that fits (udplobby.LengthFits: judging its CRC and the
// rest is the run's job); bytes of no protocol are named, not taken for
// an answer. With header_profile auto (or empty) each
// try sends the request in both header profiles, so a server speaking
// either is reachable, and the reply's profile is returned. With an
// explicit profile the last try also sends the other profile: a server that
// answers only that one fails with a message naming the header_profile to
// set.
func reach(ctx context.Context, addr netip.AddrPort, opts scenario.Options, timeout time.Duration) (scenario.Options, error) {
	o, _ := opts.(Options)
	answered, err := reachProfile(ctx, addr, o.HeaderProfile, timeout)
	if err != nil || o.HeaderProfile != "auto" || answered == "" {
		return nil, err
	}
	// The check's reply is the first reply auto guesses from: the
	// sessions need not spend a timeout finding the header again.
	o.HeaderProfile = answered
	return o, nil
}

// reachProfile is reach for header profile profile; answered is the
// profile the reply was in ("" when it could not tell).
func reachProfile(ctx context.Context, addr netip.AddrPort, profile string, timeout time.Duration) (answered string, err error) {
	// A sequence id of its own, so that a stray lobby datagram (a late
	// reply to another check or client that held the check's port before)
	// is not taken for the target's answer from another port.
	seq := uint16(2 + rand.N(0xFFFD))
	spec, rtype17 := reachListRooms(seq)
	both := [][]byte{spec, rtype17}
	echo := func(b []byte) bool { return echoes(b, seq) }
	var r simclient.DatagramReach
	want, err := udpwire.ParseProfile(profile)
	if err != nil { // "auto" or empty: either profile will do
		r = simclient.DatagramReach{
			What:    "LOBBY_LIST_ROOMS (spec or rtype17 header)",
			Packets: func(int) [][]byte { return both },
			Mine:    echo,
			Judge: func(b []byte) (bool, error) {
				got, ok := udpwire.GuessProfile(b)
				if ok {
					answered = got.String()
				}
				return ok || udpwire.LengthFits(b), nil
			},
		}
	} else {
		mine, other := both[0], both[1]
		if want == udpwire.ProfileRType17 {
			mine, other = other, mine
		}
		r = simclient.DatagramReach{
			What: fmt.Sprintf("LOBBY_LIST_ROOMS (%v header)", want),
			Mine: echo,
			Packets: func(try int) [][]byte {
				if try == simclient.ReachTries-1 {
					return [][]byte{mine, other}
				}
				return [][]byte{mine}
			},
			Judge: func(b []byte) (bool, error) {
				got, ok := udpwire.GuessProfile(b)
				if !ok && !udpwire.LengthFits(b) {
					return false, nil // not the protocol: keep listening
				}
				if ok && got != want {
					return true, fmt.Errorf("no reply in the %v header, but the server answers the %v header: set header_profile: %v (or auto)", want, got, got)
				}
				answered = want.String()
				return true, nil
			},
		}
	}
	if err := r.Run(ctx, addr, timeout); err != nil {
		return "", err
	}
	return answered, nil
}
