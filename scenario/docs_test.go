package scenario

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestFormatDocumentsEveryKey keeps docs/scenario.md, the one description of
// the scenario format, in step with the parser: every key the parser accepts
// and every step kind and step parameter appear in it, as `code` or in a
// YAML example.
func TestFormatDocumentsEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../docs/scenario.md")
	if err != nil {
		t.Fatalf("the scenario format is documented in docs/scenario.md: %v", err)
	}
	text := string(doc)
	var kinds, params []string
	for _, spec := range allSteps() {
		kinds = append(kinds, spec.names()...)
		params = append(params, spec.Params...)
	}
	slices.Sort(kinds)
	slices.Sort(params)
	tests := []struct {
		what string
		keys []string
	}{
		{"top-level key", topLevelKeys()},
		{"embedded_server key", embeddedKeys},
		{"load key", loadKeys},
		{"request policy key", policyKeys},
		{"flow key", flowKeys},
		{"impairment key", impairKeys},
		{"faults key", faultKeys},
		{"step kind", kinds},
		{"step parameter", slices.Compact(params)},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			if len(tt.keys) == 0 {
				t.Fatal("no keys: the parser's list moved")
			}
			for _, k := range tt.keys {
				// `key`, `load.key`, `key: …` in prose, or key: in a YAML example.
				documented := regexp.MustCompile("`(?:[a-z_]+\\.)?" + regexp.QuoteMeta(k) + "(?:`|:)|(?m)(?:^\\s*|[{,]\\s*)" + regexp.QuoteMeta(k) + ":")
				if !documented.MatchString(text) {
					t.Errorf("docs/scenario.md does not document the %s `%s`", tt.what, k)
				}
			}
		})
	}
}
