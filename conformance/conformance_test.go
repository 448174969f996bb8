package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, id string
		want        bool
	}{
		{"udp-lobby", "udp-lobby/5/2", true},     // group prefix
		{"udp-lobby/5", "udp-lobby/5/2", true},   // section prefix
		{"udp-lobby/1", "udp-lobby/13/2", false}, // segments, not characters
		{"udp-lobby/13", "udp-lobby/13/10", true},
		{"udp-lobby/5/2", "udp-lobby/5/2", true}, // exact
		{"udp-lobby/5/2", "udp-lobby/5/20", false},
		{"udp-lobby/5/2/x", "udp-lobby/5/2", false}, // longer than the id
		{"udp-lobby/1*", "udp-lobby/13/2", true},    // glob within a segment
		{"udp-lobby/1*", "udp-lobby/5/1", false},
		{"*/5/*", "udp-lobby/5/3", true}, // any group
		{"*/5/*", "tcp-lobby/5.1/3", false},
		{"tcp-lobby/5.*", "tcp-lobby/5.1/3", true},
		{"inst", "udp-lobby/2/1", false},
		{" udp-lobby/4 ", "udp-lobby/4/1", true},  // spaces trimmed
		{"udp-lobby/4/", "udp-lobby/4/1", true},   // trailing slash
		{"", "udp-lobby/4/1", false},              // empty selects nothing
		{"tcp-lobby/[", "tcp-lobby/5.1/1", false}, // bad glob
		{"tcp-lobby/R", "tcp-lobby/R/2", true},
		{"tcp-lobby/A/1", "tcp-lobby/A/1", true},
		{"leviathan*", "leviathan/3/1", true},
		{"udp-lobby/13/?", "udp-lobby/13/9", true},
		{"udp-lobby/13/?", "udp-lobby/13/10", false},
		{"udp-lobby/*/1", "udp-lobby/13/1", true},
		{"*", "udp-lobby/13/1", true},
		{"udp-lobby/13/1*", "udp-lobby/13/10", true},
		{"udp-lobby/13/1*", "udp-lobby/13/2", false},
		{"udp-lobby/13/1,udp-lobby/4", "udp-lobby/13/1", false}, // commas are the CLI's business
		{"UDP", "udp-lobby/13/1", false},                        // case matters
		{"udp-lobby/5/2 ", "udp-lobby/5/2", true},
		{"udp-lobby//5", "udp-lobby/5/2", false},
		{"inst/2", "inst/2/9", true},
		{"inst/2/*", "inst/2/9", true},
		{"inst/2/[1-3]", "inst/2/2", true},
		{"inst/2/[1-3]", "inst/2/4", false},
		{"tcp-lobby/7.1", "tcp-lobby/7.1/4", true},
		{"tcp-lobby/7", "tcp-lobby/7.1/4", false}, // 7 is not 7.1
		{"tcp-lobby/7*", "tcp-lobby/7.1/4", true},
		{"tcp-lobby/*/1", "tcp-lobby/2.2/1", true},
		{"tcp-lobby/*/1", "tcp-lobby/2.2/2", false},
		{"udp-lobby/14", "udp-lobby/14/3", true},
		{"udp-lobby/4", "udp-lobby/14/3", false},
		{"udp-lobby/4*", "udp-lobby/14/3", false},
		{"udp-lobby/*4", "udp-lobby/14/3", true},
		{"udp-lobby/14/3/", "udp-lobby/14/3", true},
		{"/udp-lobby/14/3", "udp-lobby/14/3", true}, // leading slash
		{"tcp", "udp-lobby/14/3", false},
		{"udp-lobby/10", "udp-lobby/10/5", true},
		{"udp-lobby/10/5", "udp-lobby/10/5", true},
		{"udp-lobby/10/6", "udp-lobby/10/5", false},
		{"udp-lobby/9", "udp-lobby/9/1", true},
		{"udp-lobby/9", "udp-lobby/99/1", false},
		{"udp-lobby/9?", "udp-lobby/99/1", true},
		{"udp-lobby/3/[^1]", "udp-lobby/3/2", true},
		{"udp-lobby/3/[^1]", "udp-lobby/3/1", false},
		{"u*/3", "udp-lobby/3/1", true},
		{"u*", "udp-lobby/3/1", true},
		{"x*", "udp-lobby/3/1", false},
		{"udp-lobby/3/1", "udp-lobby/3/1", true},
		{"udp-lobby/3/1", "inst/3/1", false},
		{"udp-lobby/3", "inst/3/1", false},
		{"inst/2/1", "inst/2/10", false},
		{"inst/2/1*", "inst/2/10", true},
		{"inst/2/1?", "inst/2/10", true},
		{"inst/2/1?", "inst/2/1", false},
		{"inst/2/1", "inst/2/1", true},
		{"tcp-lobby/5.1/7", "tcp-lobby/5.1/7", true},
		{"tcp-lobby/5.1/*", "tcp-lobby/5.1/7", true},
		{"tcp-lobby/5.1", "tcp-lobby/5.1/7", true},
		{"tcp-lobby/5", "tcp-lobby/5.1/7", false},
		{"tcp-lobby/5*", "tcp-lobby/5.1/7", true},
		{"tcp-lobby/5.1/7", "tcp-lobby/5.1/77", false},
		{"tcp-lobby/5.1/7*", "tcp-lobby/5.1/77", true},
		{"tcp-lobby/5.1/7?", "tcp-lobby/5.1/77", true},
		{"tcp-lobby/5.1/7?", "tcp-lobby/5.1/7", false},
		{"tcp-lobby/5.1/[7]", "tcp-lobby/5.1/7", true},
		{"tcp-lobby/5.1/[^7]", "tcp-lobby/5.1/7", false},
		{"tcp-lobby/5.1/[^7]", "tcp-lobby/5.1/6", true},
		{"tcp-lobby/5.1/\\7", "tcp-lobby/5.1/7", true},  // escaped
		{"tcp-lobby/5.1/\\*", "tcp-lobby/5.1/7", false}, // escaped star is literal
		{"tcp-lobby/5.1/*/x", "tcp-lobby/5.1/7", false},
		{"**", "tcp-lobby/5.1/7", true},
		{"*/*/*", "tcp-lobby/5.1/7", true},
		{"*/*/*/*", "tcp-lobby/5.1/7", false},
		{"*/*", "tcp-lobby/5.1/7", true},
		{"?cp-lobby", "tcp-lobby/5.1/7", true},
		{"tcp-lobby/5.1/7", "udp-lobby/5.1/7", false},
		{"tcp-lobby", "tcp-lobby/5.1/7", true},
		{"tc", "tcp-lobby/5.1/7", false},
		{"tcp-lobby/", "tcp-lobby/5.1/7", true},
		{"tcp-lobby//", "tcp-lobby/5.1/7", true}, // trailing slashes trimmed            //
		{"tcp-lobby/5.1//", "tcp-lobby/5.1/7", true},
		{"tcp-lobby/5.1/7//", "tcp-lobby/5.1/7", true},
		{"  ", "tcp-lobby/5.1/7", false},
		{"/", "tcp-lobby/5.1/7", false},
		{"//", "tcp-lobby/5.1/7", false},
		{"udp-lobby/13/1", "udp-lobby/13/1", true},
		{"udp-lobby/13/01", "udp-lobby/13/1", false}, // ids are not numbers
		// The old groups (CaseID) select as today's do.
		{"udp", "udp-lobby/5/2", true},
		{"udp/13", "udp-lobby/13/10", true},
		{"udp/1", "udp-lobby/13/2", false},
		{"udp/1*", "udp-lobby/13/2", true},
		{"/udp/14/3", "udp-lobby/14/3", true},
		{" tcp/R ", "tcp-lobby/R/2", true},
		{"tcp/5.1/[^7]", "tcp-lobby/5.1/6", true},
		{"tcp", "tcp-lobby/5.1/7", true},
		{"tcp", "udp-lobby/14/3", false},
		{"udp", "inst/2/1", false},
		{"udp", "leviathan/1/1", false},   // Leviathan is UDP too: not an alias of it
		{"?cp", "tcp-lobby/5.1/7", false}, // only the old names themselves are aliases, not globs over them
		{"udp/5/2", "udp/5/2", false},     // ids are today's; a pattern is read as today's
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.id); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.id, got, tt.want)
		}
	}
}

