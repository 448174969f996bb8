package script

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckBadInput: every problem Check finds is reported at its line
// (and, for an expression, its column), naming it.
func TestCheckBadInput(t *testing.T) {
	raw := func(n int, to, hex string) Step {
		return Step{Pos: Pos{Line: n}, Send: &Send{Raw: src(n, hex), To: src(n, to)}}
	}
	for _, tc := range []struct {
		name string
		b    *Block
		line int
		col  int // 0: not exact
		want string
		near string // the name of a did-you-mean
	}{
		{"unknown message", block(send(3, "CRATE")), 3, 0, `unknown message "CRATE"`, "CRATE"},
		{"unknown field", block(send(4, "JOIN", "roomid", "1")), 4, 0, `JOIN has no field "roomid"`, "roomid"},
		{"server message sent", block(send(2, "CREATED")), 2, 0, "CREATED is a server's message", ""},
		{"type mismatch", block(send(5, "JOIN", "roomId", "abc")), 5, 0, `JOIN.roomId: is an integer (0-4294967295), not "abc"`, ""},
		{"out of range", block(send(5, "JOIN", "small", "256")), 5, 0, "256 is out of range (0-255, 8 bits)", ""},
		{"text too long", block(send(5, "CREATE", "name", "ninechars")), 5, 0, "is 9 bytes, over its 8", ""},
		{"not a bool", block(send(5, "JOIN", "open", "yes")), 5, 0, `is true or false, not "yes"`, ""},
		{"bytes too long", block(send(5, "JOIN", "blob", "010203")), 5, 0, "is 3 bytes, over its 2", ""},
		{"list not settable", block(send(5, "JOIN", "rooms", "1")), 5, 0, "is a list: a send cannot set it", ""},
		{"field twice", block(send(5, "JOIN", "roomId", "1", "roomId", "2")), 5, 0, "field roomId is given twice", ""},
		{"capture before set", block(send(6, "JOIN", "roomId", "${room}")), 6, 0, `variable "room" is not set before this step`, ""},
		{"variable of another kind", block(capture(expect(2, 0, "", "FAILED"), "why", "reason"), send(6, "JOIN", "roomId", "${why}")), 6, 0, "JOIN.roomId is integer but ${why} is text", ""},
		{"text around a variable in an int", block(send(6, "JOIN", "roomId", "1${client}")), 6, 0, "only a text field takes text around", ""},
		{"bad variable name", block(send(6, "JOIN", "roomId", "${a-b}")), 6, 0, "${a-b} is not a variable name", ""},
		{"unclosed variable", block(send(6, "JOIN", "roomId", "${room")), 6, 0, "opens ${ without its }", ""},
		{"raw not hex", block(raw(7, "", "00zz")), 7, 0, `raw: "00zz" is not hex bytes`, ""},
		{"raw odd length", block(raw(7, "", "0ff")), 7, 0, "is not hex bytes", ""},
		{"unknown channel", block(raw(7, "lobbby", "00")), 7, 0, `to: unknown channel "lobbby"`, "lobbby"},
		{"unknown expected", block(expect(8, 0, "", "CRATED")), 8, 0, `unknown message "CRATED"`, "CRATED"},
		{"client message expected", block(expect(8, 0, "", "JOIN")), 8, 0, "JOIN is a client's message", ""},
		{"where does not compile", block(expect(9, 0, "roomId > 0 &&", "CREATED")), 9, 5 + 12, `expression "roomId > 0 &&": unexpected token EOF`, ""},
		{"where unknown field", block(expect(9, 0, "roomid > 0", "CREATED")), 9, 5, "unknown name roomid", ""},
		{"where type error", block(expect(9, 0, "port == 'x'", "CREATED")), 9, 5 + 5, "invalid operation: == (mismatched types uint64 and string)", ""},
		{"where not bool", block(expect(9, 0, "port + 1", "CREATED")), 9, 5, "expected bool", ""},
		{"where on a field not common", block(expect(9, 0, "reason == ''", "JOINED", "FAILED")), 9, 5, "unknown name reason", ""},
		{"capture not common", block(capture(expect(10, 0, "", "JOINED", "FAILED"), "r", "reason")), 10, 0, `capture r: "reason" is not a field of every message expected`, "reason"},
		{"where on framing", block(expect(9, 0, "crc == 0", "CREATED")), 9, 5, "unknown name crc", ""},
		{"capture framing", block(capture(expect(10, 0, "", "CREATED"), "c", "crc")), 10, 0, "capture c: crc is framing: a send may set it on purpose", ""},
		{"capture a builtin", block(capture(expect(10, 0, "", "CREATED"), "client", "roomId")), 10, 0, "capture: client is always set", ""},
		{"capture bad name", block(capture(expect(10, 0, "", "CREATED"), "a b", "roomId")), 10, 0, `"a b" is not a variable name`, ""},
		{"if uses an unset capture", block(Step{Pos: Pos{Line: 11}, If: &If{Cond: ex(11, "got == 'x'")}}), 11, 5, "unknown name got", ""},
		{"capture of one branch only", block(
			Step{Pos: Pos{Line: 11}, If: &If{Cond: ex(11, "client > 0"), Then: *block(capture(expect(12, 0, "", "CREATED"), "room", "roomId"))}},
			send(13, "JOIN", "roomId", "${room}")), 13, 0, `variable "room" is not set`, ""},
		{"capture of a while body", block(
			Step{Pos: Pos{Line: 11}, Repeat: &Repeat{While: ex(11, "true"), Max: 3, Body: *block(capture(expect(12, 0, "", "CREATED"), "room", "roomId"))}},
			send(13, "JOIN", "roomId", "${room}")), 13, 0, `variable "room" is not set`, ""},
		{"while on its body's capture", block(
			Step{Pos: Pos{Line: 11}, Repeat: &Repeat{While: ex(11, "room > 0"), Max: 3, Body: *block(capture(expect(12, 0, "", "CREATED"), "room", "roomId"))}}),
			11, 5, "unknown name room", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(fakeCatalog{}, tc.b, NewScope())
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("got %v, want one error", err)
			}
			e := es[0]
			if e.Line != tc.line || !strings.Contains(e.Msg, tc.want) || e.Exact != (tc.col > 0) || (tc.col > 0 && e.Col != tc.col) {
				t.Fatalf("got %d:%d (exact %v) %q\nwant %d:%d %q", e.Line, e.Col, e.Exact, e.Msg, tc.line, tc.col, tc.want)
			}
			if e.Name != tc.near || (tc.near != "" && len(e.Names) == 0) {
				t.Fatalf("did-you-mean name %q among %v, want %q", e.Name, e.Names, tc.near)
			}
		})
	}
}

