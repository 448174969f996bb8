package script

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// fakeCatalog: units are "NAME k=v k=v" with fields in the message's
// order; a field "bad" in a received unit is a violation.
type fakeCatalog struct{}

var fakeMessages = []Message{
	{Name: "CREATE", FromClient: true, Channel: "lobby", Fields: []Field{{Name: "seq", Kind: Int, Bits: 16, Auto: true}, {Name: "name", Kind: Text, Max: 8}}},
	{Name: "CREATED", Channel: "lobby", Fields: []Field{{Name: "roomId", Kind: Int, Bits: 32}, {Name: "port", Kind: Int, Bits: 16}, {Name: "crc", Kind: Int, Bits: 32, Auto: true, SendOnly: true}}},
	{Name: "JOIN", FromClient: true, Channel: "lobby", Fields: []Field{{Name: "roomId", Kind: Int, Bits: 32}, {Name: "small", Kind: Int, Bits: 8}, {Name: "open", Kind: Bool}, {Name: "blob", Kind: Bytes, Max: 2}, {Name: "rooms", Kind: List, Elem: []Field{{Name: "id", Kind: Int, Bits: 8}}}}},
	{Name: "JOINED", Channel: "lobby", Fields: []Field{{Name: "roomId", Kind: Int, Bits: 32}}},
	{Name: "FAILED", Channel: "lobby", Fields: []Field{{Name: "roomId", Kind: Int, Bits: 32}, {Name: "reason", Kind: Text}}},
	{Name: "HELLO", FromClient: true, Channel: "instance", Fields: []Field{{Name: "player", Kind: Text, Max: 16}}},
}

func (fakeCatalog) Messages() []Message { return fakeMessages }
func (fakeCatalog) NewSession(any) any  { return new(int) }
func (fakeCatalog) Encode(s any, name string, fields map[string]any) ([]byte, error) {
	seq := s.(*int)
	*seq++
	i := slices.IndexFunc(fakeMessages, func(m Message) bool { return m.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("no %s", name)
	}
	out := name
	for _, f := range fakeMessages[i].Fields {
		v, ok := fields[f.Name]
		if !ok && f.Auto {
			v, ok = *seq, true
		}
		if ok {
			out += fmt.Sprintf(" %s=%v", f.Name, v)
		}
	}
	return []byte(out), nil
}

func (fakeCatalog) Decode(_ any, _ string, b []byte) Decoded {
	parts := strings.Fields(string(b))
	if len(parts) == 0 || !slices.ContainsFunc(fakeMessages, func(m Message) bool { return m.Name == parts[0] }) {
		return Decoded{}
	}
	d := Decoded{Name: parts[0], Fields: map[string]any{}}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		if k == "stale" {
			d.Stale = true
			continue
		}
		if k == "malformed" { // answers a malformed send of kind v
			d.Stale, d.Malformed = true, v
			continue
		}
		if k == "bad" {
			d.Violations = append(d.Violations, Violation{Rule: "fake-1", Detail: v})
			continue
		}
		var u uint64
		if _, err := fmt.Sscan(v, &u); err == nil {
			d.Fields[k] = u
		} else {
			d.Fields[k] = v
		}
	}
	return d
}

// unit is a received unit, due at at.
type unit struct {
	at time.Time
	ch string
	b  string
}

// fakeTransport answers each sent unit as reply says, after its delays.
type fakeTransport struct {
	sent  []string
	queue []unit
	reply func(sent string) []delayed
}

type delayed struct {
	after time.Duration
	b     string
}

func (t *fakeTransport) Send(ch string, b []byte) (time.Time, error) {
	now := time.Now()
	t.sent = append(t.sent, ch+":"+string(b))
	if t.reply != nil {
		for _, r := range t.reply(string(b)) {
			t.queue = append(t.queue, unit{at: now.Add(r.after), ch: ch, b: r.b})
		}
	}
	slices.SortStableFunc(t.queue, func(a, b unit) int { return a.at.Compare(b.at) })
	return now, nil
}

func (t *fakeTransport) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	if len(t.queue) == 0 || t.queue[0].at.After(deadline) {
		time.Sleep(time.Until(deadline))
		return "", nil, time.Now(), os.ErrDeadlineExceeded
	}
	u := t.queue[0]
	t.queue = t.queue[1:]
	time.Sleep(time.Until(u.at))
	return u.ch, []byte(u.b), time.Now(), nil
}

// recorder keeps what a run records.
type recorder struct {
	requests   []Request
	violations []string
	fails      []string
	malformed  []string // "sent KIND", "reply KIND"
}

func (r *recorder) MalformedSent(kind string)  { r.malformed = append(r.malformed, "sent "+kind) }
func (r *recorder) MalformedReply(kind string) { r.malformed = append(r.malformed, "reply "+kind) }

func (r *recorder) Request(q Request) { r.requests = append(r.requests, q) }
func (r *recorder) Violation(k Key, v Violation) {
	r.violations = append(r.violations, fmt.Sprintf("%s %s: %s %s", k.Label, k.Message, v.Rule, v.Detail))
}
func (r *recorder) Fail(label string, err error) { r.fails = append(r.fails, err.Error()) }

// Builders of steps, at line n.

func src(n int, s string) Src { return Src{Pos: Pos{Line: n, Col: 5}, S: s} }
func ex(n int, s string) Expr { return Expr{Src: src(n, s)} }

func send(n int, msg string, kv ...string) Step {
	s := &Send{Message: src(n, msg)}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Fields = append(s.Fields, SetField{Name: src(n, kv[i]), Value: src(n, kv[i+1])})
	}
	return Step{Pos: Pos{Line: n}, Label: "send", Send: s}
}

func expect(n int, within time.Duration, where string, msgs ...string) Step {
	e := &Expect{Within: within, Where: ex(n, where)}
	for _, m := range msgs {
		if m == "any" {
			e.Any = true
			continue
		}
		e.Messages = append(e.Messages, src(n, m))
	}
	return Step{Pos: Pos{Line: n}, Label: "expect", Expect: e}
}

func capture(st Step, kv ...string) Step {
	for i := 0; i+1 < len(kv); i += 2 {
		st.Expect.Capture = append(st.Expect.Capture, Capture{Var: src(st.Line, kv[i]), Field: src(st.Line, kv[i+1])})
	}
	return st
}

func block(steps ...Step) *Block { return &Block{Steps: steps} }
