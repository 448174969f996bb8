package levconn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// Errors returned by Conn.
var (
	// ErrClosed: the connection is closed (locally or by a timeout).
	ErrClosed = errors.New("levconn: connection closed")
	// ErrInFlightFull: Config.MaxInFlight messages are already held.
	ErrInFlightFull = errors.New("levconn: too many messages in flight")
	// ErrMessageTooLarge: the encoded message exceeds Config.MaxMessage.
	ErrMessageTooLarge = errors.New("levconn: message too large")
)

const (
	// maxTransmissions caps Config.CriticalTransmissions.
	maxTransmissions = 16
	// sentRingSize is how many recently sent Ln packets are remembered to
	// match acks to messages and to carried acks (power of two).
	sentRingSize = 128
)

// EventKind says what an Event reports.
type EventKind uint8

const (
	// EventMessage: a new message from the peer, to act on (Msg).
	EventMessage EventKind = iota + 1
	// EventDuplicate: a message whose MessageNumber was seen recently. Its
	// packet is acked; it must not be acted on (Msg).
	EventDuplicate
	// EventConfirmed: one of our tracked messages was acked, or (a request)
	// answered by a response (Number, Latency, AckRTT, ByResponse).
	EventConfirmed
	// EventResent: one of our messages was transmitted again (Number,
	// Transmissions counts this one).
	EventResent
	// EventLost: our message's last allowed transmission was lost; it is
	// given up (Number, Transmissions).
	EventLost
	// EventAckReading: the peer's acks fit only the other ack-bit reading
	// (Detail); reported once per connection, see Stats.AckFields*.
	EventAckReading
	// EventClosed: the connection closed itself (Reason).
	EventClosed
)

var eventNames = [...]string{"", "message", "duplicate", "confirmed", "resent", "lost", "ack-reading", "closed"}

