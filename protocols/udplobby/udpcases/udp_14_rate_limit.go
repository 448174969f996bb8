package udpcases

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/internal/sockbuf"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §14 Security considerations: rate limiting per client IP.
//
// A limit per address and plain overload look alike from the flooding
// address: most of its datagrams go unanswered. They differ for everyone
// else: a per-address limit still serves a second address, while overload
// (a full receive queue, a busy server or a busy machine) drops datagrams
// whatever their source. So the flood fixture sends, amid the flood, paced
// requests from a second reserved address, and udp-lobby/14/1 passes only when
// the flood was limited and that second source was served, more often than
// overload could explain.

const reqRateLimit = "Lobby server should implement rate limiting per client IP to prevent abuse: if (clientRequestRate > MAX_REQUESTS_PER_SECOND) { // Drop packet or send error }"

// needFourSources says how to get the reserved flood and second-source
// addresses (SourcePool reserves the last two of a pool of four or more).
const needFourSources = "give --source-addrs with at least 4 addresses"

// secondServedWant is what "the second source was served" means: udp-lobby/14/2's
// verdict and half of udp-lobby/14/1's (see floodFx.secondServed).
const secondServedWant = "the second source served (≥ 80% of its paced requests answered)"

// perAddrWant is udp-lobby/14/1's expectation.
const perAddrWant = "the flood from one source limited (dropped or answered with an error) while " + secondServedWant

// chanceMax bounds the probability that overload, which drops datagrams
// whatever their source, would have served the second source as well as
// it was served, for udp-lobby/14/1 to pass (floodFx.overloadChance).
const chanceMax = 0.001

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/14/1", Protocol: ProtoUDP, Section: secSecurity, Rule: "U-RATE-LIMIT", Level: conformance.Should, Phase: conformance.PhaseSerial,
		Desc:        "a flood of LOBBY_LIST_ROOMS from one source address is limited (the excess dropped or answered with an error) while a second source address is served",
		Requirement: reqRateLimit,
		Run: func(t *conformance.T) error {
			fx, err := flood(t)
			if err != nil {
				return err
			}
			fx.noteHarness(t)
			if err := fx.perAddress(); err != nil {
				return err
			}
			t.Notef("flood from %v: %d of %d answered (%d with another type than LOBBY_ROOM_LIST); second source %v: %d of %d answered",
				fx.src, fx.answered+fx.errReplies, fx.sent, fx.errReplies, fx.second.addr, fx.second.answered, fx.second.sent)
			return nil
		},
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/14/2", Protocol: ProtoUDP, Section: secSecurity, Rule: "U-RATE-LIMIT", Level: conformance.Should, Phase: conformance.PhaseSerial,
		Desc:        "while one source address floods, a second source address is still served",
		Requirement: reqRateLimit + " (per client IP: the limit of one client must not starve the others)",
		Run: func(t *conformance.T) error {
			fx, err := flood(t)
			if err != nil {
				return err
			}
			if fx.second.sent == 0 {
				return conformance.Skipf("no second source: %s", fx.second.missing)
			}
			if !fx.secondServed() {
				return conformance.Failf(secondServedWant, "%d of %d answered during the flood", fx.second.answered, fx.second.sent)
			}
			t.Notef("%d of %d answered, median round trip %v", fx.second.answered, fx.second.sent, fx.p50())
			return nil
		},
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/14/3", Protocol: ProtoUDP, Section: secSecurity, Level: conformance.Info, Phase: conformance.PhaseSerial,
		Desc:        "the rate the server accepts from one flooding source (informational)",
		Requirement: reqRateLimit,
		Run: func(t *conformance.T) error {
			fx, err := flood(t)
			if err != nil {
				return err
			}
			fx.noteHarness(t)
			t.Notef("flood: %d LOBBY_LIST_ROOMS in %v from %v (%d/s offered): %d answered with LOBBY_ROOM_LIST, %d with another type, %d dropped",
				fx.sent, fx.dur.Round(time.Millisecond), fx.src, fx.rate, fx.answered, fx.errReplies, fx.sent-fx.answered-fx.errReplies)
			t.Notef("accepted rate in the second half of the flood: %.0f/s", fx.lateRate)
			if sec := &fx.second; sec.sent > 0 {
				rtt := ""
				if sec.answered > 0 {
					rtt = fmt.Sprintf(", median round trip %v", fx.p50())
				}
				t.Notef("second source %v during the flood: %d of %d answered with LOBBY_ROOM_LIST, %d with another type%s",
					sec.addr, sec.answered, sec.sent, sec.errReplies, rtt)
			} else {
				t.Notef("no second source: %s", sec.missing)
			}
			return nil
		},
	})
}

