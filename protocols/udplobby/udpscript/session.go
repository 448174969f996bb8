package udpscript

import (
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/script"
)

// session is one client's state across its scripted messages.
type session struct {
	profile udpwire.Profile
	// settled is false under header_profile auto until a received
	// datagram was framed under one profile; until then sends use spec.
	settled bool
	// seq is the last sequence id the session gave (0: none yet).
	seq uint16
	// sent are the sequence ids of the session's latest requests, and
	// whether each was answered; last is the latest sent.
	sent sentIDs
	last uint16
	// builtAnswered are the ids of the built-in steps' requests (FollowSeq)
	// a reply echoed already (nil until one did).
	builtAnswered map[uint16]bool
	// pings is when the ping series the session is in was due
	// (clientTime), zero when its last send was not a CLIENT_PING;
	// intended is the send being encoded's intended time (Intend).
	pings, intended time.Time
	// err is what was wrong with the options; every Encode returns it.
	err error
	// builtLast and built are the built-in steps' ids the session went
	// on after (FollowSeq): built+1 ids up to builtLast, sent by them.
	builtLast, built uint16
	// malformed are the sends broken on purpose, oldest first (at most
	// maxMalformed; nil until the first).
	malformed []malformedSent
	// buf is the datagram Encode made last: a session's sends take one
	// buffer, grown to the largest, not an allocation each.
	buf []byte
	// made is the profile NewSession gave it, for Renew.
	made struct {
		profile udpwire.Profile
		settled bool
	}
}

// Renew implements script.Renewer: the session as NewSession made it,
// but for what its socket, which the renewed client keeps, has seen: the
// ids it sent, the ones answered and its malformed sends are kept, so
// that a reply to the previous client's request arriving now is known
// (late, or a second reply: U-REPLY-DUP, as the built-in client, which
// keeps them too, judges it), and its buffer.
func (s *session) Renew() {
	*s = session{profile: s.made.profile, settled: s.made.settled, err: s.err, sent: s.sent, builtAnswered: s.builtAnswered,
		malformed: s.malformed, buf: s.buf, made: s.made}
}

var _ script.Renewer = (*session)(nil)

// Intend implements script.Scheduled.
func (s *session) Intend(t time.Time) { s.intended = t }

// clientTime is the clientTime of a CLIENT_PING sent now: the
// microseconds since its series was due (udpclient.ClientTime), this
// ping beginning one, due at its intended time (now when not told), when
// the session's last send was another message: the built-in ping step's
// series is due at its first ping's intended time too.
func (s *session) clientTime() uint32 {
	if s.pings.IsZero() {
		s.pings = s.intended
		if s.pings.IsZero() {
			s.pings = time.Now()
		}
	}
	return udpclient.ClientTime(s.pings)
}

var _ script.Scheduled = (*session)(nil)

// LastSeq implements udpclient.ScriptSeq.
func (s *session) LastSeq() uint16 { return s.seq }

// FollowSeq implements udpclient.ScriptSeq: the session goes on after
// last, the built-in steps' last sequence id, unless it has already
// gone past it (within half the id space: a scripted step resumed after
// a suspension, whose sends the built-in steps have not followed yet).
// The ids it skips are the built-in steps' (a range, not a list: a
// session renewed after thousands of requests costs nothing more): a
// late reply to one is an earlier request's (stale), not a reply to an
// id never sent.
func (s *session) FollowSeq(last uint16) {
	d := last - s.seq
	if s.seq != 0 && (d == 0 || d >= 1<<15) {
		return
	}
	s.builtLast, s.built = last, d
	if s.seq == 0 { // a new session: the built-in steps' ids, as far back as they may go
		s.built = uint16(min(int(last), 1<<15)) - 1
	}
	s.seq = last
}

var _ udpclient.ScriptSeq = (*session)(nil)

// NewSession returns a session for options: udpclient.Options (the
// scenario's udp-lobby options), a *udpclient.Options, or nil (the spec
// header). The sequence counter starts at 0, so the first send without a
// sequenceId carries 1, as the built-in client's first request does.
func (catalog) NewSession(options any) any {
	s := sessionFor(options)
	s.made.profile, s.made.settled = s.profile, s.settled
	return s
}

func sessionFor(options any) *session {
	switch o := options.(type) {
	case nil:
		return &session{profile: udpwire.ProfileSpec, settled: true}
	case udpclient.Options:
		return newSession(o.HeaderProfile)
	case *udpclient.Options:
		if o == nil {
			return newSession("")
		}
		return newSession(o.HeaderProfile)
	}
	return &session{err: fmt.Errorf("udpscript: options of type %T, want udpclient.Options", options)}
}

func newSession(profile string) *session {
	switch profile {
	case "", "auto":
		return &session{profile: udpwire.ProfileSpec, settled: profile == ""}
	}
	p, err := udpwire.ParseProfile(profile)
	if err != nil {
		return &session{err: fmt.Errorf("udpscript: header_profile: %v", err)}
	}
	return &session{profile: p, settled: true}
}

// sessionOf returns the session Encode and Decode were given.
func sessionOf(s any) (*session, error) {
	ss, ok := s.(*session)
	if !ok || ss == nil {
		return nil, fmt.Errorf("udpscript: session of type %T, want one NewSession made", s)
	}
	return ss, ss.err
}

// settle fixes an auto session's profile from received datagram b, when b
// is framed under one profile.
func (s *session) settle(b []byte) {
	if s.settled {
		return
	}
	if p, ok := udpwire.GuessProfile(b); ok {
		s.profile, s.settled = p, true
	}
}
