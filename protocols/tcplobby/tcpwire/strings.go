package tcpwire

import (
	"bytes"
	"unicode/utf8"
)

// Name is a char[32] field (player or room name) exactly as on the wire:
// NUL-terminated, zero-padded. Holding the raw bytes keeps decoding
// allocation-free and round trips exact; use MakeName to build one and
// String to read one.
type Name [NameSize]byte

// IP is the char[16] ServerIP field of GameStartInfo, raw as on the wire.
type IP [IPSize]byte

// MakeName returns s as a wire Name: truncated on a UTF-8 rune boundary to
// at most 31 bytes so that a terminating NUL always remains, zero-padded.
func MakeName(s string) Name {
	var n Name
	putString(n[:], s)
	return n
}

// MakeIP returns s as a wire IP field, truncated like MakeName to 15 bytes.
func MakeIP(s string) IP {
	var ip IP
	putString(ip[:], s)
	return ip
}

// String returns the bytes before the first NUL (all 32 when unterminated,
// which only a lenient decode lets through). It allocates.
func (n Name) String() string { return cString(n[:]) }

// String returns the bytes before the first NUL.
func (ip IP) String() string { return cString(ip[:]) }

// Terminated reports whether the field holds a NUL.
func (n Name) Terminated() bool { return bytes.IndexByte(n[:], 0) >= 0 }

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// putString writes s into dst (zeroed first), truncated so that at least one
// NUL remains and the kept prefix does not end inside a multi-byte rune. A NUL
// inside s ends the string there, as a C reader would.
func putString(dst []byte, s string) {
	clear(dst)
	max := len(dst) - 1
	if len(s) > max {
		s = truncateRunes(s, max)
	}
	copy(dst, s)
}

// truncateRunes returns a prefix of s of at most max bytes that does not
// split a UTF-8 encoded rune: when s[max] is a continuation byte the cut moves
// back to the start of its rune (at most 3 bytes; stray continuation bytes of
// invalid input are dropped the same way).
func truncateRunes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && max-i < utf8.UTFMax-1 && !utf8.RuneStart(s[i]) {
		i--
	}
	if !utf8.RuneStart(s[i]) {
		i = max // invalid run of continuation bytes: plain byte cut
	}
	return s[:i]
}

// checkString validates a char[N] field at payload offset off.
func checkString(b []byte, t Type, off int, o *Options) error {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		if o.Lenient {
			return nil
		}
		return errf(RuleStringUnterminated, t, off, "%d-byte string has no terminating NUL", len(b))
	}
	if o.Pedantic {
		for j := i + 1; j < len(b); j++ {
			if b[j] != 0 {
				return errf(RuleStringPadding, t, off+j, "non-zero byte 0x%02x after the NUL", b[j])
			}
		}
	}
	return nil
}
