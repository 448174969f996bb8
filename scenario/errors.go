package scenario

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is one problem found in a scenario file, located by file and line
// (1-based; 0 when the problem has no single place, e.g. a missing key).
type Error struct {
	File   string
	Line   int
	Column int
	// Exact: Column points at the problem (an expression's) and is
	// printed.
	Exact bool
	Msg   string
}

// Error formats the problem as "file:line: message", the form editors and
// CI logs understand.
func (e Error) Error() string {
	if e.Line > 0 && e.Exact {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errors is every problem found in a scenario, in file order. The CLI prints
// it one problem per line; a scenario with any Error is never run.
type Errors []Error

// Error joins the problems one per line.
func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap exposes each problem to errors.Is/As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Column < es[j].Column
	})
	return es
}

// suggest returns ` (did you mean "x"?)` when a candidate is close to s.
func suggest(s string, candidates []string) string {
	if best, ok := Closest(s, candidates); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// Closest returns the candidate nearest to s (case-insensitive edit
// distance) when it is close enough to be the one meant: the "did you
// mean" of scenario keys and of the command line's flags.
func Closest(s string, candidates []string) (string, bool) {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := levenshtein(strings.ToLower(s), c); d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(s) > 8 {
		limit = 3
	}
	return best, best != "" && bestD <= limit && bestD < len(s)
}

func levenshtein(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// syntaxBudget bounds the bytes syntaxLine re-parses, so that a large file
// with an early error cannot make a load slow.
const syntaxBudget = 16 << 20

// syntaxLine finds the 1-based line of a YAML syntax error: the line after
// the longest prefix of whole lines that still parses. Every longer prefix
// fails, so that line is where the text stops being YAML — the wrongly
// indented key, the line that opens a brace never closed — whatever line
// yaml.v3 named (hint, its context line, used when the budget runs out).
func syntaxLine(lines []string, hint int) int {
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	spent := 0
	for k := len(lines) - 1; k >= 0; k-- {
		size -= len(lines[k]) + 1
		if spent += size; spent > syntaxBudget {
			return hint
		}
		if parses(strings.Join(lines[:k], "\n")) {
			return k + 1
		}
	}
	return hint
}

func parses(text string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	var n yaml.Node
	return yaml.Unmarshal([]byte(text), &n) == nil
}

// indentHint explains a line whose indentation matches no block it could
// belong to: it goes back to fewer spaces than the block above it, but not
// as few as any block that is still open. Comments, blank lines and lines
// inside block scalars or flow collections can fool it, so it says nothing
// unless the picture is that simple.
func indentHint(lines []string, line int) string {
	type open struct{ indent, line int }
	var stack []open
	for i := 0; i < line; i++ {
		body := strings.TrimLeft(lines[i], " ")
		if body == "" || body[0] == '#' {
			if i == line-1 {
				return ""
			}
			continue
		}
		if i < line-1 && spansLines(body) {
			return ""
		}
		ind := len(lines[i]) - len(body)
		var popped *open
		for len(stack) > 0 && stack[len(stack)-1].indent > ind {
			p := stack[len(stack)-1]
			popped = &p
			stack = stack[:len(stack)-1]
		}
		top := -1
		if len(stack) > 0 {
			top = stack[len(stack)-1].indent
		}
		if i == line-1 {
			if popped != nil && top != ind {
				unit := "spaces"
				if ind == 1 {
					unit = "space"
				}
				return fmt.Sprintf(" (indented %d %s, matching neither line %d (%d) nor the block around it (%d))",
					ind, unit, popped.line, popped.indent, max(top, 0))
			}
			return ""
		}
		if top < ind {
			stack = append(stack, open{ind, i + 1})
		}
		// "- key: v" opens a sequence at the dash and a mapping after it.
		for rest := body; strings.HasPrefix(rest, "- "); {
			trimmed := strings.TrimLeft(rest[1:], " ")
			ind += len(rest) - len(trimmed)
			stack = append(stack, open{ind, i + 1})
			rest = trimmed
		}
	}
	return ""
}

// spansLines reports whether a line may continue onto the next ones — a block
// scalar, an unclosed flow collection or quote, a tab — where indentation
// stops meaning nesting.
func spansLines(body string) bool {
	v := strings.TrimRight(body, " ")
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimRight(v[:i], " ")
	}
	v = strings.TrimRight(v, "+-0123456789")
	return strings.HasSuffix(v, "|") || strings.HasSuffix(v, ">") ||
		strings.Count(body, "[") != strings.Count(body, "]") ||
		strings.Count(body, "{") != strings.Count(body, "}") ||
		strings.Count(body, `"`)%2 != 0 || strings.Count(body, "'")%2 != 0 ||
		strings.Contains(body, "\t")
}
