package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// cssMarker stands for the embedded stylesheet in the HTML golden files:
// html.css is tested once, by TestHTMLCSS, not copied into every golden.
const cssMarker = "<style>/* html.css, tested by TestHTMLCSS */</style>"

// checkHTMLGolden asserts page embeds html.css exactly once, whole, then
// compares it with testdata/name with the stylesheet replaced by cssMarker.
func checkHTMLGolden(t *testing.T, name string, page []byte) {
	t.Helper()
	block := []byte("<style>\n" + htmlCSS + "\n</style>")
	if n := bytes.Count(page, block); n != 1 {
		t.Errorf("%s embeds html.css %d times, want once", name, n)
	}
	if n := bytes.Count(page, []byte("<style")); n != 1 {
		t.Errorf("%s has %d <style> elements, want 1", name, n)
	}
	golden.Check(t, filepath.Join("testdata", name), bytes.Replace(page, block, []byte(cssMarker), 1))
}

var (
	cssComment  = regexp.MustCompile(`(?s)/\*.*?\*/`)
	cssVarUse   = regexp.MustCompile(`var\((--[\w-]+)\)`)
	cssVarDef   = regexp.MustCompile(`(--[\w-]+)\s*:`)
	cssClass    = regexp.MustCompile(`\.([a-zA-Z][\w-]*)`)
	classAttr   = regexp.MustCompile(`class=\\?"([^"\\]*)`)
	templateTag = regexp.MustCompile(`\{\{.*?\}\}`)
)

// TestHTMLCSS checks the stylesheet every page embeds: well-formed rules,
// nothing fetched, every custom property defined, a style for every
// verdict and headline status, and no rule for a class no page can carry.
func TestHTMLCSS(t *testing.T) {
	css := cssComment.ReplaceAllString(htmlCSS, "")
	for _, f := range []string{"@import", "url(", "<", "expression("} {
		if strings.Contains(strings.ToLower(css), f) {
			t.Errorf("html.css contains %q", f)
		}
	}

	// Rules: balanced braces, a selector before each block, and
	// "property: value" declarations.
	var selectors []string
	depth, start := 0, 0
	for i, c := range css {
		switch c {
		case '{':
			sel := strings.TrimSpace(css[start:i])
			if sel == "" {
				t.Errorf("block without a selector at byte %d", i)
			}
			if !strings.HasPrefix(sel, "@") {
				selectors = append(selectors, sel)
			}
			depth++
			start = i + 1
		case '}':
			if depth == 0 {
				t.Fatalf("unbalanced } at byte %d", i)
			}
			for _, d := range strings.Split(css[start:i], ";") {
				if d = strings.TrimSpace(d); d != "" && !strings.Contains(d, ":") {
					t.Errorf("declaration %q has no property", d)
				}
			}
			depth--
			start = i + 1
		}
	}
	if depth != 0 || strings.TrimSpace(css[start:]) != "" {
		t.Fatalf("html.css ends inside a rule (depth %d, trailing %q)", depth, css[start:])
	}

	defined := map[string]bool{}
	for _, m := range cssVarDef.FindAllStringSubmatch(css, -1) {
		defined[m[1]] = true
	}
	for _, m := range cssVarUse.FindAllStringSubmatch(css, -1) {
		if !defined[m[1]] {
			t.Errorf("var(%s) is never defined", m[1])
		}
	}

	styled := map[string]bool{} // each selector of each rule, spaces normalised
	for _, sel := range selectors {
		for _, one := range strings.Split(sel, ",") {
			styled[strings.Join(strings.Fields(one), " ")] = true
		}
	}
	for _, v := range []string{result.VerdictPass, result.VerdictFail, result.VerdictWarn, result.VerdictInfo, result.VerdictSkip, result.VerdictNotRun} {
		for _, want := range []string{".v-" + v, ".mx td.v-" + v + " a"} {
			if !styled[want] {
				t.Errorf("no rule %q for verdict %s", want, v)
			}
		}
	}
	for _, s := range []string{result.StatusPass, result.StatusFail, result.StatusInterrupted, result.StatusIncomplete, result.StatusTargetDown, result.StatusInconclusive, result.StatusUnreachable} {
		if !styled[".status."+s] {
			t.Errorf("no rule .status.%s for headline status %s", s, s)
		}
	}

	// Classes the pages can carry: the literal ones in the template and the
	// Go code, and the prefixed ones the template fills from the model.
	var src strings.Builder
	for _, f := range []string{"html.tmpl", "html.go", "html_svg.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	carried := map[string]bool{}
	for _, m := range classAttr.FindAllStringSubmatch(src.String(), -1) {
		for _, w := range strings.Fields(templateTag.ReplaceAllString(m[1], " ")) {
			carried[w] = true
		}
	}
	for _, w := range []string{"bad", "good", "none", "outages"} { // matrixCell.Class and card classes set in html.go
		carried[w] = true
	}
	for _, v := range []string{result.VerdictPass, result.VerdictFail, result.VerdictWarn, result.VerdictInfo, result.VerdictSkip, result.VerdictNotRun} {
		carried["v-"+v], carried["c-"+v] = true, true
	}
	for _, s := range []string{result.StatusPass, result.StatusFail, result.StatusInterrupted, result.StatusIncomplete, result.StatusTargetDown, result.StatusInconclusive, result.StatusUnreachable} {
		carried[s] = true
	}
	carried["w-"+result.DirSent], carried["w-"+result.DirRecv] = true, true
	carried["v-bound"] = true // a harness-bound threshold's badge (thresholdVerdict)
	for _, m := range cssClass.FindAllStringSubmatch(strings.Join(selectors, " "), -1) {
		if !carried[m[1]] {
			t.Errorf("html.css styles .%s, which no page carries", m[1])
		}
	}
}