// TestCaseID: the ids and groups of older builds map to today's, anything
// else (today's ids, inst, leviathan, globs, near misses) is unchanged.
func TestCaseID(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"udp/13/2", "udp-lobby/13/2"},
		{"udp/13", "udp-lobby/13"},
		{"udp", "udp-lobby"},
		{"udp/", "udp-lobby/"},
		{"udp/1*", "udp-lobby/1*"},
		{"tcp/5.1/7", "tcp-lobby/5.1/7"},
		{"tcp/R/*", "tcp-lobby/R/*"},
		{"tcp", "tcp-lobby"},
		{"udp-lobby/13/2", "udp-lobby/13/2"},
		{"tcp-lobby/A/1", "tcp-lobby/A/1"},
		{"inst/2/1", "inst/2/1"},
		{"leviathan/1/1", "leviathan/1/1"},
		{"*/5/*", "*/5/*"},
		{"ud*", "ud*"},
		{"UDP/3/1", "UDP/3/1"},
		{"udpx/3/1", "udpx/3/1"},
		{"x/udp/3", "x/udp/3"},
		{"", ""},
	} {
		if got := CaseID(tt.in); got != tt.want {
			t.Errorf("CaseID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for old, now := range oldGroups {
		if _, ok := lookupGroup(now); !ok {
			t.Errorf("old group %q maps to %q, not a registered protocol", old, now)
		}
	}
}

// TestCasesOldPatterns: --cases in an old group selects exactly the cases
// of today's pattern, and something.
func TestCasesOldPatterns(t *testing.T) {
	ids := func(cs []*Case) string {
		var b strings.Builder
		for _, c := range cs {
			b.WriteString(c.ID + " ")
		}
		return b.String()
	}
	for _, tt := range []struct {
		protocol string
		old, now []string
	}{
		{protoUDP, []string{"udp/3"}, []string{"udp-lobby/3"}},
		{protoUDP, []string{"udp/13/2"}, []string{"udp-lobby/13/2"}},
		{protoUDP, []string{"udp/1*"}, []string{"udp-lobby/1*"}},
		{protoUDP, []string{"udp"}, []string{"udp-lobby"}},
		{protoUDP, []string{"udp/4", "inst/2/1"}, []string{"udp-lobby/4", "inst/2/1"}},
		{protoTCP, []string{"tcp/5.1"}, []string{"tcp-lobby/5.1"}},
		{protoTCP, []string{"tcp/R/*"}, []string{"tcp-lobby/R/*"}},
		{protoTCP, []string{"tcp"}, []string{"tcp-lobby"}},
		{"", []string{"udp", "tcp"}, []string{"udp-lobby", "tcp-lobby"}},
	} {
		got, want := Cases(tt.protocol, tt.old...), Cases(tt.protocol, tt.now...)
		if len(want) == 0 || ids(got) != ids(want) {
			t.Errorf("Cases(%q, %q) = %s, want %s (as %q)", tt.protocol, tt.old, ids(got), ids(want), tt.now)
		}
	}
	if n, all := len(Cases("", "udp", "tcp")), len(Cases(protoUDP))+len(Cases(protoTCP))-len(Cases(protoUDP, "inst")); n != all {
		t.Errorf("udp,tcp select %d cases, want every lobby case but inst's (%d)", n, all)
	}
}

func TestValidPattern(t *testing.T) {
	for _, p := range []string{"udp", "udp-lobby/1*", "*/5/*", "tcp-lobby/5.1/[1-3]"} {
		if err := ValidPattern(p); err != nil {
			t.Errorf("ValidPattern(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", " ", "/", "tcp-lobby/[", "udp-lobby/\\"} {
		if err := ValidPattern(p); err == nil {
			t.Errorf("ValidPattern(%q) = nil, want an error", p)
		}
	}
}

func TestCompareIDs(t *testing.T) {
	want := []string{"inst/2/1", "inst/2/9", "inst/2/10", "tcp-lobby/2.2/1", "tcp-lobby/5.1/2", "tcp-lobby/5.1/10", "tcp-lobby/5.2/1", "tcp-lobby/A/1", "tcp-lobby/R/1",
		"udp-lobby/3/1", "udp-lobby/5/2", "udp-lobby/5/10", "udp-lobby/13/1", "udp-lobby/13/2", "udp-lobby/13/10", "udp-lobby/14/1"}
	got := append([]string(nil), want...)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sortIDs(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("sorted %v, want %v", got, want)
		}
	}
	if CompareIDs("udp-lobby/5/2", "udp-lobby/5/2") != 0 {
		t.Error("an id does not compare equal to itself")
	}
}

func sortIDs(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && CompareIDs(s[j-1], s[j]) > 0; j-- {
			s[j-1], s[j] = s[j], s[j-1]
		}
	}
}

func TestSourcePoolPacing(t *testing.T) {
	addrs, _ := netrange.ParseAddrs("127.0.0.1-127.0.0.4")
	p, err := NewSourcePool(addrs, 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	for _, b := range p.buckets {
		b.last = now
	}
	if got := p.Addrs(); len(got) != 2 {
		t.Fatalf("paced addresses %v, want the first two (the last two are reserved)", got)
	}
	if r, ok := p.Reserved(1); !ok || r.String() != "127.0.0.4" {
		t.Fatalf("Reserved(1) = %v, %v", r, ok)
	}
	if _, ok := p.Reserved(2); ok {
		t.Fatal("Reserved(2) exists")
	}
	ctx := context.Background()
	var got []string
	for i := 0; i < 4; i++ { // burst 2 on each of 2 addresses
		a, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a.String())
	}
	if want := "127.0.0.1 127.0.0.2 127.0.0.1 127.0.0.2"; strings.Join(got, " ") != want {
		t.Errorf("round robin %v, want %s", got, want)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire with every bucket empty = %v, want to wait", err)
	}
	now = now.Add(100 * time.Millisecond) // one token each at 10/s
	if _, err := p.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Take(ctx, netip.MustParseAddr("127.0.0.4")); err != nil {
		t.Errorf("Take on a reserved address = %v, want no pacing", err)
	}
	if _, err := NewSourcePool(nil, 1, 1); err == nil {
		t.Error("empty pool accepted")
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name  string
		level Level
		err   error
		want  string
		act   string
	}{
		{"pass", Must, nil, result.VerdictPass, ""},
		{"info passes as info", Info, nil, result.VerdictInfo, ""},
		{"must broken fails", Must, Fail("x", "y"), result.VerdictFail, "y"},
		{"should broken warns", Should, Fail("x", "y"), result.VerdictWarn, "y"},
		{"info broken informs", Info, Fail("x", "y"), result.VerdictInfo, "y"},
		{"level override", Must, Warnf("x", "y%d", 1), result.VerdictWarn, "y1"},
		{"wrapped verify error", Must, fmt.Errorf("ctx: %w", Fail("x", "z")), result.VerdictFail, "z"},
		{"skip", Must, Skipf("no %s", "room"), result.VerdictSkip, "no room"},
		{"harness error skips", Must, errors.New("bind: boom"), result.VerdictSkip, "harness error: bind: boom"},
		{"precondition failure skips", Must, Precondition("setup", Fail("a", "b")), result.VerdictSkip, "setup: expected a, got b"},
	}
	for _, tt := range tests {
		v, _, act := judge(tt.level, tt.err)
		if v != tt.want || act != tt.act {
			t.Errorf("%s: judge = %v %q, want %v %q", tt.name, v, act, tt.want, tt.act)
		}
	}
}

// TestRegistry checks every registered case is complete and named after
// its protocol's sections.
func TestRegistry(t *testing.T) {
	prefixes := map[string][]string{protoUDP: {"udp-lobby/", "inst/"}, protoTCP: {"tcp-lobby/"}}
	n := map[string]int{}
	for _, c := range Cases("") {
		n[c.Protocol]++
		if c.Section == "" || c.Desc == "" || c.Requirement == "" {
			t.Errorf("%s lacks a section, description or requirement", c.ID)
		}
		if p, ok := prefixes[c.Protocol]; ok {
			ok := false
			for _, x := range p {
				ok = ok || strings.HasPrefix(c.ID, x)
			}
			if !ok {
				t.Errorf("%s of %s is not named %v…", c.ID, c.Protocol, p)
			}
		}
		if _, ok := lookupGroup(c.Protocol); !ok {
			t.Errorf("%s belongs to unregistered protocol %q", c.ID, c.Protocol)
		}
	}
	if n[protoUDP] < 40 || n[protoTCP] < 20 {
		t.Errorf("cases per protocol %v", n)
	}
	mustPanic := func(name string, c *Case) {
		defer func() {
			if recover() == nil {
				t.Errorf("register(%s) did not panic", name)
			}
		}()
		register(c)
	}
	run := func(*T) error { return nil }
	mustPanic("duplicate", &Case{ID: "udp-lobby/3/1", Protocol: protoUDP, Level: Must, Run: run})
	mustPanic("two segments", &Case{ID: "udp-lobby/3", Protocol: protoUDP, Level: Must, Run: run})
	mustPanic("no run", &Case{ID: "udp-lobby/99/1", Protocol: protoUDP, Level: Must})
	mustPanic("no level", &Case{ID: "udp-lobby/99/2", Protocol: protoUDP, Run: run})
	mustPanic("old group", &Case{ID: "udp/99/3", Protocol: protoUDP, Level: Must, Run: run})
	mustPanic("another protocol's group", &Case{ID: "leviathan/99/1", Protocol: protoUDP, Level: Must, Run: run})
	mustPanic("inst of tcp", &Case{ID: "inst/99/1", Protocol: protoTCP, Level: Must, Run: run})
}

func TestConfigValidate(t *testing.T) {
	cfg := Config{Protocol: "smtp", Patterns: []string{"tcp-lobby/["}, Timeout: -1}
	errs := cfg.Validate()
	if len(errs) != 4 {
		t.Errorf("Validate() = %v, want 4 problems (target, protocol, pattern, timeout)", errs)
	}
	if _, err := Run(context.Background(), Config{Target: "127.0.0.1:1", Patterns: []string{"nothing/here"}}); err == nil {
		t.Error("Run with no matching case succeeded")
	}
}

func TestListGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteList(&b, Cases(protoUDP, "udp-lobby/13", "inst/2/1")); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "list.txt"), b.Bytes())
}

