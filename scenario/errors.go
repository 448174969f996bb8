package scenario

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem found in a scenario file, located by file and line
// (1-based; 0 when the problem has no single place, e.g. a missing key).
type Error struct {
	File   string
	Line   int
	Column int
	Msg    string
}

// Error formats the problem as "file:line: message", the form editors and
// CI logs understand.
func (e Error) Error() string {
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
