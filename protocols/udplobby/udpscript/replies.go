package udpscript

import (
	"fmt"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/script"
)

// track remembers a request's sequence id.
func (s *session) track(seq uint16) {
	s.sent.add(seq)
	s.last = seq
}

// judgeReply marks a reply that answers an earlier request than the last
// one sent as stale, as the built-in client does: a second reply to a
// request already answered is a U-REPLY-DUP (udp-lobby.md §1: one
// request, exactly one datagram); a first one is a late answer (to a
// request the script sent before, or sent again), not counted. A reply
// echoing an id never sent is left to the expect, which names it. An
// instance's event echoes no request.
func (s *session) judgeReply(d *script.Decoded, h udpwire.Header) {
	if h.Type.Event() || s.judgeMalformedReply(d, h) {
		return
	}
	i := s.sent.find(h.Seq)
	var answered bool
	switch {
	case i >= 0:
		answered = s.sent.isAnswered(i)
		s.sent.answer(i)
	case s.builtSeq(h.Seq):
		if s.builtAnswered == nil {
			s.builtAnswered = map[uint16]bool{}
		}
		answered = s.builtAnswered[h.Seq]
		s.builtAnswered[h.Seq] = true
	default:
		return
	}
	switch {
	case answered:
		d.Stale, d.Route = true, nil
		d.Violations = append(d.Violations, script.Violation{Rule: udpclient.RuleUReplyDup,
			Detail: fmt.Sprintf("%v seq %d: a second reply to the request of that sequence id, already answered (udp-lobby.md §1: exactly one datagram)", h.Type, h.Seq)})
	case h.Seq != s.last:
		d.Stale, d.Route = true, nil
	}
}

// sentSeq reports whether the session sent a request with sequence id
// seq, or the built-in steps it went on after did (FollowSeq).
func (s *session) sentSeq(seq uint16) bool {
	return s.sent.find(seq) >= 0 || s.builtSeq(seq)
}

// builtSeq reports whether the built-in steps the session went on after
// sent a request with sequence id seq (FollowSeq).
func (s *session) builtSeq(seq uint16) bool {
	return s.builtLast != 0 && s.builtLast-seq <= s.built
}

// maxMalformed bounds the malformed sends a session remembers: a reply
// to an older one is judged as one to an id never sent.
const maxMalformed = 64

// malformedSent is a send broken on purpose (Break): its sequence id,
// its kind, and whether a reply to it was counted.
type malformedSent struct {
	seq     uint16
	kind    string
	replied bool
}

// noteMalformed remembers that the datagram of sequence id seq was
// broken by kind.
func (s *session) noteMalformed(seq uint16, kind string) {
	if len(s.malformed) == maxMalformed {
		s.malformed = append(s.malformed[:0], s.malformed[1:]...)
	}
	s.malformed = append(s.malformed, malformedSent{seq: seq, kind: kind})
}

// judgeMalformedReply judges a reply to a malformed send, and reports
// whether it was one: stale (no expect takes it), and, when it is the
// first reply to that send, its kind in d.Malformed and the rule the
// built-in malformed step charges (a lobby or an instance answered a packet it
// should have dropped, udp-lobby.md §3.4). A reply is one when it echoes
// a malformed send's sequence id, or, echoing none this session sent,
// when a send of random bytes (which carried no id to echo) has no reply
// yet: the latest such (the built-in step blames the last malformed
// packet), else the latest answered (a copy). Each counts one reply; a
// script reads replies only in its expects, so one may come several
// sends after its packet.
func (s *session) judgeMalformedReply(d *script.Decoded, h udpwire.Header) bool {
	if len(s.malformed) == 0 {
		return false // nothing was broken: every reply is judged as one (judgeReply)
	}
	m := s.malformedSeq(h.Seq)
	if m == nil && !s.sentSeq(h.Seq) {
		m = s.unechoed()
	}
	if m == nil {
		return false
	}
	d.Stale, d.Route = true, nil
	if !m.replied { // a copy of the reply is not counted again, as the step counts a packet answered once
		m.replied, d.Malformed = true, m.kind
		rule := udpclient.RuleUMalformedAns
		if h.Type.Channel() == udpwire.ChannelInstance {
			rule = udpclient.RuleIMalformedAns
		}
		d.Violations = append(d.Violations, script.Violation{Rule: rule,
			Detail: fmt.Sprintf("%v seq %d: a reply to a packet sent malformed (%s) on purpose", h.Type, h.Seq, m.kind)})
	}
	return true
}

// malformedSeq is the malformed send whose datagram carried sequence id
// seq, the latest, or nil.
func (s *session) malformedSeq(seq uint16) *malformedSent {
	for i := len(s.malformed) - 1; i >= 0; i-- {
		if m := &s.malformed[i]; m.seq == seq && m.kind != kindRandom {
			return m
		}
	}
	return nil
}

// kindRandom is the malformed kind whose datagram carries no sequence id.
const kindRandom = "random"

// unechoed is the latest send of random bytes with no reply yet (among
// the maxMalformed remembered), else the latest one answered already (a
// copy of its reply), or nil.
func (s *session) unechoed() *malformedSent {
	var copied *malformedSent
	for i := len(s.malformed) - 1; i >= 0; i-- {
		m := &s.malformed[i]
		switch {
		case m.kind != kindRandom:
		case !m.replied:
			return m
		case copied == nil:
			copied = m
		}
	}
	return copied
}
