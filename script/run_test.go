package script

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// server answers CREATE with CREATED after 10ms, JOIN with FAILED for
// room 7 and JOINED otherwise, after 20ms; other units not at all.
func server(sent string) []delayed {
	switch {
	case strings.HasPrefix(sent, "CREATE "), sent == "CREATE":
		return []delayed{{10 * time.Millisecond, "CREATED roomId=7 port=9000"}}
	case strings.HasPrefix(sent, "JOIN roomId=5"): // a duplicate of an earlier answer first
		return []delayed{{5 * time.Millisecond, "JOINED roomId=4 stale bad=dup"}, {20 * time.Millisecond, "JOINED roomId=5"}}
	case strings.HasPrefix(sent, "JOIN roomId=7"):
		return []delayed{{20 * time.Millisecond, "FAILED roomId=7 reason=full"}}
	case strings.HasPrefix(sent, "JOIN"):
		return []delayed{{20 * time.Millisecond, "JOINED roomId=1 bad=x"}}
	case sent == "\x00\xff":
		return []delayed{{200 * time.Millisecond, "CREATED roomId=1 port=1"}}
	}
	return nil
}

// TestRun plays scripts against the fake server, in a bubble whose clock
// only the waits move: latencies and timeouts are exact.
func TestRun(t *testing.T) {
	think := Step{Label: "think", Call: &Call{Value: "think"}}
	for _, tc := range []struct {
		name       string
		b          *Block
		err        string   // Run's error ("" none)
		sent       []string // what the transport sent
		requests   []string // key and latency of each recorded request
		violations []string
		fails      []string
		calls      int
	}{
		{name: "send, expect, capture, send a capture, branch on the name",
			b: block(send(1, "CREATE"),
				capture(expect(2, time.Second, "roomId > 0 && port > 0", "CREATED"), "room", "roomId"),
				send(3, "JOIN", "roomId", "${room}"),
				capture(expect(4, time.Second, "", "JOINED", "FAILED"), "got", "message"),
				Step{Pos: Pos{Line: 5}, If: &If{Cond: ex(5, "got == 'FAILED'"), Then: *block(think), Else: *block(think, think)}}),
			sent:     []string{"lobby:CREATE seq=1", "lobby:JOIN roomId=7"},
			requests: []string{"send CREATE 10ms", "send JOIN 20ms"},
			calls:    1},
		{name: "repeat count, violations keyed by the request",
			b: block(Step{Pos: Pos{Line: 1}, Repeat: &Repeat{Count: 2, Body: *block(
				send(2, "JOIN", "roomId", "1"), expect(3, time.Second, "roomId == 1", "JOINED"))}}),
			sent:       []string{"lobby:JOIN roomId=1", "lobby:JOIN roomId=1"},
			requests:   []string{"send JOIN 20ms", "send JOIN 20ms"},
			violations: []string{"send JOIN: fake-1 x", "send JOIN: fake-1 x"}},
		{name: "a stale reply is recorded and skipped, the expect waits on",
			b:          block(send(1, "JOIN", "roomId", "5"), expect(2, time.Second, "roomId == 5", "JOINED")),
			sent:       []string{"lobby:JOIN roomId=5"},
			requests:   []string{"send JOIN 20ms"},
			violations: []string{"send JOIN: fake-1 dup"}},
		{name: "repeat while, bounded by max",
			b:   block(Step{Pos: Pos{Line: 1}, Label: "repeat", Repeat: &Repeat{While: ex(1, "client < 5"), Max: 3, Body: *block(think)}}),
			err: `repeat (line 1): while "client < 5" still holds after 3 rounds (max)`, calls: 3},
		{name: "wrong message names what came, with its bytes",
			b:    block(send(1, "JOIN", "roomId", "7"), expect(2, time.Second, "", "JOINED")),
			sent: []string{"lobby:JOIN roomId=7"},
			err:  "expect (line 2): expected JOINED, got FAILED (hex 4641494c454420726f6f6d49643d3720726561736f6e3d66756c6c)"},
		{name: "where false",
			b:    block(send(1, "CREATE"), expect(2, time.Second, "port < 100", "CREATED")),
			sent: []string{"lobby:CREATE seq=1"},
			err:  `CREATED: where "port < 100" does not hold: got CREATED (hex`},
		{name: "nothing within",
			b:    block(send(1, "CREATE"), expect(2, 5*time.Millisecond, "", "CREATED")),
			sent: []string{"lobby:CREATE seq=1"},
			err:  "expected CREATED within 5ms: nothing came"},
		{name: "on_fail continue records and goes on",
			b: block(send(1, "CREATE"), func() Step { s := expect(2, 5*time.Millisecond, "", "CREATED"); s.OnFail = Continue; return s }(),
				expect(3, time.Second, "", "any")),
			sent:     []string{"lobby:CREATE seq=1"},
			fails:    []string{"expect (line 2): expected CREATED within 5ms: nothing came"},
			requests: []string{"send CREATE 10ms"}},
		{name: "on_fail retry waits again",
			b: block(send(1, "CREATE"), func() Step {
				s := expect(2, 4*time.Millisecond, "", "CREATED")
				s.OnFail, s.Retries = Retry, 3
				return s
			}()),
			sent:     []string{"lobby:CREATE seq=1"},
			requests: []string{"send CREATE 10ms"}},
		{name: "silence kept",
			b:    block(send(1, "HELLO", "player", "p${client}"), Step{Pos: Pos{Line: 2}, Label: "expect", Expect: &Expect{Silence: 300 * time.Millisecond}}),
			sent: []string{"instance:HELLO player=p3"}},
		{name: "silence broken",
			b:    block(Step{Pos: Pos{Line: 1}, Send: &Send{Raw: src(1, "00ff")}}, Step{Pos: Pos{Line: 2}, Label: "expect", Expect: &Expect{Silence: 300 * time.Millisecond}}),
			sent: []string{"lobby:\x00\xff"},
			err:  "expected silence for 300ms, got CREATED (hex"},
		{name: "silence outlasts a late reply",
			b:    block(Step{Pos: Pos{Line: 1}, Send: &Send{Raw: src(1, "00ff")}}, Step{Pos: Pos{Line: 2}, Label: "expect", Expect: &Expect{Silence: 150 * time.Millisecond}}),
			sent: []string{"lobby:\x00\xff"}},
		{name: "on_fail retry, out of retries",
			b: block(send(1, "CREATE"), func() Step {
				s := expect(2, 2*time.Millisecond, "", "CREATED")
				s.OnFail, s.Retries = Retry, 2
				return s
			}()),
			sent: []string{"lobby:CREATE seq=1"},
			err:  "expected CREATED within 2ms: nothing came"},
		{name: "an if's branch is the one taken, whatever its steps captured",
			b: block(send(1, "CREATE"), capture(expect(2, time.Second, "", "CREATED"), "got", "message"),
				Step{Pos: Pos{Line: 3}, If: &If{Cond: ex(3, "got == 'CREATED'"),
					Then: *block(send(4, "JOIN", "roomId", "1"), capture(expect(5, time.Second, "", "JOINED"), "got", "message"), think),
					Else: *block(think, think)}}),
			sent:       []string{"lobby:CREATE seq=1", "lobby:JOIN roomId=1"},
			requests:   []string{"send CREATE 10ms", "send JOIN 20ms"},
			violations: []string{"send JOIN: fake-1 x"},
			calls:      1},
		{name: "a repeat's round is played whole, whatever its steps captured",
			b: block(send(1, "CREATE"), capture(expect(2, time.Second, "", "CREATED"), "got", "message"),
				Step{Pos: Pos{Line: 3}, Repeat: &Repeat{While: ex(3, "got != 'JOINED'"), Max: 3, Body: *block(
					send(4, "JOIN", "roomId", "1"), capture(expect(5, time.Second, "", "JOINED"), "got", "message"),
					send(6, "CREATE"), expect(7, time.Second, "", "CREATED"))}}),
			sent:       []string{"lobby:CREATE seq=1", "lobby:JOIN roomId=1", "lobby:CREATE seq=3"},
			requests:   []string{"send CREATE 10ms", "send JOIN 20ms", "send CREATE 10ms"},
			violations: []string{"send JOIN: fake-1 x"}},
		{name: "value out of a narrower field's range at run time",
			b:    block(send(1, "HELLO", "player", "${client}"), Step{Pos: Pos{Line: 2}, Label: "send", Send: &Send{Message: src(2, "JOIN"), Fields: []SetField{{Name: src(2, "small"), Value: src(2, "${session}")}}}}),
			sent: []string{"instance:HELLO player=3"},
			err:  "JOIN.small: 300 is out of range (0-255, 8 bits)"},
	} {
		for _, suspend := range []bool{false, true} {
			name := tc.name
			if suspend {
				name += ", every wait suspended"
			}
			t.Run(name, func(t *testing.T) {
				if err := Check(fakeCatalog{}, tc.b, NewScope()); err != nil {
					t.Fatalf("check: %v", err)
				}
				synctest.Test(t, func(t *testing.T) {
					tr := &fakeTransport{reply: server}
					rec := &recorder{}
					calls := 0
					env := &Env{Catalog: fakeCatalog{}, Session: fakeCatalog{}.NewSession(nil), Transport: tr, Record: rec,
						Vars: Vars{{"client", uint64(3)}, {"session", uint64(300)}},
						Call: func(_ context.Context, v any) error { calls++; return nil }}
					sus := &suspender{fakeTransport: tr}
					if suspend {
						env.Transport = sus
						env.Call = func(_ context.Context, v any) error { calls++; return ErrSuspended }
					}
					err := Run(context.Background(), tc.b, env)
					for n := 0; err == ErrSuspended && n < 100; n++ {
						err = Run(context.Background(), tc.b, env)
					}
					if suspend && len(tc.requests) > 0 && sus.waits == 0 {
						t.Error("no wait suspended")
					}
					if sus.moved != "" {
						t.Error(sus.moved)
					}
					if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
						t.Fatalf("err %v, want %q", err, tc.err)
					}
					var f *Failure
					if err != nil && !errors.As(err, &f) {
						t.Fatalf("err %T is not a step's failure", err)
					}
					var reqs []string
					for _, r := range rec.requests {
						if !r.Intended.Equal(r.Sent) {
							t.Errorf("intended %v, sent %v: no schedule was given", r.Intended, r.Sent)
						}
						reqs = append(reqs, r.Key.Label+" "+r.Key.Message+" "+r.Received.Sub(r.Sent).String())
					}
					eq(t, "sent", tr.sent, tc.sent)
					eq(t, "requests", reqs, tc.requests)
					eq(t, "violations", rec.violations, tc.violations)
					eq(t, "fails", rec.fails, tc.fails)
					if calls != tc.calls {
						t.Errorf("calls %d, want %d", calls, tc.calls)
					}
				})
			})
		}
	}
}

