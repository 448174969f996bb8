package udpclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/script"
	"github.com/lobbybench/lobbybench/simclient"
)

// flight is one datagram of a burst (malformed mix or rate probe) whose
// reply, if any, is matched by sequence id.
type flight struct {
	sent, intended time.Time
	kind           int8 // -1: valid request; else index into the malformed kinds
	outcome        int8 // 0 pending, 1 answered, 2 refused, 3 lost
	unexpected     bool // a malformed packet that got a reply
}

const (
	pendingOutcome = iota
	answeredOutcome
	refusedOutcome
	lostOutcome
)

// burst tracks the datagrams of a malformed or probe step sent with
// consecutive sequence ids from first: a malformed step's, every one sent
// (fl); a rate probe's, those in flight (ids).
type burst struct {
	first uint16
	fl    []flight
	ids   *probeIDs       // a rate probe's requests, by sequence id (fl unused)
	valid udpwire.MsgType // the valid request type of the burst
	// accept, when set, judges whether a reply that decoded answers its
	// request (a scripted probe's expect), in place of validAnswer.
	accept func(data []byte) bool
	// refused, when set, is told of each reply that refused a request
	// (its message's name, "" when unreadable).
	refused func(what string, data []byte)
	to      netip.AddrPort
	inst    bool
}

// index returns the flight of seq, or nil. A rate probe's request in
// flight is taken out of those awaited: the reply ends it (settle).
func (b *burst) index(seq uint16) *flight {
	if b.ids != nil {
		return b.ids.lookup(seq)
	}
	i := int(seq - b.first)
	if i < 0 || i >= len(b.fl) {
		return nil
	}
	return &b.fl[i]
}

// add notes flight f, just sent with the burst's next sequence id.
func (b *burst) add(f flight) {
	if b.ids != nil {
		b.ids.add(f)
		return
	}
	b.fl = append(b.fl, f)
}

// settle ends flight f, of sequence id seq, with outcome o.
func (b *burst) settle(f *flight, seq uint16, o int8) {
	f.outcome = o
	if b.ids != nil {
		b.ids.ended[seq] = o
	}
}

// nextSeq is the sequence id the burst's next datagram takes, the one
// after last (a rate probe's: its ids cycle, probeIDs).
func (b *burst) nextSeq(last uint16) uint16 {
	if b.ids != nil {
		return b.ids.seq(b.ids.next)
	}
	return last + 1
}

// sendValid sends the burst's valid request with the next sequence id.
func (s *session) sendValid(b *burst, intended time.Time, roomID uint32) error {
	s.seq = b.nextSeq(s.seq)
	s.useIDs(1)
	p := pending{typ: b.valid, seq: s.seq, roomID: roomID, value: uint32(s.seq)}
	s.obuf = s.encode(s.obuf[:0], &p, s.sendProfile(0))
	b.add(flight{intended: intended, sent: time.Now(), kind: -1})
	return s.tr.send(b.to, s.obuf)
}

// sendMalformed sends one packet of kind k with the next sequence id.
func (s *session) sendMalformed(b *burst, kind scenario.MalformedKind, k int) error {
	s.seq++
	s.useIDs(1)
	s.obuf = s.malformedPacket(s.obuf[:0], b, kind, s.seq)
	b.add(flight{sent: time.Now(), kind: int8(k)})
	return s.tr.send(b.to, s.obuf)
}

// malformedPacket builds a packet of kind with the encoder, then breaks it.
func (s *session) malformedPacket(dst []byte, b *burst, kind scenario.MalformedKind, seq uint16) []byte {
	valid := s.encode(dst, &pending{typ: b.valid, seq: seq, value: uint32(seq)}, s.sendProfile(0))
	return Break(valid, s.sendProfile(0), kind, b.inst, s.Think)
}

