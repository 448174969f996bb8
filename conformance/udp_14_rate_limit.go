package conformance

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/internal/sockbuf"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// seed 003 §14 Security considerations: rate limiting per client IP.

const reqRateLimit = "Lobby server should implement rate limiting per client IP to prevent abuse: if (clientRequestRate > MAX_REQUESTS_PER_SECOND) { // Drop packet or send error }"

func init() {
	Register(&Case{
		ID: "udp/14/1", Protocol: ProtoUDP, Section: secSecurity, Rule: "U-RATE-LIMIT", Level: Should, Stage: StageSerial,
		Desc:        "a flood of LOBBY_LIST_ROOMS from one source address is limited: the excess dropped or answered with an error",
		Requirement: reqRateLimit,
		Run: func(t *T) error {
			fx, err := flood(t)
			if err != nil {
				return err
			}
			if fx.limited() {
				t.Notef("%d of %d answered (%d with another type than LOBBY_ROOM_LIST)", fx.answered+fx.errReplies, fx.sent, fx.errReplies)
				return nil
			}
			return Failf(fmt.Sprintf("most of a %d/s flood from one source dropped or answered with an error", fx.rate),
				"%d of %d requests sent in %v from %v answered with LOBBY_ROOM_LIST: no rate limit observed at %d/s",
				fx.answered, fx.sent, fx.dur.Round(time.Millisecond), fx.src, fx.rate)
		},
	})
	Register(&Case{
		ID: "udp/14/2", Protocol: ProtoUDP, Section: secSecurity, Rule: "U-RATE-LIMIT", Level: Should, Stage: StageSerial,
		Desc:        "while one source address floods, a second source address is still served",
		Requirement: reqRateLimit + " (per client IP: the limit of one client must not starve the others)",
		Run: func(t *T) error {
			fx, err := flood(t)
			if err != nil {
				return err
			}
			if fx.second.sent == 0 {
				return Skipf("no second reserved source address (the pool needs at least 4 addresses)")
			}
			if fx.second.answered*5 < fx.second.sent*4 {
				return Failf("the second source served (≥ 80% of its paced requests answered)",
					"%d of %d answered during the flood", fx.second.answered, fx.second.sent)
			}
			t.Notef("%d of %d answered, median round trip %v", fx.second.answered, fx.second.sent, fx.p50())
			return nil
		},
	})
	Register(&Case{
		ID: "udp/14/3", Protocol: ProtoUDP, Section: secSecurity, Level: Info, Stage: StageSerial,
		Desc:        "the rate the server accepts from one flooding source (informational)",
		Requirement: reqRateLimit,
		Run: func(t *T) error {
			fx, err := flood(t)
			if err != nil {
				return err
			}
			t.Notef("flood: %d LOBBY_LIST_ROOMS in %v from %v (%d/s offered): %d answered with LOBBY_ROOM_LIST, %d with another type, %d dropped",
				fx.sent, fx.dur.Round(time.Millisecond), fx.src, fx.rate, fx.answered, fx.errReplies, fx.sent-fx.answered-fx.errReplies)
			t.Notef("accepted rate in the second half of the flood: %.0f/s", fx.lateRate)
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
	second               struct {
		sent, answered int
		rtts           []time.Duration
	}
}

// limited: most of the flood was refused, or some of it answered with
// another type (an error).
func (f *floodFx) limited() bool { return f.errReplies > 0 || f.answered*2 < f.sent }

func (f *floodFx) p50() time.Duration {
	r := append([]time.Duration(nil), f.second.rtts...)
	if len(r) == 0 {
		return 0
	}
	sort.Slice(r, func(i, j int) bool { return r[i] < r[j] })
	return r[len(r)/2].Round(time.Microsecond)
}

func flood(t *T) (*floodFx, error) {
	v, err := t.Fixture("udp-flood", runFlood)
	if err != nil {
		return nil, err
	}
	return v.(*floodFx), nil
}

func runFlood(ft *T) (any, error) {
	env := ft.Env
	src, ok := env.Sources.Reserved(0)
	if !ok {
		return nil, Skipf("the flood needs its own source address: give --source-addrs with at least 4 addresses")
	}
	s, err := ft.openUDPOn(src)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	sockbuf.SetRead(s.c, 8<<20) // a flood's replies must not be lost in our own socket
	fx := &floodFx{src: src.String(), rate: env.FloodRate}
	prof := env.profile()
	total := int(float64(env.FloodRate) * env.FloodDuration.Seconds())
	if total < 1 {
		total = 1
	}

	start := time.Now()
	var wg sync.WaitGroup
	// Reader: count replies by type, and those in the second half.
	var late int
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 65536)
		logged := 0
		for {
			n, _, err := s.c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if logged < 4 {
				ft.LogRecv(s.local, env.Addr.String(), buf[:n], "flood reply")
				logged++
			}
			m, ok := parseRaw(buf[:n], prof)
			if ok && m.typ == udplobby.LobbyRoomList {
				fx.answered++
				if time.Since(start) >= env.FloodDuration/2 && time.Since(start) <= env.FloodDuration {
					late++
				}
			} else {
				fx.errReplies++
			}
		}
	}()
	// Second source: paced requests during the flood.
	if src2, ok := env.Sources.Reserved(1); ok {
		s2, err := ft.openUDPOn(src2)
		if err == nil {
			defer s2.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				secondSource(ft, s2, fx, env.FloodDuration)
			}()
		}
	}
	// Flood: a tick per millisecond, sending what is due.
	buf := make([]byte, 0, 64)
	for fx.sent < total && ft.Ctx.Err() == nil {
		due := int(float64(env.FloodRate) * time.Since(start).Seconds())
		if due > total {
			due = total
		}
		for fx.sent < due {
			buf = udplobby.AppendListRooms(buf[:0], prof, uint16(fx.sent))
			if fx.sent < 4 {
				ft.LogSent(s.local, env.Addr.String(), buf, "flood")
			}
			if _, err := s.c.WriteToUDPAddrPort(buf, env.Addr); err != nil && !isTransient(err) {
				return nil, err
			}
			fx.sent++
		}
		time.Sleep(time.Millisecond)
	}
	fx.dur = time.Since(start)
	// Replies still queued arrive within a few round trips; then stop the
	// reader.
	tail := env.Timeout
	if tail > 300*time.Millisecond {
		tail = 300 * time.Millisecond
	}
	ft.Sleep(tail)
	s.c.SetReadDeadline(time.Now())
	wg.Wait()
	if fx.dur > 0 {
		fx.lateRate = float64(late) / (env.FloodDuration.Seconds() / 2)
	}
	return fx, nil
}

func isTransient(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// secondSource sends a LIST every 50 ms during the flood from its own
// address and waits for each reply.
func secondSource(ft *T, s *udpSock, fx *floodFx, d time.Duration) {
	prof := ft.Env.profile()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ft.Ctx.Err() == nil {
		next := time.Now().Add(50 * time.Millisecond)
		seq := nextSeq()
		sent := time.Now()
		if err := s.send(ft.Env.Addr, udplobby.AppendListRooms(nil, prof, seq), "second source during the flood"); err != nil {
			return
		}
		fx.second.sent++
		if _, err := s.recv(ft.Env.Addr, ft.Env.Timeout); err == nil {
			fx.second.answered++
			fx.second.rtts = append(fx.second.rtts, time.Since(sent))
		}
		time.Sleep(time.Until(next))
	}
}