// suspender gives up each wait once (ErrSuspended) before it waits, as a
// client that suspends in every wait does; Run, called again, must go on
// with the same wait: moved names one whose deadline changed.
type suspender struct {
	*fakeTransport
	given time.Time // the deadline of the wait given up, zero none
	waits int
	moved string
}

func (s *suspender) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	if s.given.IsZero() {
		s.given = deadline
		s.waits++
		return "", nil, time.Now(), ErrSuspended
	}
	if !deadline.Equal(s.given) && s.moved == "" {
		s.moved = fmt.Sprintf("a suspended wait went on until %v, given up until %v", deadline, s.given)
	}
	s.given = time.Time{}
	return s.fakeTransport.Recv(deadline)
}

func eq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestRunIntended: a request's latency runs from its intended time.
func TestRunIntended(t *testing.T) {
	b := block(send(1, "CREATE"), expect(2, time.Second, "", "CREATED"))
	if err := Check(fakeCatalog{}, b, NewScope()); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		due := time.Now().Add(-5 * time.Millisecond)
		env := &Env{Catalog: fakeCatalog{}, Session: new(int), Transport: &fakeTransport{reply: server}, Record: rec,
			Vars: Vars{}, Intended: func() time.Time { return due }}
		if err := Run(context.Background(), b, env); err != nil {
			t.Fatal(err)
		}
		if len(rec.requests) != 1 || rec.requests[0].Received.Sub(rec.requests[0].Intended) != 15*time.Millisecond {
			t.Fatalf("requests %+v, want one of 15ms from its intended time", rec.requests)
		}
	})
}

