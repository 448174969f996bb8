package script

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// fakeBreaker is fakeCatalog that breaks messages: a broken unit ends
// " broken=KIND draw=N", N drawn from the rng as a kind random would.
type fakeBreaker struct{ fakeCatalog }

func (fakeBreaker) MalformedKinds() []string { return []string{"bad_crc", "truncated"} }

func (fakeBreaker) Break(s any, name string, fields map[string]any, kind string, rng *rand.Rand) ([]byte, error) {
	b, err := fakeCatalog{}.Encode(s, name, fields)
	return fmt.Appendf(b, " broken=%s draw=%d", kind, rng.IntN(100)), err
}

func malformedSend(n int, msg string, kinds ...string) Step {
	st := send(n, msg)
	for _, k := range kinds {
		st.Send.Malformed = append(st.Send.Malformed, src(n, k))
	}
	return st
}

// TestCheckMalformed: a malformed send is checked at load: a protocol
// whose catalog breaks nothing, an unknown kind (with the nearest), raw
// bytes, and a capture named as the random function are each an error at
// its line.
func TestCheckMalformed(t *testing.T) {
	raw := Step{Pos: Pos{Line: 4}, Send: &Send{Raw: src(4, "00"), Malformed: []Src{src(4, "bad_crc")}}}
	for _, tc := range []struct {
		name string
		cat  Catalog
		b    *Block
		want string
		near string
	}{
		{"no breaker", fakeCatalog{}, block(malformedSend(2, "CREATE", "bad_crc")), "this protocol's scripts do not break messages", ""},
		{"unknown kind", fakeBreaker{}, block(malformedSend(3, "CREATE", "bad_crc", "bad_rcr")), `unknown kind "bad_rcr"`, "bad_rcr"},
		{"raw", fakeBreaker{}, block(raw), "malformed breaks a message: give message, not raw", ""},
		{"capture random", fakeBreaker{}, block(capture(expect(5, 0, "", "CREATED"), "random", "roomId")), "random is a function", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var es Errors
			if err := Check(tc.cat, tc.b, NewScope()); !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("got %v, want one error", err)
			}
			if e := es[0]; !strings.Contains(e.Msg, tc.want) || e.Name != tc.near || e.Line != tc.b.Steps[0].Line {
				t.Fatalf("got %d: %q (name %q), want line %d: %q (name %q)", e.Line, e.Msg, e.Name, tc.b.Steps[0].Line, tc.want, tc.near)
			}
		})
	}
	if err := Check(fakeBreaker{}, block(malformedSend(1, "CREATE", "bad_crc", "truncated"),
		Step{Pos: Pos{Line: 2}, If: &If{Cond: ex(2, "random() < 0.25")}}), NewScope()); err != nil {
		t.Fatalf("a good malformed send and random(): %v", err)
	}
}