// Break breaks valid, a well-formed client datagram of profile prof, as
// kind says (udp-lobby.md §3.4), in valid's storage: bad_crc flips the
// CRC's last byte, truncated cuts it short of its header, wrong_length
// says 3 bytes more payload than it has, unknown_type gives it a type
// nobody defines (inst: from the instance's range), wrong_direction
// makes it server → client; random is 1-64 random bytes drawn from rng.
// The malformed step and a scripted send's malformed: break alike, so
// that both send the same bytes from the same draws.
func Break(valid []byte, prof udpwire.Profile, kind scenario.MalformedKind, inst bool, rng *rand.Rand) []byte {
	hl := prof.HeaderLen()
	h, _ := udpwire.DecodeHeader(valid, prof) // valid: it has one
	payload := append([]byte(nil), valid[hl:len(valid)-udpwire.CRCLen]...)
	switch kind {
	case scenario.BadCRC:
		valid[len(valid)-1] ^= 0x5A
		return valid
	case scenario.Truncated:
		return valid[:hl-1]
	case scenario.WrongLength:
		h.PayloadSize += 3
		h.OriginalSize = h.PayloadSize
		return udpwire.AppendRaw(valid[:0], prof, h, payload)
	case scenario.UnknownType:
		h.Type = 0x7E
		if inst {
			h.Type = 0x3E
		}
		return udpwire.AppendRaw(valid[:0], prof, h, payload)
	case scenario.WrongDirection:
		h.PacketType = udpwire.ServerToClient
		return udpwire.AppendRaw(valid[:0], prof, h, payload)
	}
	// random: random bytes of random length, 1-64.
	n := 1 + rng.IntN(64)
	out := valid[:0]
	for range n {
		out = append(out, byte(rng.Uint32()))
	}
	return out
}

// burstRecv reads until deadline, matching replies to the burst's flights;
// it returns at the deadline (nil) or on a socket error.
func (s *session) burstRecv(b *burst, deadline time.Time, onAnswer func(f *flight, ok bool)) error {
	for {
		data, from, err := s.tr.recv(deadline)
		switch {
		case err == nil:
		case errors.Is(err, errTimeout):
			return nil
		default:
			return err
		}
		s.burstHandle(b, data, from, onAnswer)
	}
}

func (s *session) burstHandle(b *burst, data []byte, from netip.AddrPort, onAnswer func(f *flight, ok bool)) {
	if from != b.to {
		s.handle(data, from) // other traffic: judged as usual
		return
	}
	var msg udpwire.Message
	m := &msg
	seq, haveSeq, err := s.decodeBurst(b, data, m)
	if err == nil && b.inst && m.Type.Event() {
		s.event(data, m)
		return
	}
	var f *flight
	if haveSeq {
		f = b.index(seq)
	}
	if f == nil {
		// Not attributable by sequence: blame the last malformed packet
		// sent, if any, else judge it as an ordinary datagram.
		if f = b.lastMalformed(); f == nil {
			if err != nil {
				s.violation(string(udpwire.RuleOf(err)), data, nil, err.Error())
			} else if !s.knownSeq(seq) {
				s.violation(RuleUSeqEcho, data, nil, fmt.Sprintf("%v seq %d matches no request", m.Type, seq))
			}
			return
		}
	}
	if f.kind >= 0 {
		rule := RuleUMalformedAns
		if b.inst {
			rule = RuleIMalformedAns
		}
		if !f.unexpected {
			f.unexpected = true
			s.violation(rule, data, nil, fmt.Sprintf("reply %d bytes to a malformed packet", len(data)))
		}
		return
	}
	if err != nil {
		s.violation(string(udpwire.RuleOf(err)), data, nil, err.Error())
		if f.outcome == pendingOutcome {
			b.settle(f, seq, refusedOutcome)
			b.refusal("", data)
			onAnswer(f, false)
		}
		return
	}
	if f.outcome != pendingOutcome {
		// A reply after the flight timed out (lost) is late, not a
		// second one; the instance has no rule of one reply.
		if f.outcome != lostOutcome && !b.inst && s.oneReply {
			s.violation(RuleUReplyDup, data, nil, fmt.Sprintf("%v seq %d: a second reply to the request of that sequence id, sent once and already answered (udp-lobby.md §1: exactly one datagram)", m.Type, seq))
		}
		return
	}
	var legal bool
	if b.accept != nil {
		legal = b.accept(data)
	} else {
		legal = validAnswer(b.valid, m.Type)
	}
	if legal {
		b.settle(f, seq, answeredOutcome)
	} else {
		b.settle(f, seq, refusedOutcome) // JOIN_FAILED or another answer: refused
		b.refusal(m.Type.String(), data)
	}
	onAnswer(f, legal)
}

// refusal tells b.refused, if set, of a reply that refused a request.
func (b *burst) refusal(what string, data []byte) {
	if b.refused != nil {
		b.refused(what, data)
	}
}

