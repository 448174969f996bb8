package scenario

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeHasFormat keeps the README's "Scenario format" section equal to
// FORMAT.md (headings one level down), so the README documents every key.
func TestReadmeHasFormat(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skipf("no README beside the module: %v", err)
	}
	format, err := os.ReadFile("FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(format), "\n") // drop the title
	body = regexp.MustCompile(`(?m)^(#+) `).ReplaceAllString(strings.TrimLeft(body, "\n"), "#$1 ")
	const begin = "<!-- BEGIN scenario/FORMAT.md (kept in sync by TestReadmeHasFormat) -->\n"
	const end = "<!-- END scenario/FORMAT.md -->"
	r := string(readme)
	i, j := strings.Index(r, begin), strings.Index(r, end)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %q … %q markers", begin, end)
	}
	if got, want := strings.TrimSpace(r[i+len(begin):j]), strings.TrimSpace(body); got != want {
		t.Errorf("README's scenario format section differs from scenario/FORMAT.md; copy FORMAT.md into it (headings one level down)")
	}
}
