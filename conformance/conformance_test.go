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
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, id string
		want        bool
	}{
		{"udp", "udp/5/2", true},     // group prefix
		{"udp/5", "udp/5/2", true},   // section prefix
		{"udp/1", "udp/13/2", false}, // segments, not characters
		{"udp/13", "udp/13/10", true},
		{"udp/5/2", "udp/5/2", true}, // exact
		{"udp/5/2", "udp/5/20", false},
		{"udp/5/2/x", "udp/5/2", false}, // longer than the id
		{"udp/1*", "udp/13/2", true},    // glob within a segment
		{"udp/1*", "udp/5/1", false},
		{"*/5/*", "udp/5/3", true}, // any group
		{"*/5/*", "tcp/5.1/3", false},
		{"tcp/5.*", "tcp/5.1/3", true},
		{"inst", "udp/2/1", false},
		{" udp/4 ", "udp/4/1", true},  // spaces trimmed
		{"udp/4/", "udp/4/1", true},   // trailing slash
		{"", "udp/4/1", false},        // empty selects nothing
		{"tcp/[", "tcp/5.1/1", false}, // bad glob
		{"tcp/R", "tcp/R/2", true},
		{"tcp/A/1", "tcp/A/1", true},
		{"leviathan*", "leviathan/3/1", true},
		{"udp/13/?", "udp/13/9", true},
		{"udp/13/?", "udp/13/10", false},
		{"udp/*/1", "udp/13/1", true},
		{"*", "udp/13/1", true},
		{"udp/13/1*", "udp/13/10", true},
		{"udp/13/1*", "udp/13/2", false},
		{"udp/13/1,udp/4", "udp/13/1", false}, // commas are the CLI's business
		{"UDP", "udp/13/1", false},            // case matters
		{"udp/5/2 ", "udp/5/2", true},
		{"udp//5", "udp/5/2", false},
		{"inst/2", "inst/2/9", true},
		{"inst/2/*", "inst/2/9", true},
		{"inst/2/[1-3]", "inst/2/2", true},
		{"inst/2/[1-3]", "inst/2/4", false},
		{"tcp/7.1", "tcp/7.1/4", true},
		{"tcp/7", "tcp/7.1/4", false}, // 7 is not 7.1
		{"tcp/7*", "tcp/7.1/4", true},
		{"tcp/*/1", "tcp/2.2/1", true},
		{"tcp/*/1", "tcp/2.2/2", false},
		{"udp/14", "udp/14/3", true},
		{"udp/4", "udp/14/3", false},
		{"udp/4*", "udp/14/3", false},
		{"udp/*4", "udp/14/3", true},
		{"udp/14/3/", "udp/14/3", true},
		{"/udp/14/3", "udp/14/3", true}, // leading slash
		{"tcp", "udp/14/3", false},
		{"udp/10", "udp/10/5", true},
		{"udp/10/5", "udp/10/5", true},
		{"udp/10/6", "udp/10/5", false},
		{"udp/9", "udp/9/1", true},
		{"udp/9", "udp/99/1", false},
		{"udp/9?", "udp/99/1", true},
		{"udp/3/[^1]", "udp/3/2", true},
		{"udp/3/[^1]", "udp/3/1", false},
		{"u*/3", "udp/3/1", true},
		{"u*", "udp/3/1", true},
		{"x*", "udp/3/1", false},
		{"udp/3/1", "udp/3/1", true},
		{"udp/3/1", "inst/3/1", false},
		{"udp/3", "inst/3/1", false},
		{"inst/2/1", "inst/2/10", false},
		{"inst/2/1*", "inst/2/10", true},
		{"inst/2/1?", "inst/2/10", true},
		{"inst/2/1?", "inst/2/1", false},
		{"inst/2/1", "inst/2/1", true},
		{"tcp/5.1/7", "tcp/5.1/7", true},
		{"tcp/5.1/*", "tcp/5.1/7", true},
		{"tcp/5.1", "tcp/5.1/7", true},
		{"tcp/5", "tcp/5.1/7", false},
		{"tcp/5*", "tcp/5.1/7", true},
		{"tcp/5.1/7", "tcp/5.1/77", false},
		{"tcp/5.1/7*", "tcp/5.1/77", true},
		{"tcp/5.1/7?", "tcp/5.1/77", true},
		{"tcp/5.1/7?", "tcp/5.1/7", false},
		{"tcp/5.1/[7]", "tcp/5.1/7", true},
		{"tcp/5.1/[^7]", "tcp/5.1/7", false},
		{"tcp/5.1/[^7]", "tcp/5.1/6", true},
		{"tcp/5.1/\\7", "tcp/5.1/7", true},  // escaped
		{"tcp/5.1/\\*", "tcp/5.1/7", false}, // escaped star is literal
		{"tcp/5.1/*/x", "tcp/5.1/7", false},
		{"**", "tcp/5.1/7", true},
		{"*/*/*", "tcp/5.1/7", true},
		{"*/*/*/*", "tcp/5.1/7", false},
		{"*/*", "tcp/5.1/7", true},
		{"?cp", "tcp/5.1/7", true},
		{"tcp/5.1/7", "udp/5.1/7", false},
		{"tcp", "tcp/5.1/7", true},
		{"tc", "tcp/5.1/7", false},
		{"tcp/", "tcp/5.1/7", true},
		{"tcp//", "tcp/5.1/7", true}, // trailing slashes trimmed            //
		{"tcp/5.1//", "tcp/5.1/7", true},
		{"tcp/5.1/7//", "tcp/5.1/7", true},
		{"  ", "tcp/5.1/7", false},
		{"/", "tcp/5.1/7", false},
		{"//", "tcp/5.1/7", false},
		{"udp/13/1", "udp/13/1", true},
		{"udp/13/01", "udp/13/1", false}, // ids are not numbers
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.id); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.id, got, tt.want)
		}
	}
}