// String returns the event kind's name.
func (k EventKind) String() string {
	if int(k) < len(eventNames) && k != 0 {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// CloseReason says why a connection closed itself.
type CloseReason uint8

const (
	// CloseIdle: no Ln packet from the peer for Config.IdleTimeout.
	CloseIdle CloseReason = iota + 1
	// CloseCriticalLost: a Critical message was lost with
	// Config.CloseOnCriticalLoss set.
	CloseCriticalLost
)

// String returns "idle-timeout" or "critical-lost".
func (r CloseReason) String() string {
	switch r {
	case CloseIdle:
		return "idle-timeout"
	case CloseCriticalLost:
		return "critical-lost"
	}
	return fmt.Sprintf("CloseReason(%d)", int(r))
}

// Event is one thing the connection reports to its driver.
type Event struct {
	Kind EventKind
	// Msg is the peer's message (EventMessage, EventDuplicate). Its
	// Payload aliases the datagram given to Receive.
	Msg levwire.Message
	// Number, MsgKind and Type identify our message (EventConfirmed,
	// EventResent, EventLost).
	Number  uint32
	MsgKind levwire.MessageKind
	Type    uint16
	// Transmissions is how many times our message was sent so far.
	Transmissions int
	// Latency is first transmission → confirmation (EventConfirmed).
	Latency time.Duration
	// AckRTT is the acked transmission → its ack (EventConfirmed by an
	// ack; 0 when confirmed by a response).
	AckRTT time.Duration
	// ByResponse is set when a request was confirmed by its response
	// rather than by an ack.
	ByResponse bool
	// Reason is why the connection closed (EventClosed).
	Reason CloseReason
	// Detail explains EventAckReading.
	Detail string
}

// Stats counts what one connection did.
type Stats struct {
	LnSent, LaSent         uint64 // datagrams sent by type
	MessagesSent           uint64 // first transmissions
	Resends                uint64 // further transmissions
	Confirmed, Lost        uint64 // tracked messages confirmed / given up
	LnReceived, LaReceived uint64 // datagrams received (decodable far enough to act on)
	Malformed              uint64 // datagrams with a decode error (their prefix is still acted on)
	Delivered, Duplicates  uint64 // peer messages delivered / suppressed
	AcksReceived           uint64 // our PKT_IDs newly acked by the peer
	AcksIgnored            uint64 // acked ids we never sent (ignored)
	PendingAcksDropped     uint64 // received ids never acked because MaxPendingAcks was reached
	EventsDropped          uint64 // events beyond MaxEvents
	// Ack fields received, by which reading makes every id they ack one
	// we sent: both, ours only, the other only, neither.
	AckFieldsFitBoth, AckFieldsFitOurs, AckFieldsFitOther, AckFieldsFitNeither uint64
}

type outMsg struct {
	number uint32
	kind   levwire.MessageKind
	typ    uint16
	rel    Reliability
	buf    []byte
	tx     int
	first  time.Time
	last   time.Time
	lastID uint32
	queued bool // in c.queue
	done   bool // confirmed or given up; returned to the free list once dequeued
}

type sentRec struct {
	id       uint32
	at       time.Time
	acks     levwire.AckField // acks this packet carried
	msg      *outMsg          // tracked message it carried, if any
	msgNum   uint32
	acked    bool
	resolved bool // as an ack carrier: confirmed or its acks re-queued
}

// Conn is the sans-IO state of one Leviathan connection: feed it received
// datagrams (Receive) and the passing of time (Tick), give it messages to
// send (SendRequest, SendResponse), and take from it the datagrams to put
// on the wire (Poll) and what happened (Events). It never touches a socket
// or a clock, so it is deterministic to test. A Conn is not safe for
// concurrent use.
type Conn struct {
	cfg Config

	closed bool

	nextID     uint32 // next PKT_ID
	nextMsg    uint32 // next MessageNumber
	lastAcked  uint32 // highest of our ids the peer acked (LastConfirmedSent)
	lastSent   time.Time
	lastRecvLn time.Time

	// outgoing
	held     int       // messages allocated (in flight or queued)
	free     []*outMsg // recycled messages
	inflight []*outMsg // tracked, by MessageNumber
	queue    []*outMsg // to transmit, FIFO
	sent     [sentRingSize]sentRec
	carriers []uint32 // ids of sent packets carrying acks, unresolved, oldest first
	out      []byte   // datagram returned by Poll

	// incoming
	pend      []uint32 // received ids not yet acked
	pendSince time.Time
	flushing  bool // sending La packets until pend is empty
	dup       []uint32
	dupPos    int
	pkt       levwire.Packet
	ackIDs    []uint32

	ackWarned bool
	ev        []Event
	st        Stats
}

// New returns a connection created at now. cfg's zero fields take their
// defaults; an invalid cfg is an error.
func New(cfg Config, now time.Time) (*Conn, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &Conn{
		cfg:        cfg,
		nextID:     cfg.FirstPacketID,
		nextMsg:    levwire.FirstMessageNumber,
		lastSent:   now,
		lastRecvLn: now,
		dup:        make([]uint32, 0, cfg.DuplicateWindow),
		out:        make([]byte, 0, 256),
	}, nil
}

// Config returns the configuration in use, defaults filled in.
func (c *Conn) Config() Config { return c.cfg }

// Stats returns the connection's counters.
func (c *Conn) Stats() Stats { return c.st }

// Closed reports whether the connection is closed.
func (c *Conn) Closed() bool { return c.closed }

// NextPacketID returns the PKT_ID the next Ln packet will carry.
func (c *Conn) NextPacketID() uint32 { return c.nextID }

// NextMessageNumber returns the MessageNumber the next message will carry.
func (c *Conn) NextMessageNumber() uint32 { return c.nextMsg }

// LastAcked returns the highest of our PKT_IDs the peer acked (0: none).
func (c *Conn) LastAcked() uint32 { return c.lastAcked }

// InFlight returns how many messages are held for (re)sending.
func (c *Conn) InFlight() int { return c.held }

// PendingAcks returns how many received ids wait to be acked.
func (c *Conn) PendingAcks() int { return len(c.pend) }

// LastReceived returns when the last Ln packet arrived (creation time if none).
func (c *Conn) LastReceived() time.Time { return c.lastRecvLn }

// Close closes the connection locally: nothing more is sent or delivered.
// To tell the peer, send a CloseConnection response and Poll it first.
func (c *Conn) Close() {
	if c.closed {
		return
	}
	c.closed = true
	c.inflight = c.inflight[:0]
	c.queue = c.queue[:0]
	c.pend = c.pend[:0]
	c.carriers = c.carriers[:0]
}

// Events returns the events since the previous call and forgets them. The
// slice is valid until the next Receive, Tick, Poll or Events call (Send*
// may be called while handling it); the payloads of its messages alias the
// datagram given to Receive.
func (c *Conn) Events() []Event {
	ev := c.ev
	c.ev = c.ev[:0]
	return ev
}

func (c *Conn) emit(e Event) {
	if len(c.ev) >= c.cfg.MaxEvents {
		c.st.EventsDropped++
		return
	}
	c.ev = append(c.ev, e)
}

// SendRequest queues a request of type t with the given payload bytes (the
// typed payload's Append output) and returns its MessageNumber. Poll
// returns its datagram.
func (c *Conn) SendRequest(now time.Time, rel Reliability, t levwire.RequestType, payload []byte) (uint32, error) {
	return c.send(rel, levwire.KindRequest, uint16(t), 0, payload)
}

// SendResponse queues a response of type t answering MessageNumber
// responseTo (0: none) and returns its MessageNumber.
func (c *Conn) SendResponse(now time.Time, rel Reliability, t levwire.ResponseType, responseTo uint32, payload []byte) (uint32, error) {
	return c.send(rel, levwire.KindResponse, uint16(t), responseTo, payload)
}

func (c *Conn) send(rel Reliability, kind levwire.MessageKind, typ uint16, responseTo uint32, payload []byte) (uint32, error) {
	hdr := requestHeader
	if kind == levwire.KindResponse {
		hdr = responseHeader
	}
	if err := c.admit(rel, hdr+len(payload)); err != nil {
		return 0, err
	}
	m := c.enqueue(rel, kind, typ, c.takeNumber())
	if kind == levwire.KindResponse {
		m.buf = levwire.AppendResponseHeader(m.buf[:0], m.number, levwire.ResponseType(typ), responseTo)
	} else {
		m.buf = levwire.AppendRequestHeader(m.buf[:0], m.number, levwire.RequestType(typ))
	}
	m.buf = append(m.buf, payload...)
	return m.number, nil
}

// SendMessage queues msg, one message already encoded (its header and
// payload, as they follow an Ln packet's MessageCount: levwire's
// AppendMessage), byte for byte, and returns its MessageNumber: the one
// in its header, which the connection tracks it under. The numbers the
// connection gives its later messages go on after it; a number below
// them (a message numbered again on purpose) moves nothing. Poll returns
// its datagram, an Ln packet with the connection's PKT_ID and acks.
func (c *Conn) SendMessage(now time.Time, rel Reliability, msg []byte) (uint32, error) {
	kind, number, typ, err := messageHeader(msg)
	if err != nil {
		return 0, err
	}
	if err := c.admit(rel, len(msg)); err != nil {
		return 0, err
	}
	if number >= c.nextMsg {
		c.nextMsg = number
		c.takeNumber()
	}
	m := c.enqueue(rel, kind, typ, number)
	m.buf = append(m.buf[:0], msg...)
	return number, nil
}

// The sizes of a request's and a response's header (leviathan.md §1.3).
const (
	requestHeader  = 7
	responseHeader = 11
)

// messageHeader reads the kind, MessageNumber and type of an encoded
// message.
func messageHeader(msg []byte) (levwire.MessageKind, uint32, uint16, error) {
	if len(msg) == 0 {
		return 0, 0, 0, errors.New("levconn: an empty message")
	}
	kind, hdr := levwire.MessageKind(msg[0]), requestHeader
	switch kind {
	case levwire.KindRequest:
	case levwire.KindResponse:
		hdr = responseHeader
	default:
		return 0, 0, 0, fmt.Errorf("levconn: a message begins with its kind, 0x%02x (request) or 0x%02x (response), not 0x%02x",
			byte(levwire.KindRequest), byte(levwire.KindResponse), msg[0])
	}
	if len(msg) < hdr {
		return 0, 0, 0, fmt.Errorf("levconn: a %v message of %d bytes: its header alone is %d", kind, len(msg), hdr)
	}
	return kind, binary.BigEndian.Uint32(msg[1:]), binary.BigEndian.Uint16(msg[5:]), nil
}

// admit says whether a message of size bytes may be queued.
func (c *Conn) admit(rel Reliability, size int) error {
	switch {
	case c.closed:
		return ErrClosed
	case rel > Critical:
		return fmt.Errorf("levconn: unknown reliability %d", rel)
	case size > c.cfg.MaxMessage:
		return ErrMessageTooLarge
	case c.held >= c.cfg.MaxInFlight:
		return ErrInFlightFull
	}
	return nil
}

// takeNumber returns the next MessageNumber and moves on, skipping 0.
func (c *Conn) takeNumber() uint32 {
	n := c.nextMsg
	c.nextMsg++
	if c.nextMsg == 0 {
		c.nextMsg = 1
	}
	return n
}

// enqueue queues a new message to transmit, tracked unless rel is None;
// the caller fills its buf.
func (c *Conn) enqueue(rel Reliability, kind levwire.MessageKind, typ uint16, number uint32) *outMsg {
	m := c.alloc()
	m.number, m.kind, m.typ, m.rel = number, kind, typ, rel
	if rel != None {
		c.inflight = append(c.inflight, m)
	}
	m.queued = true
	c.queue = append(c.queue, m)
	c.st.MessagesSent++
	return m
}

func (c *Conn) alloc() *outMsg {
	c.held++
	if n := len(c.free); n > 0 {
		m := c.free[n-1]
		c.free = c.free[:n-1]
		buf := m.buf[:0]
		*m = outMsg{buf: buf}
		return m
	}
	return &outMsg{}
}

func (c *Conn) release(m *outMsg) {
	c.held--
	m.done = true
	if cap(m.buf) <= 2048 {
		c.free = append(c.free, m)
	}
}

// finish marks a tracked message done and removes it from the in-flight list.
func (c *Conn) finish(m *outMsg) {
	m.done = true
	for i, x := range c.inflight {
		if x == m {
			copy(c.inflight[i:], c.inflight[i+1:])
			c.inflight[len(c.inflight)-1] = nil
			c.inflight = c.inflight[:len(c.inflight)-1]
			break
		}
	}
	if !m.queued {
		c.release(m)
	}
}

// Poll returns the next datagram to send at now, or nil when there is none:
// an Ln packet carries one message, as the engine sends.
// Call it until it returns nil after Receive, Send* and Tick. The slice is
// valid until the next call on c.
func (c *Conn) Poll(now time.Time) []byte {
	if c.closed {
		return nil
	}
	for len(c.queue) > 0 {
		m := c.queue[0]
		copy(c.queue, c.queue[1:])
		c.queue[len(c.queue)-1] = nil
		c.queue = c.queue[:len(c.queue)-1]
		m.queued = false
		if m.done {
			c.release(m)
			continue
		}
		return c.transmit(now, m)
	}
	if len(c.pend) > 0 && (c.flushing || !now.Before(c.ackDeadline())) {
		return c.ackOnly(now)
	}
	c.flushing = false
	return nil
}

// FlushAcks makes the next Poll calls send every pending ack at once in La
// packets instead of waiting for AckDelay (e.g. before closing).
func (c *Conn) FlushAcks() {
	if len(c.pend) > 0 {
		c.flushing = true
	}
}

// ackDeadline is when pending acks go out in La packets if no Ln packet
// carries them first.
func (c *Conn) ackDeadline() time.Time {
	t := c.lastSent
	if c.pendSince.After(t) {
		t = c.pendSince
	}
	return t.Add(c.cfg.AckDelay)
}

func (c *Conn) ackOnly(now time.Time) []byte {
	n := min(len(c.pend), levwire.MaxAckOnlyIDs)
	c.out, _ = levwire.AppendAckOnly(c.out[:0], c.pend[:n]) // n <= 4 cannot fail
	c.pend = c.pend[:copy(c.pend, c.pend[n:])]
	c.flushing = len(c.pend) > 0
	c.lastSent = now
	c.st.LaSent++
	return c.out
}

func (c *Conn) newID() uint32 {
	id := c.nextID
	c.nextID++
	if c.nextID == 0 {
		c.nextID = 1
	}
	return id
}

// transmit builds the Ln datagram carrying m and the acks that fit.
func (c *Conn) transmit(now time.Time, m *outMsg) []byte {
	id := c.newID()
	f := c.takeAcks()
	c.out = levwire.AppendNormalHeader(c.out[:0], id, f.Start, f.Bytes(), 1)
	c.out = append(c.out, m.buf...)
	m.tx++
	if m.tx == 1 {
		m.first = now
	} else {
		c.st.Resends++
		c.emit(Event{Kind: EventResent, Number: m.number, MsgKind: m.kind, Type: m.typ, Transmissions: m.tx})
	}
	m.last, m.lastID = now, id
	c.record(now, id, f, m)
	if m.rel == None {
		c.release(m)
	}
	c.lastSent = now
	c.st.LnSent++
	return c.out
}

// takeAcks packs the pending acks that fit one Ln ack field and removes
// them from the pending list.
func (c *Conn) takeAcks() levwire.AckField {
	if len(c.pend) == 0 {
		return levwire.AckField{}
	}
	f, packed := levwire.PackAcks(c.pend, c.cfg.AckReading)
	if packed == 0 {
		return f
	}
	k := 0
	for _, id := range c.pend {
		if !f.Has(id, c.cfg.AckReading) {
			c.pend[k] = id
			k++
		}
	}
	c.pend = c.pend[:k]
	return f
}

// record remembers a sent Ln packet; an unresolved ack carrier it
// overwrites gives its acks back to the pending list.
func (c *Conn) record(now time.Time, id uint32, f levwire.AckField, m *outMsg) {
	r := &c.sent[id%sentRingSize]
	if r.id != 0 && !r.acked && !r.resolved && !r.acks.Empty() {
		c.requeueAcks(r)
	}
	*r = sentRec{id: id, at: now, acks: f}
	if m.rel != None {
		r.msg, r.msgNum = m, m.number
	}
	if !f.Empty() {
		c.carriers = append(c.carriers, id)
	}
}

func (c *Conn) requeueAcks(r *sentRec) {
	r.resolved = true
	c.ackIDs = levwire.AppendAckedIDs(c.ackIDs[:0], r.acks.Start, r.acks.Bytes(), c.cfg.AckReading)
	for _, id := range c.ackIDs {
		c.addPending(r.at, id)
	}
}

func (c *Conn) addPending(now time.Time, id uint32) {
	for _, p := range c.pend {
		if p == id {
			return
		}
	}
	if len(c.pend) == 0 {
		c.pendSince = now
	}
	if len(c.pend) >= c.cfg.MaxPendingAcks {
		c.pend = c.pend[:copy(c.pend, c.pend[1:])]
		c.st.PendingAcksDropped++
	}
	c.pend = append(c.pend, id)
}

// Receive processes one datagram from the peer at now. A datagram that
// does not decode is dropped and its error returned, except that an Ln
// packet whose header decoded is acked, and its acks and the messages
// before the bad one are acted on, as the engine does; the error is still
// returned. After Receive, call Events and Poll.
func (c *Conn) Receive(now time.Time, b []byte) error {
	if c.closed {
		return ErrClosed
	}
	err := levwire.Decode(&c.pkt, b, levwire.Lenient)
	if err != nil {
		c.st.Malformed++
		if c.pkt.Type != levwire.TypeNormal || c.pkt.ID == 0 {
			return err
		}
	}
	p := &c.pkt
	switch p.Type {
	case levwire.TypeAckOnly:
		c.st.LaReceived++
		for _, id := range p.AckIDs {
			c.onAck(now, id)
		}
	case levwire.TypeNormal:
		c.st.LnReceived++
		if p.StartAck != 0 && len(p.Acks) > 0 {
			c.readAckField(now, p.StartAck, p.Acks)
		}
		c.lastRecvLn = now
		c.addPending(now, p.ID)
		for i := range p.Messages {
			c.deliver(now, &p.Messages[i])
		}
		if m, ok := unknownTypeMessage(p); ok {
			c.deliver(now, &m)
		}
	}
	c.detectLoss(now)
	return err
}

// unknownTypeMessage returns the message whose type has no payload shape
// known to the codec (lenient decoding stopped at it), with the rest of the
// datagram as its payload: nothing can follow it, since messages carry no
// length. This is how a request or response of a type protocols/leviathan/levwire has
// no shape for (Identification, remote console, a server heartbeat, …)
// still reaches the endpoint, which can count, refuse or report it.
func unknownTypeMessage(p *levwire.Packet) (levwire.Message, bool) {
	if p.Stopped == nil || p.Stopped.Rule != levwire.RuleMsgType || len(p.Trailing) < 7 {
		return levwire.Message{}, false
	}
	b := p.Trailing
	m := levwire.Message{Kind: levwire.MessageKind(b[0]), Number: binary.BigEndian.Uint32(b[1:]), Type: binary.BigEndian.Uint16(b[5:])}
	switch m.Kind {
	case levwire.KindRequest:
		m.Payload = b[7:]
	case levwire.KindResponse:
		if len(b) < 11 {
			return levwire.Message{}, false
		}
		m.ResponseTo = binary.BigEndian.Uint32(b[7:])
		m.Payload = b[11:]
	default:
		return levwire.Message{}, false
	}
	return m, true
}

// fit counts the ids an ack field acks under r that we sent and did not.
func (c *Conn) fit(start uint32, bits []byte, r levwire.AckReading) (good, bad int) {
	c.ackIDs = levwire.AppendAckedIDs(c.ackIDs[:0], start, bits, r)
	for _, id := range c.ackIDs {
		if c.wasSent(id) {
			good++
		} else {
			bad++
		}
	}
	return good, bad
}

// wasSent reports whether id is one of our PKT_IDs sent so far.
func (c *Conn) wasSent(id uint32) bool {
	first := c.cfg.FirstPacketID
	if c.nextID >= first {
		return id >= first && id < c.nextID
	}
	return id >= first || (id != 0 && id < c.nextID) // wrapped
}

func (c *Conn) readAckField(now time.Time, start uint32, bits []byte) {
	other := levwire.AckSeedPlusOne
	if c.cfg.AckReading == levwire.AckSeedPlusOne {
		other = levwire.AckEngine
	}
	_, badOther := c.fit(start, bits, other)
	_, badOurs := c.fit(start, bits, c.cfg.AckReading) // leaves our ids in c.ackIDs
	switch {
	case badOurs == 0 && badOther == 0:
		c.st.AckFieldsFitBoth++
	case badOurs == 0:
		c.st.AckFieldsFitOurs++
	case badOther == 0:
		c.st.AckFieldsFitOther++
		if !c.ackWarned {
			c.ackWarned = true
			c.emit(Event{Kind: EventAckReading, Detail: fmt.Sprintf(
				"peer's ack field (StartAck %d, bits % x) acks ids we never sent under the %s reading but only sent ids under the %s reading: the peer likely uses the %s reading",
				start, bits, c.cfg.AckReading, other, other)})
		}
	default:
		c.st.AckFieldsFitNeither++
	}
	for _, id := range c.ackIDs {
		if c.wasSent(id) {
			c.onAck(now, id)
		} else {
			c.st.AcksIgnored++
		}
	}
}

func (c *Conn) onAck(now time.Time, id uint32) {
	if !c.wasSent(id) {
		c.st.AcksIgnored++
		return
	}
	if id > c.lastAcked {
		c.lastAcked = id
	}
	r := &c.sent[id%sentRingSize]
	if r.id != id || r.acked {
		return
	}
	r.acked = true
	c.st.AcksReceived++
	if m := r.msg; m != nil && m.number == r.msgNum && !m.done {
		c.st.Confirmed++
		c.emit(Event{Kind: EventConfirmed, Number: m.number, MsgKind: m.kind, Type: m.typ,
			Transmissions: m.tx, Latency: now.Sub(m.first), AckRTT: now.Sub(r.at)})
		c.finish(m)
	}
}

func (c *Conn) deliver(now time.Time, m *levwire.Message) {
	if m.Kind == levwire.KindResponse && m.ResponseTo >= c.nextMsg {
		// A response to a number this connection has not used yet answers
		// nothing here, so it is delivered (the client judges it) but its
		// number not remembered. It is most often a resend from the peer's
		// connection with the client this address belonged to before (a
		// port the OS handed again while the peer still held it):
		// remembered, its number would make the new connection's own
		// message with that number a copy, dropped, and its request would
		// wait for an answer until it gave up.
		c.st.Delivered++
		c.emit(Event{Kind: EventMessage, Msg: *m})
		return
	}
	for _, n := range c.dup {
		if n == m.Number {
			c.st.Duplicates++
			c.emit(Event{Kind: EventDuplicate, Msg: *m})
			return
		}
	}
	if len(c.dup) < cap(c.dup) {
		c.dup = append(c.dup, m.Number)
	} else {
		c.dup[c.dupPos] = m.Number
		c.dupPos = (c.dupPos + 1) % len(c.dup)
	}
	c.st.Delivered++
	if m.Kind == levwire.KindResponse && m.ResponseTo != 0 {
		for _, q := range c.inflight {
			if q.number == m.ResponseTo && q.kind == levwire.KindRequest && !q.done {
				c.st.Confirmed++
				c.emit(Event{Kind: EventConfirmed, Number: q.number, MsgKind: q.kind, Type: q.typ,
					Transmissions: q.tx, Latency: now.Sub(q.first), ByResponse: true})
				c.finish(q)
				break
			}
		}
	}
	c.emit(Event{Kind: EventMessage, Msg: *m})
}

// lost reports whether the transmission id sent at at counts as lost.
func (c *Conn) lost(now, at time.Time, id uint32) bool {
	if now.Sub(at) >= c.cfg.LostAfter {
		return true
	}
	return c.lastAcked > id && c.lastAcked-id > c.cfg.LostIDGap
}

// detectLoss schedules resends of lost transmissions, gives up messages
// out of transmissions, and gives the acks of lost carriers back.
func (c *Conn) detectLoss(now time.Time) {
	for i := 0; i < len(c.inflight); i++ {
		m := c.inflight[i]
		if m.queued || m.tx == 0 || !c.lost(now, m.last, m.lastID) {
			continue
		}
		if m.tx < c.cfg.transmissions(m.rel) {
			m.queued = true
			c.queue = append(c.queue, m)
			continue
		}
		c.st.Lost++
		c.emit(Event{Kind: EventLost, Number: m.number, MsgKind: m.kind, Type: m.typ, Transmissions: m.tx})
		c.finish(m)
		i--
		if m.rel == Critical && c.cfg.CloseOnCriticalLoss {
			c.closeWith(CloseCriticalLost)
			return
		}
	}
	for len(c.carriers) > 0 {
		id := c.carriers[0]
		r := &c.sent[id%sentRingSize]
		if r.id == id && !r.acked && !r.resolved {
			if !c.lost(now, r.at, id) {
				break
			}
			c.requeueAcks(r)
		}
		c.carriers = c.carriers[:copy(c.carriers, c.carriers[1:])]
	}
}

func (c *Conn) closeWith(r CloseReason) {
	c.Close()
	c.emit(Event{Kind: EventClosed, Reason: r})
}

// Tick advances the connection's timers to now: idle close, loss
// detection and resends, keepalive. Call Poll afterwards.
func (c *Conn) Tick(now time.Time) {
	if c.closed {
		return
	}
	if c.cfg.IdleTimeout > 0 && now.Sub(c.lastRecvLn) >= c.cfg.IdleTimeout {
		c.closeWith(CloseIdle)
		return
	}
	c.detectLoss(now)
	if c.closed {
		return
	}
	if c.cfg.KeepaliveAfter > 0 && now.Sub(c.lastSent) >= c.cfg.KeepaliveAfter && len(c.queue) == 0 {
		c.SendResponse(now, Critical, levwire.ResKeepalive, 0, nil)
	}
}

// Deadline returns when Tick (or Poll, for acks waiting to go out) next has
// something to do, assuming Poll has been drained. The zero time means
// never (closed).
func (c *Conn) Deadline() time.Time {
	if c.closed {
		return time.Time{}
	}
	var d time.Time
	at := func(t time.Time) {
		if d.IsZero() || t.Before(d) {
			d = t
		}
	}
	if c.cfg.IdleTimeout > 0 {
		at(c.lastRecvLn.Add(c.cfg.IdleTimeout))
	}
	if c.cfg.KeepaliveAfter > 0 {
		at(c.lastSent.Add(c.cfg.KeepaliveAfter))
	}
	if len(c.pend) > 0 {
		at(c.ackDeadline())
	}
	for _, m := range c.inflight {
		if m.tx > 0 && !m.queued {
			at(m.last.Add(c.cfg.LostAfter))
		}
	}
	if len(c.carriers) > 0 {
		if r := &c.sent[c.carriers[0]%sentRingSize]; r.id == c.carriers[0] {
			at(r.at.Add(c.cfg.LostAfter))
		}
	}
	return d
}
