package script

import (
	"slices"
	"testing"
)

// TestVars: the table sets a variable once (a capture of a name set
// before replaces its value), finds what is set and nothing else, and
// WithBuiltins starts it again with the builtins, named as Builtins names
// them, in its own array.
func TestVars(t *testing.T) {
	v := make(Vars, 0, 6).WithBuiltins(1, 2, 3, 4)
	var names []string
	for _, x := range v {
		names = append(names, x.Name)
	}
	if !slices.Equal(names, Builtins) {
		t.Fatalf("WithBuiltins names %v, Builtins %v", names, Builtins)
	}
	v.Set("room", uint64(7))
	v.Set("room", uint64(8))
	v.Set("client", uint64(9))
	for _, tc := range []struct {
		name string
		want any // nil: not set
	}{{"session", uint64(1)}, {"client", uint64(9)}, {"shard", uint64(4)}, {"room", uint64(8)}, {"nope", nil}} {
		if got, ok := v.Get(tc.name); got != tc.want || ok != (tc.want != nil) {
			t.Errorf("Get(%q) = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
	if len(v) != 5 || cap(v) != 6 {
		t.Errorf("%d variables in a table of %d: want 5 in the 6 made", len(v), cap(v))
	}
	if w := v.WithBuiltins(5, 6, 7, 8); len(w) != 4 || &w[0] != &v[0] {
		t.Errorf("WithBuiltins again: %d variables, same array %v", len(w), &w[0] == &v[0])
	}

	// A renewed client sets a new session number each time, and often a
	// new group: kept in their cells, they allocate nothing until
	// something reads them, and then once.
	n := uint64(1000)
	v = v.WithBuiltins(n, 2000, n, 4)
	if a := testing.AllocsPerRun(100, func() { n++; v = v.WithBuiltins(n, 2000, n, 4) }); a != 0 {
		t.Errorf("WithBuiltins of numbers past 255 allocates %v times, want 0", a)
	}
	if got, _ := v.Get("session"); got != any(n) {
		t.Errorf("session read %v, want %d", got, n)
	}
	if a := testing.AllocsPerRun(100, func() { _, _ = v.Get("session") }); a != 0 {
		t.Errorf("reading session again allocates %v times, want 0 (boxed once)", a)
	}
	if w := v.WithBuiltins(n+1, 2000, 3, 4); func() any { x, _ := w.Get("session"); return x }() != any(n+1) {
		t.Errorf("after a read, the next client's session is not %d", n+1)
	}
	v = v.WithBuiltins(n+2, 2000, 3, 4)
	if m := (&Env{Vars: v}).varsMap(); m["client"] != any(uint64(2000)) || m["session"] != any(n+2) {
		t.Errorf("an expression reads client %v and session %v, want 2000 and %d", m["client"], m["session"], n+2)
	}
}