func TestValidPattern(t *testing.T) {
	for _, p := range []string{"udp", "udp/1*", "*/5/*", "tcp/5.1/[1-3]"} {
		if err := ValidPattern(p); err != nil {
			t.Errorf("ValidPattern(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", " ", "/", "tcp/[", "udp/\\"} {
		if err := ValidPattern(p); err == nil {
			t.Errorf("ValidPattern(%q) = nil, want an error", p)
		}
	}
}

func TestCompareIDs(t *testing.T) {
	want := []string{"inst/2/1", "inst/2/9", "inst/2/10", "tcp/2.2/1", "tcp/5.1/2", "tcp/5.1/10", "tcp/5.2/1", "tcp/A/1", "tcp/R/1",
		"udp/3/1", "udp/5/2", "udp/5/10", "udp/13/1", "udp/13/2", "udp/13/10", "udp/14/1"}
	got := append([]string(nil), want...)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sortIDs(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("sorted %v, want %v", got, want)
		}
	}
	if CompareIDs("udp/5/2", "udp/5/2") != 0 {
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
		want  Verdict
		act   string
	}{
		{"pass", Must, nil, Pass, ""},
		{"info passes as info", Info, nil, InfoVerdict, ""},
		{"must broken fails", Must, Fail("x", "y"), FailVerdict, "y"},
		{"should broken warns", Should, Fail("x", "y"), Warn, "y"},
		{"info broken informs", Info, Fail("x", "y"), InfoVerdict, "y"},
		{"level override", Must, Warnf("x", "y%d", 1), Warn, "y1"},
		{"wrapped verify error", Must, fmt.Errorf("ctx: %w", Fail("x", "z")), FailVerdict, "z"},
		{"skip", Must, Skipf("no %s", "room"), Skip, "no room"},
		{"harness error skips", Must, errors.New("bind: boom"), Skip, "harness error: bind: boom"},
		{"precondition failure skips", Must, precondition("setup", Fail("a", "b")), Skip, "setup: expected a, got b"},
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
	prefixes := map[string][]string{ProtoUDP: {"udp/", "inst/"}, ProtoTCP: {"tcp/"}}
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
		if _, ok := lookupProtocol(c.Protocol); !ok {
			t.Errorf("%s belongs to unregistered protocol %q", c.ID, c.Protocol)
		}
	}
	if n[ProtoUDP] < 40 || n[ProtoTCP] < 20 {
		t.Errorf("cases per protocol %v", n)
	}
	mustPanic := func(name string, c *Case) {
		defer func() {
			if recover() == nil {
				t.Errorf("Register(%s) did not panic", name)
			}
		}()
		Register(c)
	}
	run := func(*T) error { return nil }
	mustPanic("duplicate", &Case{ID: "udp/3/1", Protocol: ProtoUDP, Level: Must, Run: run})
	mustPanic("two segments", &Case{ID: "udp/3", Protocol: ProtoUDP, Level: Must, Run: run})
	mustPanic("no run", &Case{ID: "udp/99/1", Protocol: ProtoUDP, Level: Must})
	mustPanic("no level", &Case{ID: "udp/99/2", Protocol: ProtoUDP, Run: run})
}

func TestConfigValidate(t *testing.T) {
	cfg := Config{Protocol: "smtp", Patterns: []string{"tcp/["}, Timeout: -1}
	errs := cfg.Validate()
	if len(errs) != 4 {
		t.Errorf("Validate() = %v, want 4 problems (target, protocol, pattern, timeout)", errs)
	}
	if _, err := Run(context.Background(), Config{Target: "127.0.0.1:1", Patterns: []string{"nothing/here"}}); err == nil {
		t.Error("Run with no matching case succeeded")
	}
}

// sampleReport is a report with one result of each verdict, for the golden
// files of every output format.
func sampleReport() *Report {
	c := func(id, section, desc string, l Level) *Case {
		return &Case{ID: id, Protocol: ProtoUDP, Section: section, Desc: desc, Requirement: "the quoted sentence of " + id, Level: l, Rule: "U-TEST"}
	}
	wire := []WireEntry{
		{Dir: Sent, Offset: 120 * time.Microsecond, Local: "127.0.0.2:40000", Peer: "127.0.0.1:8080", Data: udplobby.AppendListRooms(nil, udplobby.ProfileSpec, 7), Note: "LOBBY_LIST_ROOMS"},
		{Dir: Received, Offset: 450 * time.Microsecond, Local: "127.0.0.2:40000", Peer: "127.0.0.1:8080", Data: bytes.Repeat([]byte{0xAB}, 40)},
	}
	return &Report{
		Target: "127.0.0.1:8080", Protocol: ProtoUDP, Notes: []string{"header spec, guessed from the first reply"},
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Duration: 1234 * time.Millisecond,
		Results: []Result{
			{Case: c("udp/3/1", secPacket, "a passing case", Must), Verdict: Pass, Notes: []string{"4 replies checked"}, Duration: time.Millisecond},
			{Case: c("udp/3/2", secPacket, "a failing case", Must), Verdict: FailVerdict, Expected: "packetType 0x02", Actual: "packetType 0x01", Duration: 2 * time.Millisecond, Wire: wire, WireElided: 3},
			{Case: c("udp/6/2", secCreateRoom, "a warning", Should), Verdict: Warn, Expected: "one room", Actual: "two rooms", Duration: 3 * time.Millisecond, Wire: wire[:1]},
			{Case: c("udp/14/3", secSecurity, "an informational case", Info), Verdict: InfoVerdict, Notes: []string{"accepted 100/s"}, Duration: 4 * time.Millisecond},
			{Case: c("udp/7/2", secRoomCreated, "a skipped case", Must), Verdict: Skip, Actual: "no --instance-ports given"},
		},
	}
}

func TestOutputsGolden(t *testing.T) {
	r := sampleReport()
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"report.txt", func(b *bytes.Buffer) error { return WriteText(b, r, TextOptions{}) }},
		{"report-quiet.txt", func(b *bytes.Buffer) error { return WriteText(b, r, TextOptions{Quiet: true}) }},
		{"report.json", func(b *bytes.Buffer) error { return WriteJSON(b, r) }},
		{"report.junit.xml", func(b *bytes.Buffer) error { return WriteJUnit(b, r) }},
		{"report.md", func(b *bytes.Buffer) error { return WriteMarkdown(b, r) }},
		{"list.txt", func(b *bytes.Buffer) error { return WriteList(b, Cases(ProtoUDP, "udp/13", "inst/2/1")) }},
	} {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		golden.Check(t, filepath.Join("testdata", f.name), b.Bytes())
	}
}

