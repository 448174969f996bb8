package script

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// tmplPart is a piece of a field's value: literal text, or a variable.
type tmplPart struct{ text, variable string }

// parseTemplate splits s at its ${name}s.
func parseTemplate(s string) ([]tmplPart, error) {
	var out []tmplPart
	for s != "" {
		i := strings.Index(s, "${")
		if i < 0 {
			return append(out, tmplPart{text: s}), nil
		}
		if i > 0 {
			out = append(out, tmplPart{text: s[:i]})
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("%q opens ${ without its }", s)
		}
		name := s[i+2 : i+j]
		if !identRE.MatchString(name) {
			return nil, fmt.Errorf("${%s} is not a variable name (letters, digits, _)", name)
		}
		out = append(out, tmplPart{variable: name})
		s = s[i+j+1:]
	}
	return out, nil
}

// maxOf is the largest value of an Int field.
func maxOf(f Field) uint64 {
	if f.Bits <= 0 || f.Bits >= 64 {
		return 1<<64 - 1
	}
	return 1<<f.Bits - 1
}

// convert reads s as a value of f's kind, in its range.
func convert(f Field, s string) (any, error) {
	switch f.Kind {
	case Int:
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("is an integer (0-%d), not %q", maxOf(f), s)
		}
		return checkInt(f, v)
	case Text:
		return checkLen(f, s, len(s))
	case Bool:
		b, err := strconv.ParseBool(s)
		if err != nil || (s != "true" && s != "false") {
			return nil, fmt.Errorf("is true or false, not %q", s)
		}
		return b, err
	case Bytes:
		b, err := decodeHex(s)
		if err != nil {
			return nil, err
		}
		return checkLen(f, b, len(b))
	}
	return nil, fmt.Errorf("is a %s: not settable", f.Kind)
}

func checkInt(f Field, v uint64) (any, error) {
	if v > maxOf(f) {
		return nil, fmt.Errorf("%d is out of range (0-%d, %d bits)", v, maxOf(f), f.Bits)
	}
	return v, nil
}

func checkLen[T any](f Field, v T, n int) (any, error) {
	if f.Max > 0 && n > f.Max {
		return nil, fmt.Errorf("is %d bytes, over its %d", n, f.Max)
	}
	return v, nil
}

// decodeHex reads hex bytes; spaces between them are allowed.
func decodeHex(s string) ([]byte, error) {
	t := strings.ReplaceAll(s, " ", "")
	b, err := hex.DecodeString(t)
	if err != nil {
		return nil, fmt.Errorf("%q is not hex bytes (pairs of 0-9a-f): %v", s, err)
	}
	return b, nil
}

// zero is a value of f's kind, which types f in an expression.
func zero(f Field) any {
	switch f.Kind {
	case Int:
		return uint64(0)
	case Text:
		return ""
	case Bool:
		return false
	case Bytes:
		return []byte{}
	}
	return []map[string]any{}
}

// resolve is field f's value given its template and the variables.
func (f *SetField) resolve(vars Vars) (any, error) {
	if f.parts == nil {
		return f.val, nil
	}
	if f.field.Kind != Text {
		v, _ := vars.Get(f.parts[0].variable)
		if u, ok := v.(uint64); ok {
			return checkInt(*f.field, u)
		}
		return v, nil
	}
	var b strings.Builder
	for _, p := range f.parts {
		if p.variable == "" {
			b.WriteString(p.text)
			continue
		}
		v, _ := vars.Get(p.variable)
		switch v := v.(type) {
		case []byte:
			b.WriteString(hex.EncodeToString(v))
		default:
			fmt.Fprint(&b, v)
		}
	}
	return checkLen(*f.field, b.String(), b.Len())
}