// TestCheckGood: the brief's example flow, captures carried across
// blocks (steps of one flow) through the scope, is clean.
func TestCheckGood(t *testing.T) {
	sc := NewScope()
	for i, b := range []*Block{
		block(send(1, "CREATE")),
		block(capture(expect(2, 0, "roomId > 0 && port > 0", "CREATED"), "room", "roomId")),
		block(send(3, "JOIN", "roomId", "${room}", "open", "true", "blob", "0a0b")),
		block(capture(expect(4, 0, "message == 'JOINED' || roomId == room", "JOINED", "FAILED"), "got", "message", "id", "roomId")),
		block(Step{Pos: Pos{Line: 5}, If: &If{Cond: ex(5, "got == 'FAILED'"), Then: *block(Step{Call: &Call{Value: 1}})}}),
		block(Step{Pos: Pos{Line: 6}, Repeat: &Repeat{Count: 2, Body: *block(send(7, "CREATE", "name", "p${client}"), expect(8, 0, "", "any"))}}),
		block(send(9, "JOIN", "roomId", "${id}", "small", "0x10")),
	} {
		if err := Check(fakeCatalog{}, b, sc); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
	}
	if !sc.Has("room") || !sc.Has("got") {
		t.Fatal("captures not in scope after their steps")
	}
}