// TestJSONRoundTrip checks the JSON document reads back through the
// reports package with every verdict and the wire log intact.
func TestJSONRoundTrip(t *testing.T) {
	r := sampleReport()
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	c, err := reports.ReadConform(&b)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Summary()
	if s.Total != 5 || s.Pass != 1 || s.Fail != 1 || s.Warn != 1 || s.Info != 1 || s.Skip != 1 {
		t.Errorf("summary %+v", s)
	}
	if got := c.Cases[1].Wire; len(got) != 2 || got[0].Dir != reports.DirSent || got[0].Hex != fmt.Sprintf("%x", r.Results[1].Wire[0].Data) {
		t.Errorf("wire log %+v", got)
	}
	if got := c.Cases[1].Wire; len(got) != 2 || got[0].Local != "127.0.0.2:40000" || got[0].Peer != "127.0.0.1:8080" || got[0].Note != "LOBBY_LIST_ROOMS" ||
		got[1].Note != "" || c.Cases[1].WireElided != 3 {
		t.Errorf("wire entry addresses/notes %+v, elided %d", got, c.Cases[1].WireElided)
	}
	// Notes and rule ids have their own fields, not folded into Actual and
	// Description.
	if c.Cases[0].Actual != "" || !slices.Equal(c.Cases[0].Notes, []string{"4 replies checked"}) || c.Cases[4].Actual != "no --instance-ports given" {
		t.Errorf("case 0 actual %q notes %q, case 4 actual %q", c.Cases[0].Actual, c.Cases[0].Notes, c.Cases[4].Actual)
	}
	if c.Cases[1].Rule != "U-TEST" || c.Cases[1].Description != "a failing case" {
		t.Errorf("rule %q, description %q", c.Cases[1].Rule, c.Cases[1].Description)
	}
	if !slices.Equal(c.Notes, []string{"header spec, guessed from the first reply"}) {
		t.Errorf("run notes %q", c.Notes)
	}
}

