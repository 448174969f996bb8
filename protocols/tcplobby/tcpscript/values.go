package tcpscript

import (
	"fmt"
	"math/bits"
)

// in reads a send's fields, the loader's values (uint64, string, bool,
// []byte, []map[string]any), keeping the first error: a field not given
// reads as its zero value.
type in struct {
	f    map[string]any
	at   string // the list entry read ("rooms[2]."), for errors
	err  error
	seen bool // the last field read was given
}

func (r *in) get(name string) any {
	v, ok := r.f[name]
	r.seen = ok
	if !ok {
		return nil
	}
	return v
}

func (r *in) fail(name, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("field %s%s: %s", r.at, name, fmt.Sprintf(format, args...))
	}
}

// uint reads an Int of width bits.
func (r *in) uint(name string, width int) uint64 {
	v := r.get(name)
	if v == nil {
		return 0
	}
	n, ok := toUint(v)
	if !ok {
		r.fail(name, "want a non-negative integer, got %T %v", v, v)
		return 0
	}
	if width < 64 && bits.Len64(n) > width {
		r.fail(name, "%d does not fit in %d bits", n, width)
		return 0
	}
	return n
}

func toUint(v any) (uint64, bool) {
	switch n := v.(type) {
	case uint64:
		return n, true
	case uint:
		return uint64(n), true
	case uint32:
		return uint64(n), true
	case uint16:
		return uint64(n), true
	case uint8:
		return uint64(n), true
	case int:
		return uint64(n), n >= 0
	case int64:
		return uint64(n), n >= 0
	}
	return 0, false
}

// text reads a Text of at most max bytes.
func (r *in) text(name string, max int) string {
	v := r.get(name)
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.fail(name, "want text, got %T", v)
		return ""
	}
	if len(s) > max {
		r.fail(name, "%d bytes, at most %d", len(s), max)
		return ""
	}
	return s
}

// chars writes a Text into a char[N] field dst, zero-padded: a text of
// len(dst) bytes has no NUL, on purpose.
func (r *in) chars(dst []byte, name string) {
	clear(dst)
	copy(dst, r.text(name, len(dst)))
}

func (r *in) flag(name string) bool {
	v := r.get(name)
	if v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		r.fail(name, "want true or false, got %T", v)
	}
	return b
}

func (r *in) raw(name string, max int) []byte {
	v := r.get(name)
	if v == nil {
		return nil
	}
	b, ok := v.([]byte)
	if !ok {
		r.fail(name, "want bytes, got %T", v)
		return nil
	}
	if len(b) > max {
		r.fail(name, "%d bytes, at most %d", len(b), max)
		return nil
	}
	return b
}

// list reads a List of at most max entries, each read by entry.
func (r *in) list(name string, max int, entry func(i int, e *in)) int {
	v := r.get(name)
	if v == nil {
		return 0
	}
	l, ok := v.([]map[string]any)
	if !ok {
		r.fail(name, "want a list of records, got %T", v)
		return 0
	}
	if len(l) > max {
		r.fail(name, "%d entries, at most %d", len(l), max)
		return 0
	}
	for i, f := range l {
		e := &in{f: f, at: fmt.Sprintf("%s%s[%d].", r.at, name, i)}
		entry(i, e)
		if e.err != nil && r.err == nil {
			r.err = e.err
		}
	}
	return len(l)
}

// count reads an Auto count: the one given, or n; given, it returns
// the fix that writes it at payload offset off after the listed entries
// were encoded.
func (r *in) count(name string, n, off int) (uint8, func([]byte)) {
	c := r.uint(name, 8)
	if !r.seen {
		return uint8(n), nil
	}
	return uint8(n), func(p []byte) { p[off] = byte(c) }
}
