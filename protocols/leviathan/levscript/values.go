package levscript

import "fmt"

// values reads a send's fields, each of the Go type script.Decoded uses for
// its kind (uint64, string, bool, []byte). The first field of another
// type sticks as err; later reads return their defaults.
type values struct {
	m   map[string]any
	err error
}

func (v *values) get(name string) (any, bool) {
	x, ok := v.m[name]
	return x, ok && v.err == nil
}

func (v *values) wrong(name string, x any, want string) {
	v.err = fmt.Errorf("leviathan: field %s is %T, want %s", name, x, want)
}

func (v *values) uint(name string, def uint64) uint64 {
	x, ok := v.get(name)
	if !ok {
		return def
	}
	n, ok := x.(uint64)
	if !ok {
		v.wrong(name, x, "an integer (uint64)")
		return def
	}
	return n
}

// i32 reads an i32 given as its 32 bits (an Int of 32 bits).
func (v *values) i32(name string, def int32) int32 {
	return int32(uint32(v.uint(name, uint64(uint32(def)))))
}

func (v *values) u8(name string, def uint8) uint8 { return uint8(v.uint(name, uint64(def))) }

func (v *values) u32(name string, def uint32) uint32 { return uint32(v.uint(name, uint64(def))) }

func (v *values) str(name, def string) []byte {
	x, ok := v.get(name)
	if !ok {
		return []byte(def)
	}
	s, ok := x.(string)
	if !ok {
		v.wrong(name, x, "text (string)")
		return []byte(def)
	}
	return []byte(s)
}

func (v *values) boolean(name string, def bool) bool {
	x, ok := v.get(name)
	if !ok {
		return def
	}
	b, ok := x.(bool)
	if !ok {
		v.wrong(name, x, "a bool")
		return def
	}
	return b
}

// i32 is an i32 as a decoded Int: its 32 bits.
func i32(n int32) uint64 { return uint64(uint32(n)) }