// TestRunCaseResult: runCase fills the reports model directly: the case's
// description, level and rule, the verdict judged from its error, its
// notes, and its wire log (the fixture's entries first, noted "setup",
// hex of the bytes, direction and addresses), with the entries over the
// log bound counted; a skip names the case owning the reply it rests on,
// and a finding made while the run is interrupted becomes a skip.
func TestRunCaseResult(t *testing.T) {
	newEnv := func() *Env {
		return &Env{Protocol: protoUDP, fixtures: map[string]*fixture{}, selected: map[string]bool{"udp-lobby/3/2": true}}
	}
	c := &Case{ID: "udp-lobby/3/2", Protocol: protoUDP, Section: "udp-lobby.md §3 Packet structure", Desc: "a failing case", Requirement: "the sentence", Rule: "U-TEST", Level: Must,
		Run: func(t *T) error {
			if _, err := t.Fixture("room", func(ft *T) (any, error) {
				ft.LogSent("127.0.0.2:40001", "127.0.0.1:8080", []byte{1, 2}, "create")
				ft.LogRecv("127.0.0.2:40001", "127.0.0.1:8080", []byte{3}, "")
				return 1, nil
			}); err != nil {
				return err
			}
			t.LogSent("127.0.0.2:40000", "127.0.0.1:8080", udpwire.AppendListRooms(nil, udpwire.ProfileSpec, 7), "LOBBY_LIST_ROOMS")
			for range result.MaxCaseWireEntries + 2 {
				t.LogRecv("127.0.0.2:40000", "127.0.0.1:8080", []byte{0xab}, "")
			}
			t.Notef("%d replies checked", 4)
			return Fail("packetType 0x02", "packetType 0x01")
		}}
	got := runCase(context.Background(), newEnv(), c)
	if got.ID != c.ID || got.Section != c.Section || got.Description != c.Desc || got.Requirement != c.Requirement || got.Rule != "U-TEST" || got.Level != result.LevelMust {
		t.Errorf("case fields %+v", got)
	}
	if got.Verdict != result.VerdictFail || got.Expected != "packetType 0x02" || got.Actual != "packetType 0x01" || !slices.Equal(got.Notes, []string{"4 replies checked"}) {
		t.Errorf("verdict %q expected %q actual %q notes %q", got.Verdict, got.Expected, got.Actual, got.Notes)
	}
	if len(got.Wire) != 2+result.MaxCaseWireEntries || got.WireElided != 3 {
		t.Fatalf("%d wire entries, %d elided; want %d and 3", len(got.Wire), got.WireElided, 2+result.MaxCaseWireEntries)
	}
	want := []result.WireEntry{
		{Dir: result.DirSent, Local: "127.0.0.2:40001", Peer: "127.0.0.1:8080", Hex: "0102", Note: "setup: create"},
		{Dir: result.DirRecv, Local: "127.0.0.2:40001", Peer: "127.0.0.1:8080", Hex: "03", Note: "setup"},
		{Dir: result.DirSent, Local: "127.0.0.2:40000", Peer: "127.0.0.1:8080", Hex: "01400007000000005fa3769e", Note: "LOBBY_LIST_ROOMS"},
		{Dir: result.DirRecv, Local: "127.0.0.2:40000", Peer: "127.0.0.1:8080", Hex: "ab"},
	}
	for i, w := range want {
		e := got.Wire[i]
		if e.OffsetNS < 0 {
			t.Errorf("entry %d: negative offset %v", i, e.OffsetNS)
		}
		e.OffsetNS = 0
		if e != w {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
	}

	owned := &Case{ID: "udp-lobby/6/1", Protocol: protoUDP, Level: Must, Run: func(*T) error {
		return &SkipError{Reason: "no room", Owner: "udp-lobby/7/1"}
	}}
	if got := runCase(context.Background(), newEnv(), owned); got.Verdict != result.VerdictSkip || got.Actual != "no room — judged by udp-lobby/7/1, not run" {
		t.Errorf("owned skip: %q %q", got.Verdict, got.Actual)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cut := &Case{ID: "udp-lobby/6/2", Protocol: protoUDP, Level: Should, Run: func(*T) error {
		cancel()
		return Fail("one room", "no reply")
	}}
	if got := runCase(ctx, newEnv(), cut); got.Verdict != result.VerdictSkip || got.Expected != "" ||
		got.Actual != "run interrupted during the case (it had found: expected one room, got no reply)" {
		t.Errorf("interrupted finding: %q %q %q", got.Verdict, got.Expected, got.Actual)
	}
	panics := &Case{ID: "udp-lobby/6/3", Protocol: protoUDP, Level: Info, Run: func(*T) error { panic("boom") }}
	if got := runCase(context.Background(), newEnv(), panics); got.Verdict != result.VerdictSkip || !strings.HasPrefix(got.Actual, "harness error: panic: boom") || got.Level != result.LevelInfo {
		t.Errorf("panic: %q %q", got.Verdict, got.Actual)
	}
}