// decodeBurst decodes a burst's reply into m, and returns its sequence
// id when its header could be read, even if the rest did not decode.
func (s *session) decodeBurst(b *burst, data []byte, m *udpwire.Message) (seq uint16, haveSeq bool, err error) {
	ch := udpwire.ChannelLobby
	if b.inst {
		ch = udpwire.ChannelInstance
	}
	dec := udpwire.Decoder{Profile: s.profile, Dir: udpwire.ServerToClient, Channel: ch}
	if err := dec.Decode(data, m); err != nil {
		var e *udpwire.Error
		if errors.As(err, &e) && e.HaveHeader {
			return e.Header.Seq, true, err
		}
		return 0, false, err
	}
	return m.Seq, true, nil
}

// lastMalformed returns the last malformed packet of b sent, nil if none.
func (b *burst) lastMalformed() *flight {
	for i := len(b.fl) - 1; i >= 0; i-- {
		if b.fl[i].kind >= 0 {
			return &b.fl[i]
		}
	}
	return nil
}

// validAnswer reports whether got is the answer that accepts request
// valid (JOIN_FAILED and any other answer refuse it).
func validAnswer(valid, got udpwire.MsgType) bool {
	switch valid {
	case udpwire.LobbyListRooms:
		return got == udpwire.LobbyRoomList
	case udpwire.LobbyCreateRoom:
		return got == udpwire.LobbyRoomCreated
	case udpwire.LobbyJoinRoom:
		return got == udpwire.LobbyJoinSuccess
	case udpwire.ClientPing:
		return got == udpwire.ServerPong
	}
	return false
}

// malformed runs a malformed step (see the package doc).
func (s *session) malformed(ctx context.Context, i int, st *scenario.Step) error {
	spec := st.Malformed
	key := s.StepKey(i)
	b := &burst{first: s.seq + 1, valid: udpwire.LobbyListRooms, to: s.rt.lobby}
	if spec.To == "instance" {
		if !s.inst.IsValid() {
			return s.Fail(i, st, simclient.ReasonNoRoom, errors.New("malformed to: instance needs a joined room"))
		}
		b.valid, b.to, b.inst = udpwire.ClientPing, s.inst, true
	}
	if s.disconnect {
		return s.Fail(i, st, simclient.ReasonClosed, errors.New("the flow disconnected earlier"))
	}
	kinds := spec.Kinds
	if len(kinds) == 0 {
		kinds = scenario.MalformedKinds(udpwire.ProtocolName)
	}
	msgKey := s.rt.keys[b.valid]
	answered := func(f *flight, ok bool) {
		now := time.Now()
		if ok {
			s.Rec.Record(key, f.intended, f.sent, now)
			s.Rec.Record(msgKey, f.intended, f.sent, now)
		} else {
			s.Rec.Fail(key, simclient.ReasonRefused, now)
			s.Rec.Fail(msgKey, simclient.ReasonRefused, now)
		}
	}
	base := s.Next
	for k := 0; k < st.Malformed.Count; k++ {
		due := base.Add(time.Duration(k) * st.Malformed.Interval)
		if err := s.burstRecv(b, due, answered); err != nil {
			return s.StepErr(i, st, err)
		}
		if ctx.Err() != nil {
			return s.Fail(i, st, simclient.ReasonCancelled, ctx.Err())
		}
		var err error
		if s.Think.Float64() < spec.Share {
			kind := s.Think.IntN(len(kinds))
			err = s.sendMalformed(b, kinds[kind], kind)
		} else {
			err = s.sendValid(b, due, 0)
		}
		if err != nil {
			return s.StepErr(i, st, err)
		}
	}
	// The silence window after the last packet: replies to the valid
	// requests are welcome, replies to malformed ones are not.
	if err := s.burstRecv(b, time.Now().Add(spec.Silence), answered); err != nil {
		return s.StepErr(i, st, err)
	}
	now := time.Now()
	for j := range b.fl {
		if f := &b.fl[j]; f.kind < 0 && f.outcome == pendingOutcome {
			f.outcome = lostOutcome
			s.Rec.Fail(key, result.ReasonTimeout, now)
			s.Rec.Fail(msgKey, result.ReasonTimeout, now)
		}
	}
	// Liveness: one ordinary request, with the scenario's default policy.
	p := pending{typ: b.valid, to: b.to, inst: b.inst, intended: instant.Now(), value: 1}
	sent, lerr := s.request(&p, s.Shared.Plan.Defaults)
	kept := int64(0)
	if lerr == nil {
		kept = 1
		s.Rec.Record(key, p.intended.Time(), sent, time.Now())
	} else if errors.Is(lerr, errCancelled) {
		return s.Fail(i, st, simclient.ReasonCancelled, lerr)
	} else {
		s.Rec.Fail(key, reasonOfReq(lerr), time.Now())
	}
	sentBy := make([]int64, len(kinds))
	unexp := make([]int64, len(kinds))
	for _, f := range b.fl {
		if f.kind >= 0 {
			sentBy[f.kind]++
			if f.unexpected {
				unexp[f.kind]++
			}
		}
	}
	for k, kind := range kinds {
		if sentBy[k] > 0 {
			s.Shared.Collector.AddMalformed(string(kind), sentBy[k], unexp[k], 1, kept)
		}
	}
	s.Next = time.Now()
	return nil
}