type floodFx struct {
	src                  string
	rate                 int
	sent                 int
	answered, errReplies int
	dur                  time.Duration
	lateRate             float64
	// quiet: the flood's replies had stopped when its reader did
	// (floodTail), so those it did not read were dropped, not late.
	quiet bool
	// tail is how long the replies were waited for after the second
	// source's (floodTail's limit).
	tail time.Duration
	// cannotTell is the StallError of a harness that stalled for longer
	// than it makes up for while reading the last of the replies.
	cannotTell error
	// second is the second source: requests from another address, paced
	// by the flood's progress, each answered or not.
	second struct {
		addr                       string
		sent, answered, errReplies int
		rtts                       []time.Duration
		// missing says why no second source ran (sent == 0).
		missing string
	}
}

// perAddress is udp-lobby/14/1's verdict: nil when the flood was limited while
// the second source was served, more often than overload could explain.
// A flood whose replies were not all read (still coming, or the harness
// too late to read them) is inconclusive rather than limited.
func (f *floodFx) perAddress() error {
	sec := &f.second
	switch {
	case !f.limited():
		return conformance.Failf(fmt.Sprintf("most of a %d/s flood from one source dropped or answered with an error", f.rate),
			"%d of %d requests sent in %v from %v answered with LOBBY_ROOM_LIST: no rate limit observed at %s",
			f.answered, f.sent, f.dur.Round(time.Millisecond), f.src, f.rateReached())
	case f.cannotTell != nil:
		return conformance.Inconclusivef("the flood got %d of %d answered, but the rest cannot be counted dropped: %s",
			f.answered, f.sent, strings.TrimPrefix(f.cannotTell.Error(), conformance.Inconclusive))
	case !f.quiet:
		return conformance.Inconclusivef("the flood got %d of %d answered, but its replies were still coming %v after the second source's were in: the rest cannot be counted dropped (this machine or the server too slow for the flood)",
			f.answered, f.sent, f.tail)
	case sec.sent == 0:
		return conformance.Warnf(perAddrWant, "the flood got %d of %d answered with LOBBY_ROOM_LIST (%d with another type), but no second source ran (%s): without a second address a per-address limit cannot be told from overload",
			f.answered, f.sent, f.errReplies, sec.missing)
	case !f.secondServed() && f.errReplies > 0:
		return conformance.Warnf(perAddrWant, "the flood got %d replies of another type than LOBBY_ROOM_LIST (a limit) and %d of %d answered with it, but the second source %v was starved too (%d of %d answered): a limit that is not per address, or overload of the server or of this machine",
			f.errReplies, f.answered, f.sent, sec.addr, sec.answered, sec.sent)
	case !f.secondServed():
		return conformance.Warnf(perAddrWant, "traffic from every source was dropped: the flood from %v answered %d of %d, the second source %v %d of %d; this looks like overload of the server or of this machine (or one limit for all sources), not a per-address limit",
			f.src, f.answered, f.sent, sec.addr, sec.answered, sec.sent)
	case f.overloadChance() > chanceMax:
		return conformance.Warnf(perAddrWant, "the second source %v answered %d of %d and the flood %d of %d: too close to tell a per-address limit from overload, which drops every source alike (overload would serve the second source this well with probability %.2g; a longer flood sends more paced requests)",
			sec.addr, sec.answered, sec.sent, f.answered, f.sent, f.overloadChance())
	}
	return nil
}

// rateReached is the flood's rate as this machine sent it: the rate
// asked, or, when it sent below 80% of it (noteHarness), what it reached
// and what was asked.
func (f *floodFx) rateReached() string {
	if got, ok := f.behind(); ok {
		return fmt.Sprintf("the %.0f/s this machine reached (%d/s asked)", got, f.rate)
	}
	return fmt.Sprintf("%d/s", f.rate)
}

// behind returns the rate the flood was sent at and whether it was below
// 80% of the rate asked: this machine could not keep up.
func (f *floodFx) behind() (float64, bool) {
	if f.dur <= 0 {
		return 0, false
	}
	got := float64(f.sent) / f.dur.Seconds()
	return got, got < 0.8*float64(f.rate)
}