// TestRunMalformed: a malformed send draws its kind from the client's
// random source, then whatever the kind draws, in that order (the
// built-in malformed step's order, so both send the same bytes); it is
// counted as sent by kind and is no request; a reply to it is counted
// against its kind and skipped, so a silence after it holds. random()
// draws from the same source.
func TestRunMalformed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kinds := []string{"bad_crc", "truncated"}
		then := []Step{{Label: "think", Call: &Call{Value: "then"}}}
		b := block(
			Step{Pos: Pos{Line: 1}, Repeat: &Repeat{Count: 8, Body: *block(
				Step{Pos: Pos{Line: 2}, If: &If{Cond: ex(2, "random() < 0.5"), Then: Block{Steps: then}}},
				malformedSend(3, "CREATE", kinds...),
			)}},
			Step{Pos: Pos{Line: 4}, Label: "silence", Expect: &Expect{Silence: 50 * time.Millisecond}},
		)
		if err := Check(fakeBreaker{}, b, NewScope()); err != nil {
			t.Fatal(err)
		}
		tr := &fakeTransport{reply: func(sent string) []delayed {
			if _, k, ok := strings.Cut(sent, " broken="); ok && strings.HasPrefix(k, "bad_crc") {
				return []delayed{{time.Millisecond, "CREATED roomId=1 port=1 malformed=bad_crc"}}
			}
			return nil
		}}
		rec := &recorder{}
		calls := 0
		env := &Env{Catalog: fakeBreaker{}, Session: fakeBreaker{}.NewSession(nil), Transport: tr, Record: rec,
			Vars: Vars(nil).WithBuiltins(1, 2, 3, 4), Rand: rand.New(rand.NewPCG(3, 4)),
			Call: func(context.Context, any) error { calls++; return nil }}
		if err := Run(context.Background(), b, env); err != nil {
			t.Fatal(err)
		}
		// The same draws, made here in the order the run must make them.
		rng := rand.New(rand.NewPCG(3, 4))
		var wantSent, wantRec, wantReplies []string
		wantCalls := 0
		for i := range 8 {
			if rng.Float64() < 0.5 {
				wantCalls++
			}
			k := kinds[rng.IntN(len(kinds))]
			wantSent = append(wantSent, fmt.Sprintf("lobby:CREATE seq=%d broken=%s draw=%d", i+1, k, rng.IntN(100)))
			wantRec = append(wantRec, "sent "+k)
			if k == "bad_crc" {
				wantReplies = append(wantReplies, "reply "+k)
			}
		}
		wantRec = append(wantRec, wantReplies...)
		if !slices.Equal(tr.sent, wantSent) {
			t.Errorf("sent\n%q\nwant\n%q", tr.sent, wantSent)
		}
		if calls != wantCalls {
			t.Errorf("random() < 0.5 held %d times, want %d", calls, wantCalls)
		}
		// The replies are read by the silence, after the sends.
		if !slices.Equal(rec.malformed, wantRec) {
			t.Errorf("recorded %q, want %q", rec.malformed, wantRec)
		}
		if len(rec.requests) != 0 {
			t.Errorf("malformed sends recorded as requests: %v", rec.requests)
		}
		// A malformed send last in its flow is no request left unanswered.
		last := block(send(5, "CREATE"), malformedSend(6, "CREATE", kinds...))
		if err := Check(fakeBreaker{}, last, NewScope()); err != nil {
			t.Fatal(err)
		}
		if err := Run(context.Background(), last, env); err != nil {
			t.Fatal(err)
		}
		if q, ok := env.TakePending(); ok {
			t.Errorf("a malformed send left pending as a request: %+v", q)
		}
	})
}

// fakeRules are the fake protocol's rule ids, as a scope knows them.
func fakeRules() *Scope { return NewScope().WithRules([]string{"fake-1", "fake-2"}) }

func rawSend(n int, hex string, allow ...string) Step {
	s := &Send{Raw: src(n, hex)}
	for _, r := range allow {
		s.Allow = append(s.Allow, src(n, r))
	}
	return Step{Pos: Pos{Line: n}, Label: "send_raw", Send: s}
}

// TestCheckAllow: allow is for raw bytes only, and its rules are the
// protocol's (with the nearest when not).
func TestCheckAllow(t *testing.T) {
	withAllow := send(2, "CREATE")
	withAllow.Send.Allow = []Src{src(2, "fake-1")}
	for _, tc := range []struct {
		name string
		b    *Block
		want string
		near string
	}{
		{"a message's", block(withAllow), "allow: only raw bytes' replies may break rules on purpose", ""},
		{"unknown rule", block(rawSend(3, "00ff", "fake-3")), `allow: unknown rule "fake-3"`, "fake-3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var es Errors
			if err := Check(fakeCatalog{}, tc.b, fakeRules()); !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("got %v, want one error", err)
			}
			if e := es[0]; !strings.Contains(e.Msg, tc.want) || e.Name != tc.near {
				t.Fatalf("got %q (name %q), want %q (name %q)", e.Msg, e.Name, tc.want, tc.near)
			}
		})
	}
}

// TestRunAllow: the rules a raw send allows are not recorded for the
// replies that follow it, until the next send; others are, and so are
// the allowed ones after another send.
func TestRunAllow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := block(
			rawSend(1, "00ff", "fake-1"), expect(2, time.Second, "", "any"),
			send(3, "JOIN", "roomId", "1"), expect(4, time.Second, "", "JOINED"))
		if err := Check(fakeCatalog{}, b, fakeRules()); err != nil {
			t.Fatal(err)
		}
		tr := &fakeTransport{reply: func(sent string) []delayed {
			if sent == "\x00\xff" {
				return []delayed{{time.Millisecond, "CREATED roomId=1 port=1 bad=allowed"}}
			}
			return server(sent)
		}}
		rec := &recorder{}
		env := &Env{Catalog: fakeCatalog{}, Session: fakeCatalog{}.NewSession(nil), Transport: tr, Record: rec,
			Vars: Vars(nil).WithBuiltins(1, 2, 3, 4)}
		if err := Run(context.Background(), b, env); err != nil {
			t.Fatal(err)
		}
		if want := []string{"send JOIN: fake-1 x"}; !slices.Equal(rec.violations, want) {
			t.Errorf("violations %q, want %q (the raw send's allowed one left out)", rec.violations, want)
		}
	})
}
