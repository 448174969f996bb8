package scenario

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxExpandedValue bounds one value once its environment variables are
// substituted: a variable holds at most what a scenario's field could
// use, and the substitution cannot grow the plan past what its file could
// have said.
const maxExpandedValue = 64 << 10

// envName is a variable's name: what a shell takes.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expandEnv substitutes ${env.NAME} and ${env.NAME:-default} in every
// value of the document (not in keys), with lookup (os.LookupEnv), so that
// one file serves several environments: a target, a rate, a duration. A
// variable unset or empty takes its default; without one it is an error
// at the value's line. $${env. is a literal ${env.. A plain (unquoted) value is
// typed after the substitution, as if the file had said the result: a
// rate of ${env.RATE:-200} is the number 200, a quoted one stays a string.
// Any other ${…} is left as written. It reports false when the document
// must not be decoded.
func (d *decoder) expandEnv(doc *yaml.Node, lookup func(string) (string, bool)) bool {
	seen := map[*yaml.Node]bool{}
	ok := true
	var walk func(n *yaml.Node, key bool)
	walk = func(n *yaml.Node, key bool) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		switch n.Kind {
		case yaml.ScalarNode:
			if !key && strings.Contains(n.Value, "${env.") {
				ok = d.expandValue(n, lookup) && ok
			}
		case yaml.MappingNode:
			for i, c := range n.Content {
				walk(c, i%2 == 0)
			}
		default: // documents, sequences; an alias's value is walked where it is written
			for _, c := range n.Content {
				walk(c, false)
			}
		}
	}
	walk(doc, false)
	return ok
}

// expandValue substitutes the variables of one scalar node in place.
func (d *decoder) expandValue(n *yaml.Node, lookup func(string) (string, bool)) bool {
	out, err := substituteEnv(n.Value, lookup)
	if err != "" {
		d.errf(n, "%s", err)
		return false
	}
	if len(out) > maxExpandedValue {
		d.errf(n, "%q is %d bytes once its variables are substituted; a value is at most %d", n.Value, len(out), maxExpandedValue)
		return false
	}
	n.Value = out
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		n.Tag = ""
		n.Tag = n.ShortTag() // typed as the value it now holds
	}
	return true
}

// substituteEnv returns s with its ${env.NAME[:-default]} substituted, or
// the problem with the first reference that cannot be. Any other ${…}
// is left as written (a shell's, in target_cmd).
func substituteEnv(s string, lookup func(string) (string, bool)) (string, string) {
	const open = "${env."
	var b strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return b.String() + s, ""
		}
		if i > 0 && s[i-1] == '$' { // $${env.: a literal ${env.
			b.WriteString(s[:i-1] + open)
			s = s[i+len(open):]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", "${env. without its closing }: write $${env. for a literal ${env."
		}
		v, problem := envValue(s[i+len(open):i+end], lookup)
		if problem != "" {
			return "", problem
		}
		b.WriteString(v)
		s = s[i+end+1:]
	}
}

// envValue is the value of one reference, NAME or NAME:-default.
func envValue(ref string, lookup func(string) (string, bool)) (string, string) {
	name, def, hasDef := strings.Cut(ref, ":-")
	if !envName.MatchString(name) {
		return "", "${env." + ref + "}: " + quoteName(name) + " is not a variable name (letters, digits and _, not first a digit)"
	}
	if v, set := lookup(name); set && v != "" {
		return v, ""
	}
	if hasDef {
		return def, ""
	}
	return "", "${env." + name + "}: " + name + " is not set in the environment (give a default: ${env." + name + ":-VALUE})"
}

func quoteName(s string) string {
	if s == "" {
		return "the empty name"
	}
	return "\"" + s + "\""
}
