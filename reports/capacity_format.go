package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// capacityFormats are the capacity renderers by format name, each
// registered by its own file.
var capacityFormats = map[string]capacityFormat{}

type capacityFormat struct {
	help  string
	write func(io.Writer, *result.Capacity) error
}

func registerCapacity(name, help string, write func(io.Writer, *result.Capacity) error) {
	capacityFormats[name] = capacityFormat{help: help, write: write}
}

// withCapacity is f able to write a capacity document too, when a
// capacity renderer of its name exists.
func withCapacity(f Format) Format {
	cf, ok := capacityFormats[f.Name]
	if !ok {
		return f
	}
	help := make(map[string]string, len(f.Help)+1)
	for k, v := range f.Help {
		help[k] = v
	}
	help[result.KindCapacity] = cf.help
	write := f.Write
	f.Help = help
	f.Write = func(w io.Writer, o Options, docs ...result.Doc) error {
		if len(docs) == 1 {
			if c, ok := docs[0].(*result.Capacity); ok && c != nil {
				return cf.write(w, c)
			}
		}
		return write(w, o, docs...)
	}
	return f
}

// violationsText is a step's violations in one phrase: "U-CRC 3, U-SEQ 1".
func violationsText(m map[string]int64) string {
	if len(m) == 0 {
		return "-"
	}
	rules := make([]string, 0, len(m))
	for r := range m {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = fmt.Sprintf("%s %d", r, m[r])
	}
	return strings.Join(parts, ", ")
}

// verdictWord is a step verdict as every format shows it: PASS, FAIL,
// HARNESS-BOUND, TARGET DOWN.
func verdictWord(v string) string {
	if v == result.CapTargetDown {
		return "TARGET DOWN"
	}
	return strings.ToUpper(v)
}

// capUS is a latency figure of a step, "-" when it has none.
func capUS(us int64) string {
	if us == 0 {
		return "-"
	}
	return words.US(us)
}

// whatBroke is what broke at a step, or why it was not judged, "-" when
// neither.
func whatBroke(s result.CapacityStep) string {
	what := words.JoinMax(s.Broke, 3)
	if what == "" {
		what = s.Why
	}
	if what == "" {
		what = "-"
	}
	return what + drainText(s)
}