// limited: most of the flood was refused, or some of it answered with
// another type (an error).
func (f *floodFx) limited() bool { return f.errReplies > 0 || f.answered*2 < f.sent }

// secondServed: at least 80% of the second source's requests were
// answered with LOBBY_ROOM_LIST (secondServedWant).
func (f *floodFx) secondServed() bool {
	return f.second.sent > 0 && f.second.answered*5 >= f.second.sent*4
}

// overloadChance is the probability that the second source would have got
// as many answers as it did had each of its requests had the flood's
// chance of one, as under overload, which drops datagrams whatever their
// source: the upper tail of a binomial distribution.
func (f *floodFx) overloadChance() float64 {
	if f.sent == 0 {
		return 1
	}
	return binomialTail(f.second.sent, f.second.answered, float64(f.answered)/float64(f.sent))
}

// binomialTail returns P(X ≥ k) for X ~ Binomial(n, p).
func binomialTail(n, k int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n || p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	s := 0.0
	for i := k; i <= n; i++ {
		s += math.Exp(lg(n) - lg(i) - lg(n-i) + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return math.Min(s, 1)
}

// noteHarness notes when this machine could not send the flood at the
// rate asked (below 80% of it): the flood was lighter than it says, and
// the machine itself was busy.
func (f *floodFx) noteHarness(t *conformance.T) {
	if got, ok := f.behind(); ok {
		t.Notef("the harness fell behind: it sent the flood at %.0f/s, not the %d/s asked (%d in %v); this machine is busy, and the flood was lighter than asked",
			got, f.rate, f.sent, f.dur.Round(time.Millisecond))
	}
}

func (f *floodFx) p50() time.Duration {
	r := append([]time.Duration(nil), f.second.rtts...)
	if len(r) == 0 {
		return 0
	}
	sort.Slice(r, func(i, j int) bool { return r[i] < r[j] })
	return r[len(r)/2].Round(time.Microsecond)
}

func flood(t *conformance.T) (*floodFx, error) {
	v, err := t.Fixture("udp-flood", runFlood)
	if err != nil {
		return nil, err
	}
	return v.(*floodFx), nil
}

func runFlood(ft *conformance.T) (any, error) {
	env := ft.Env
	src, ok := env.Sources.Reserved(0)
	if !ok {
		return nil, conformance.Skipf("the flood needs its own source address: %s", needFourSources)
	}
	s, err := ft.OpenUDPOn(src)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	sockbuf.SetRead(s.Conn(), 8<<20) // a flood's replies must not be lost in our own socket
	fx := &floodFx{src: src.String(), rate: env.FloodRate}
	total := int(float64(env.FloodRate) * env.FloodDuration.Seconds())
	if total < 1 {
		total = 1
	}
	second := openSecond(ft, fx, total)
	if second != nil {
		defer second.s.Close()
	}
	fr := &floodReader{t: ft, s: s, prof: headerProfile(env), start: time.Now()}
	fr.last.Store(fr.start.UnixNano())
	readDone, secondDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(readDone)
		fr.read()
	}()
	go func() {
		defer close(secondDone)
		second.read()
	}()
	err = sendFlood(ft, fx, s, second, fr.prof, total)
	fx.dur = time.Since(fr.start)
	// The flood's replies are read for as long as the second source's
	// (until every one of its requests is answered, or the timeout after
	// its last), then until they stop (floodTail), then what is queued.
	second.stop(env.Timeout)
	<-secondDone
	fx.quiet, fx.tail = floodTail(ft, &fr.last, env.Timeout), env.Timeout
	fr.stop()
	<-readDone
	if err != nil {
		return nil, err
	}
	second.tally()
	fr.tally(fx)
	return fx, nil
}

// sendFlood sends the flood of total datagrams at fx.rate from s: a tick
// per millisecond, sending what is due, and the second source's requests
// at their places in it. It counts them in fx.sent.
func sendFlood(ft *conformance.T, fx *floodFx, s *conformance.UDPSocket, second *secondSource, prof udpwire.Profile, total int) error {
	env := ft.Env
	buf := make([]byte, 0, 64)
	start := time.Now()
	for fx.sent < total && ft.Ctx.Err() == nil {
		due := min(int(float64(fx.rate)*time.Since(start).Seconds()), total)
		for fx.sent < due {
			second.sendDue(fx.sent)
			buf = udpwire.AppendListRooms(buf[:0], prof, uint16(fx.sent))
			if fx.sent < 4 {
				ft.LogSent(s.Local(), env.Addr.String(), buf, "flood")
			}
			if _, err := s.Conn().WriteToUDPAddrPort(buf, env.Addr); err != nil && !isTransient(err) {
				return err
			}
			fx.sent++
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// floodReader counts the replies to the flood, from start until stop,
// and what was queued by then.
type floodReader struct {
	t     *conformance.T
	s     *conformance.UDPSocket
	prof  udpwire.Profile
	start time.Time
	// last holds when the last reply came (UnixNano), for floodTail.
	last     atomic.Int64
	stopping atomic.Bool
	// listAt are the LOBBY_ROOM_LIST replies' arrivals after start;
	// others counts the replies of another type.
	listAt []time.Duration
	others int
	// cannotTell is the drain's StallError when the harness stalled for
	// longer than it makes up for while reading what was queued.
	cannotTell error
}

// read counts replies until stop; then it reads what is already queued
// on the socket (a conformance.Wait's drain, which a harness that comes
// back late still does) before it returns: a deadline already past
// would have Go return without looking at the socket.
func (r *floodReader) read() {
	buf := make([]byte, 65536)
	var drain *conformance.Wait
	for {
		if drain != nil {
			r.s.Conn().SetReadDeadline(drain.Deadline())
		}
		n, _, err := r.s.Conn().ReadFromUDPAddrPort(buf)
		switch {
		case err == nil:
		case !errors.Is(err, os.ErrDeadlineExceeded) || !r.stopping.Load():
			return
		case drain == nil:
			drain = r.t.NewWait(0)
			continue
		case drain.TimedOut():
			r.cannotTell = drain.Err(nil)
			return
		default:
			continue
		}
		now := time.Now()
		r.last.Store(now.UnixNano())
		if len(r.listAt)+r.others < 4 {
			r.t.LogRecv(r.s.Local(), r.t.Env.Addr.String(), buf[:n], "flood reply")
		}
		if m, ok := parseRaw(buf[:n], r.prof); ok && m.typ == udpwire.LobbyRoomList {
			r.listAt = append(r.listAt, now.Sub(r.start))
		} else {
			r.others++
		}
	}
}

// stop ends read once it has read what is queued.
func (r *floodReader) stop() {
	r.stopping.Store(true)
	r.s.Conn().SetReadDeadline(time.Now())
}

// tally fills fx's reply counts once read has returned: the accepted rate
// is that of the second half of the flood as this machine sent it.
func (r *floodReader) tally(fx *floodFx) {
	fx.answered, fx.errReplies, fx.cannotTell = len(r.listAt), r.others, r.cannotTell
	if fx.dur <= 0 {
		return
	}
	late := 0
	for _, at := range r.listAt {
		if at >= fx.dur/2 && at <= fx.dur {
			late++
		}
	}
	fx.lateRate = float64(late) / (fx.dur.Seconds() / 2)
}

// floodQuiet is how long no flood reply may come before the flood's
// reader stops (floodTail).
const floodQuiet = 300 * time.Millisecond

// floodTail waits, once the second source's replies are in, until neither
// its start nor a flood reply has come for floodQuiet (last holds when
// the last reply came), or limit has passed; it reports whether the
// replies stopped. A fixed 300 ms counted a slow server's late answers
// as dropped (under the race detector a lobby without a limit answered
// 371 of 1,000 in time and passed as rate limited).
func floodTail(ft *conformance.T, last *atomic.Int64, limit time.Duration) (quiet bool) {
	flooded := time.Now()
	end := flooded.Add(limit)
	for time.Now().Before(end) && ft.Ctx.Err() == nil {
		quietAt := time.Unix(0, max(last.Load(), flooded.UnixNano())).Add(floodQuiet)
		if !time.Now().Before(quietAt) {
			return true
		}
		ft.Sleep(min(time.Until(quietAt), time.Until(end)))
	}
	return false
}

func isTransient(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// secondSource sends LOBBY_LIST_ROOMS from the second reserved address
// during the flood, at the pool's per-address pace (one per 25 ms at 40/s,
// as from any other source address), placed by the flood's progress rather than
// the clock: every request goes out amid the flood however fast this
// machine sends it. Its sequence numbers are consecutive.
type secondSource struct {
	t    *conformance.T
	fx   *floodFx
	s    *conformance.UDPSocket
	seq0 uint16
	// at[i] is the flood index before which request i goes out.
	at []int
	// sentAt and gotAt are indexed by request; gotAt[i] is zero while
	// unanswered, and typ[i] is the type of its first reply.
	sentAt, gotAt []time.Time
	typ           []udpwire.MsgType
	next          int
	err           error
}

// openSecond opens the second source for a flood of total datagrams, or
// records in fx why there is none and returns nil.
func openSecond(ft *conformance.T, fx *floodFx, total int) *secondSource {
	env := ft.Env
	a, ok := env.Sources.Reserved(1)
	if !ok {
		fx.second.missing = "no second reserved source address: " + needFourSources
		return nil
	}
	s, err := ft.OpenUDPOn(a)
	if err != nil {
		fx.second.missing = fmt.Sprintf("the second reserved address %v cannot be used (%v): %s, each one bindable", a, err, needFourSources)
		return nil
	}
	fx.second.addr = a.String()
	n := int(env.FloodDuration.Seconds() * env.Sources.Rate())
	if n < 1 {
		n = 1
	}
	sc := &secondSource{t: ft, fx: fx, s: s, seq0: nextSeq(), at: make([]int, n),
		sentAt: make([]time.Time, n), gotAt: make([]time.Time, n), typ: make([]udpwire.MsgType, n)}
	for i := range sc.at {
		sc.at[i] = (2*i + 1) * total / (2 * n)
	}
	return sc
}

// sendDue sends the requests due before flood datagram idx (none on a nil
// source, or after a send failed).
func (sc *secondSource) sendDue(idx int) {
	if sc == nil {
		return
	}
	env := sc.t.Env
	for sc.err == nil && sc.next < len(sc.at) && sc.at[sc.next] <= idx {
		i := sc.next
		b := udpwire.AppendListRooms(nil, headerProfile(env), sc.seq0+uint16(i))
		sc.sentAt[i] = time.Now()
		if err := sc.s.Send(env.Addr, b, "second source during the flood"); err != nil {
			sc.err = err // the requests sent so far are judged; no more go out
			return
		}
		sc.next++
	}
}

// read records the first reply to each request, until stop (none on a
// nil source).
func (sc *secondSource) read() {
	if sc == nil {
		return
	}
	env := sc.t.Env
	prof := headerProfile(env)
	got := 0
	buf := make([]byte, 65536)
	for got < len(sc.at) {
		n, from, err := sc.s.Conn().ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		now := time.Now()
		b := buf[:n]
		m, ok := parseRaw(b, prof)
		i := int(m.seq - sc.seq0)
		note := ""
		switch {
		case !ok || i >= len(sc.at):
			note = "not a reply to the second source's requests"
		case !sc.gotAt[i].IsZero():
			note = "a duplicate reply"
		default:
			sc.gotAt[i], sc.typ[i] = now, m.typ
			got++
		}
		sc.t.LogRecv(sc.s.Local(), netip.AddrPortFrom(from.Addr().Unmap(), from.Port()).String(), b, note)
	}
}

// stop ends read: at once if no request went out or the run was
// interrupted, else wait at most timeout after the last one.
func (sc *secondSource) stop(timeout time.Duration) {
	if sc == nil {
		return
	}
	end := time.Now()
	if sc.next > 0 && sc.t.Ctx.Err() == nil { // an interrupted run waits for nothing
		if last := sc.sentAt[sc.next-1].Add(timeout); last.After(end) {
			end = last
		}
	}
	sc.s.Conn().SetReadDeadline(end)
}

// tally fills fx.second once read has returned.
func (sc *secondSource) tally() {
	if sc == nil {
		return
	}
	sec := &sc.fx.second
	sec.sent = sc.next
	if sc.next == 0 && sc.err != nil {
		sec.missing = fmt.Sprintf("sending from %v failed: %v", sec.addr, sc.err)
	} else if sc.next == 0 {
		sec.missing = "the flood was cut short before its first request"
	}
	for i := 0; i < sc.next; i++ {
		switch {
		case sc.gotAt[i].IsZero():
		case sc.typ[i] == udpwire.LobbyRoomList:
			sec.answered++
			sec.rtts = append(sec.rtts, sc.gotAt[i].Sub(sc.sentAt[i]))
		default:
			sec.errReplies++
		}
	}
}