func reasonOfReq(err error) string {
	var rf *reqFail
	if errors.As(err, &rf) {
		return rf.Reason
	}
	return simclient.ReasonSocket
}

// rateProbe runs a rate_probe step (see the package doc).
func (s *session) rateProbe(ctx context.Context, i int, st *scenario.Step) error {
	if s.disconnect {
		return s.Fail(i, st, simclient.ReasonClosed, errors.New("the flow disconnected earlier"))
	}
	spec := st.Probe
	key := s.StepKey(i)
	b := &burst{first: s.seq + 1, to: s.rt.lobby}
	var room uint32
	var ps *probeScript
	var msgKey metrics.Key
	if spec.Script != nil {
		var err error
		if ps, err = s.newProbeScript(ctx, b, spec.Script); err != nil {
			return s.Fail(i, st, simclient.ReasonNoRoom, err)
		}
		msgKey = s.Shared.MessageKey(spec.Script.Message())
	} else {
		b.valid, room = s.probeRequest(spec)
		msgKey = s.rt.keys[b.valid]
	}
	start := time.Now()
	pr := simclient.NewProbe(spec, start)
	b.ids = newProbeIDs(s.seq + 1)
	b.refused = pr.NoteRefusal
	r := &probeRun{s: s, b: b, pr: pr, start: start, timeout: st.Policy.Timeout, room: room, script: ps}
	r.answered = func(f *flight, ok bool) {
		now := time.Now()
		if ok {
			s.Rec.Record(key, f.intended, f.sent, now)
			s.Rec.Record(msgKey, f.intended, f.sent, now)
			pr.Outcome(f.intended.Sub(start), simclient.Answered)
		} else {
			pr.Outcome(f.intended.Sub(start), simclient.Refused)
		}
	}
	ioErr := pr.Run(ctx, r, pr.Total(), st.Policy.Timeout)
	r.noteWaits()
	cut := false
	if ctx.Err() != nil || errors.Is(ioErr, errCancelled) {
		cut = true // the run ended: report what was measured so far
		ioErr = nil
	}
	s.Shared.ReportProbe(pr, st.Label, s.tr.localAddr().String(), start, cut)
	if ioErr != nil {
		return s.StepErr(i, st, ioErr)
	}
	if cut {
		return s.Fail(i, st, simclient.ReasonCancelled, context.Canceled)
	}
	s.Next = time.Now()
	return nil
}

// probeRequest returns the request the rate probe spec sends, and the
// room a JOIN names: the flow's room, else a room of its group, else 1.
func (s *session) probeRequest(spec scenario.RateProbeSpec) (udpwire.MsgType, uint32) {
	switch spec.Request {
	case stepkit.CreateRoom:
		return udpwire.LobbyCreateRoom, 0
	case stepkit.Join:
		room := s.roomID
		if room == 0 {
			if r, ok := s.Member.Group.RoomNow(); ok {
				room = r.ID
			} else {
				room = 1
			}
		}
		return udpwire.LobbyJoinRoom, room
	}
	return udpwire.LobbyListRooms, 0
}

