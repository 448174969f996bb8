// Package repocheck holds tests of the repository itself rather than of a
// package's code.
package repocheck

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// pendingTargets are link targets written by another branch: while one is
// missing the link is logged, not failed. Once the file exists it is checked
// like any other, anchors included.
var pendingTargets = map[string]bool{
	"docs/protocols/README.md": true,
}

var (
	fenceRE    = regexp.MustCompile("(?ms)^[ \t]*(```|~~~).*?^[ \t]*(```|~~~)[ \t]*$")
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	linkRE     = regexp.MustCompile(`\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"[^"]*")?\)`)
	refDefRE   = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s+(\S+)`)
	headingRE  = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
	anchorRE   = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	inlineRE   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	schemeRE   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// stripCode removes fenced code blocks and code spans, whose brackets are
// not links.
func stripCode(md string) string {
	md = fenceRE.ReplaceAllString(md, "")
	return codeSpanRE.ReplaceAllString(md, "")
}

// links returns the targets of the inline links and reference definitions
// of a Markdown text, outside code.
func links(md string) []string {
	text := stripCode(md)
	var out []string
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.Trim(m[1], "<>"))
	}
	for _, m := range refDefRE.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.Trim(m[1], "<>"))
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, formatting and
// punctuation dropped, spaces turned into hyphens.
func slug(heading string) string {
	heading = inlineRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns every anchor a Markdown text defines: its headings'
// slugs (a repeated one numbered -1, -2 … as GitHub does) and explicit
// <a name> or <a id> tags.
func anchors(md string) map[string]bool {
	text := fenceRE.ReplaceAllString(md, "")
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingRE.FindAllStringSubmatch(text, -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	for _, m := range anchorRE.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// repoRoot is the directory holding go.mod, above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		dir = filepath.Dir(dir)
	}
	t.Fatal("no go.mod above the test's directory")
	return ""
}

// markdownFiles lists the repository's Markdown files, relative to root,
// leaving out .git, build output and testdata (golden outputs, not docs).
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkLink reports what is wrong with one link of file (a path relative to
// root), or "" when it resolves; pending says the target is a pending one.
func checkLink(root, file, link string, read func(string) ([]byte, error)) (problem string, pending bool) {
	if schemeRE.MatchString(link) {
		return "", false // a web address: not a file of this repository
	}
	path, anchor, _ := strings.Cut(link, "#")
	if strings.HasPrefix(path, "/") {
		return "absolute path " + link + ": links must be relative", false
	}
	target := file
	if path != "" {
		target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
	}
	if target == ".." || strings.HasPrefix(target, "../") {
		return link + " leaves the repository", false
	}
	full := filepath.Join(root, filepath.FromSlash(target))
	info, err := os.Stat(full)
	if err != nil {
		if pendingTargets[target] && errors.Is(err, fs.ErrNotExist) {
			return "", true
		}
		return link + ": no such file " + target, false
	}
	if anchor == "" || info.IsDir() || !strings.HasSuffix(target, ".md") {
		return "", false
	}
	body, err := read(full)
	if err != nil {
		return err.Error(), false
	}
	if !anchors(string(body))[anchor] {
		return link + ": " + target + " has no heading #" + anchor, false
	}
	return "", false
}

// TestMarkdownLinks checks every relative link of every Markdown file in
// the repository (README.md, docs/ and the others): its file exists inside
// the repository, and its #anchor, when it has one, is a heading there.
func TestMarkdownLinks(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t, root)
	for _, must := range []string{"README.md", "docs/README.md", "CHANGELOG.md"} {
		found := false
		for _, f := range files {
			found = found || f == must
		}
		if !found {
			t.Errorf("%s is missing", must)
		}
	}
	checked := 0
	for _, f := range files {
		body, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(body)) {
			checked++
			problem, pending := checkLink(root, f, l, os.ReadFile)
			if pending {
				t.Logf("%s: %s is pending (written on another branch)", f, l)
			}
			if problem != "" {
				t.Errorf("%s: %s", f, problem)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d links checked: the link pattern no longer matches", checked)
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"Exit codes", "exit-codes"},
		{"The low-load floor and `run --precise`", "the-low-load-floor-and-run---precise"},
		{"Regression gates: `report compare`", "regression-gates-report-compare"},
		{"Real servers' quirks", "real-servers-quirks"},
		{"Locally, on a throwaway cluster: `make e2e-k8s`", "locally-on-a-throwaway-cluster-make-e2e-k8s"},
		{"See [the notes](x.md) here", "see-the-notes-here"},
		{"udp-lobby steps", "udp-lobby-steps"},
	}
	for _, tt := range tests {
		if got := slug(tt.heading); got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

func TestLinksAndAnchors(t *testing.T) {
	md := "# Title\n\n## Part\n\n## Part\n\n<a name=\"x\"></a>\n" +
		"A [link](a.md#b) and [web](https://example.com) and `[code](not.md)`.\n" +
		"```\n[fenced](no.md)\n# not a heading\n```\n[ref]: ref.md\n"
	if got, want := strings.Join(links(md), " "), "a.md#b https://example.com ref.md"; got != want {
		t.Errorf("links = %q, want %q", got, want)
	}
	a := anchors(md)
	for _, want := range []string{"title", "part", "part-1", "x"} {
		if !a[want] {
			t.Errorf("anchor %q missing from %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a # line inside a fence was taken for a heading")
	}
}

func TestCheckLink(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "a.md"), []byte("# A\n\n## Exit codes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file, link  string
		wantProblem string // substring; "" for none
		wantPending bool
	}{
		{"README.md", "docs/a.md", "", false},
		{"README.md", "docs/a.md#exit-codes", "", false},
		{"README.md", "docs/a.md#nope", "has no heading #nope", false},
		{"docs/a.md", "#exit-codes", "", false},
		{"docs/a.md", "#missing", "has no heading", false},
		{"docs/a.md", "../README.md", "no such file", false},
		{"README.md", "../outside/SPEC.md", "leaves the repository", false},
		{"docs/a.md", "../../x.md", "leaves the repository", false},
		{"README.md", "/etc/passwd", "absolute path", false},
		{"README.md", "https://example.com/x", "", false},
		{"README.md", "docs/protocols/README.md", "", true},
		{"docs/a.md", "protocols/README.md#anything", "", true},
		{"docs/a.md", "protocols/other.md", "no such file", false},
	}
	for _, tt := range tests {
		problem, pending := checkLink(root, tt.file, tt.link, os.ReadFile)
		if pending != tt.wantPending {
			t.Errorf("%s → %s: pending %v, want %v", tt.file, tt.link, pending, tt.wantPending)
		}
		if (tt.wantProblem == "") != (problem == "") || !strings.Contains(problem, tt.wantProblem) {
			t.Errorf("%s → %s: problem %q, want one containing %q", tt.file, tt.link, problem, tt.wantProblem)
		}
	}
}