func TestReportFailed(t *testing.T) {
	r := sampleReport()
	if !r.Failed() {
		t.Error("a report with a failure did not fail")
	}
	r.Results = r.Results[2:] // warning, info, skip
	if r.Failed() {
		t.Error("a warning failed a non-strict run")
	}
	r.Strict = true
	if !r.Failed() {
		t.Error("a warning did not fail a strict run")
	}
}

// FuzzParseRaw feeds arbitrary datagrams to every reader of untrusted bytes
// the UDP cases use: none may panic.
func FuzzParseRaw(f *testing.F) {
	f.Add(udplobby.AppendListRooms(nil, udplobby.ProfileSpec, 1))
	b, _ := udplobby.AppendRoomList(nil, udplobby.ProfileSpec, 2, []udplobby.Room{{ID: 1, Players: 1, MaxPlayers: 4, Port: 9000}})
	f.Add(b)
	f.Add(udplobby.AppendRoomCreated(nil, udplobby.ProfileRType17, 3, 1, 9000))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		crcDiagnosis(b)
		for _, p := range udplobby.Profiles {
			m, ok := parseRaw(b, p)
			if !ok {
				continue
			}
			m.rooms()
			m.roomRef()
			_ = m.String()
			listDiagnosis(p, m)
		}
	})
}