// probeRun is a rate_probe step's burst under way.
type probeRun struct {
	s        *session
	b        *burst
	pr       *simclient.Probe
	start    time.Time
	timeout  time.Duration
	room     uint32 // the room a JOIN names
	script   *probeScript
	answered func(f *flight, ok bool)
	// waited counts the requests that waited for their sequence id,
	// from the first's send time (probeRun.freeID).
	waited   int
	waitedAt time.Duration
}

// Expire counts the requests in flight sent a timeout before now as lost.
func (r *probeRun) Expire(now time.Time) {
	r.b.ids.expire(now, r.timeout, func(f simclient.ProbeFlight) {
		r.pr.Outcome(f.Intended.Sub(r.start), simclient.Lost)
	})
}

// Oldest is when the oldest request in flight was sent.
func (r *probeRun) Oldest() (time.Time, bool) {
	f, ok := r.b.ids.q.Oldest()
	return f.Sent, ok
}

// Recv reads the burst's answers until deadline.
func (r *probeRun) Recv(deadline time.Time) error { return r.s.burstRecv(r.b, deadline, r.answered) }

// Send sends the next request, due at due, once its sequence id is free.
func (r *probeRun) Send(due time.Time) error {
	if err := r.freeID(due); err != nil {
		return err
	}
	if r.script != nil {
		return r.s.sendScripted(r.b, due, r.script)
	}
	return r.s.sendValid(r.b, due, r.room)
}

// freeID returns once the sequence id the next request (due at due)
// takes is free: while the request that held it, seqSpace requests
// earlier, is in flight (as many as the ids tell apart: the rate × the
// timeout is beyond them, or the probe fell behind its schedule), it
// takes the answers until that one ends, answered or lost, and counts the
// wait for the finding (noteWaits).
func (r *probeRun) freeID(due time.Time) error {
	waited := false
	for {
		held, ok := r.b.ids.holder()
		if !ok {
			return nil
		}
		if now := time.Now(); now.Sub(held.Sent) < r.timeout {
			if !waited {
				if waited = true; r.waited == 0 {
					r.waitedAt = due.Sub(r.start)
				}
				r.waited++
			}
			if err := r.Recv(held.Sent.Add(r.timeout)); err != nil {
				return err
			}
		}
		r.Expire(time.Now())
	}
}

// noteWaits tells the finding of the requests that waited for their
// sequence id: they went later than the schedule, at a lower rate than
// it offered.
func (r *probeRun) noteWaits() {
	if r.waited == 0 {
		return
	}
	r.pr.Caveat = fmt.Sprintf("%d requests from second %d on went late, each waiting for a sequence id: all %d were in flight (the rate × the %v timeout is more than the ids tell apart; a lower timeout fits more), so the rates from there were lower than offered",
		r.waited, int(r.waitedAt/time.Second)+1, seqSpace, r.timeout)
}

// probeScript is a rate_probe's request written as a script: its message
// made, and a reply judged, through the session's script environment,
// with the flow's captures.
type probeScript struct {
	p   *script.Pipelined
	env *script.Env
	ch  string // the channel it goes on
}

// newProbeScript readies the script environment for p and points burst
// b at p's channel: the instance's needs one named.
func (s *session) newProbeScript(ctx context.Context, b *burst, p *script.Pipelined) (*probeScript, error) {
	ps := &probeScript{p: p, ch: p.Channel()}
	if ps.ch == "instance" {
		if !s.inst.IsValid() {
			return nil, fmt.Errorf("%s goes to the instance: none is named yet (no ROOM_CREATED or JOIN_SUCCESS)", p.Message())
		}
		b.to, b.inst = s.inst, true
	}
	env, err := s.ScriptEnv(ctx)
	if err != nil {
		return nil, err
	}
	ps.env = env
	b.accept = func(data []byte) bool {
		return p.Accepts(env, env.Catalog.Decode(env.Session, ps.ch, data))
	}
	return ps, nil
}

// sendScripted sends the scripted request of burst b with the next
// sequence id: the script's session takes the id the built-in steps'
// counter would (SyncScript), so that replies match flights as
// sendValid's do.
func (s *session) sendScripted(b *burst, intended time.Time, ps *probeScript) error {
	s.SyncScript(ps.env.Session)
	buf, err := ps.p.Make(ps.env, intended)
	if err != nil {
		return err
	}
	s.seq++
	s.useIDs(1)
	b.add(flight{intended: intended, sent: time.Now(), kind: -1})
	return s.tr.send(b.to, buf)
}