// TestDescribe: a block in words names what each step sends, waits for
// or tests.
func TestDescribe(t *testing.T) {
	b := &Block{Steps: []Step{
		{Send: &Send{Message: Src{S: "HELLO"}, To: Src{S: "instance"}}},
		{Expect: &Expect{Messages: []Src{{S: "A"}, {S: "B"}}, Within: time.Second, Where: Expr{Src: Src{S: "x > 1"}}}},
		{Expect: &Expect{Silence: 300 * time.Millisecond}},
		{Send: &Send{Raw: Src{S: "00ff"}}},
		{Repeat: &Repeat{Count: 2, Body: Block{Steps: []Step{{Send: &Send{Message: Src{S: "PING"}}}}}}},
	}}
	want := "send HELLO to instance; expect A or B within 1s where x > 1; expect silence for 300ms; send 2 raw bytes; repeat 2 times: send PING"
	if got := b.Describe(); got != want {
		t.Errorf("Describe() =\n%q, want\n%q", got, want)
	}
}

// TestEnded: a block whose last step is an expect that held ends when
// its message came (the caller reads no clock for it); one that ends
// otherwise (a send, a silence, an if whose branch ends so) has no end of
// its own.
func TestEnded(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *Block
		want time.Duration // after the start; -1: zero
	}{
		{"expect last", block(send(1, "CREATE"), expect(2, time.Second, "", "CREATED")), 10 * time.Millisecond},
		{"send last", block(send(1, "CREATE"), expect(2, time.Second, "", "CREATED"), send(3, "HELLO")), -1},
		{"silence last", block(send(1, "HELLO"), Step{Pos: Pos{Line: 2}, Label: "silence", Expect: &Expect{Silence: 50 * time.Millisecond}}), -1},
		{"an if's expect last", block(Step{Pos: Pos{Line: 1}, If: &If{Cond: ex(1, "true"),
			Then: *block(send(2, "JOIN", "roomId", "7"), expect(3, time.Second, "", "FAILED"))}}), 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Check(fakeCatalog{}, tc.b, NewScope()); err != nil {
				t.Fatalf("check: %v", err)
			}
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				env := &Env{Catalog: fakeCatalog{}, Session: fakeCatalog{}.NewSession(nil), Transport: &fakeTransport{reply: server}, Record: &recorder{}}
				if err := Run(context.Background(), tc.b, env); err != nil {
					t.Fatal(err)
				}
				want := time.Time{}
				if tc.want >= 0 {
					want = start.Add(tc.want)
				}
				if got := env.Ended(); !got.Equal(want) {
					t.Errorf("Ended = %v after the start, want %v", got.Sub(start), tc.want)
				}
			})
		})
	}
}
