// Package repocheck holds the repository's structural tests, and what the
// protocols' own tests use to check that nothing outside a protocol's
// packages names it (NamedOutside). This test: every tracked text file of
// the repository must be readable by someone who has nothing but the
// repository. It fails on references to files outside it (a path into the
// sibling folder that holds the source documents, a link that climbs out of
// the repository), on source documents cited by an internal number instead
// of docs/protocols, and on tracker numbers (the word issue or stop and a
// number), which mean nothing to a reader. TestScan shows what matches.
package repocheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
)

// exceptions are files this test does not read yet, each with the reason.
// Remove an entry as soon as the file is fixed.
var exceptions = map[string]string{}

// A finding is one forbidden reference.
type finding struct {
	line int
	what string
	text string
}

var (
	// outside is a path into the folder beside the repository.
	outside = regexp.MustCompile(`\.\./shared\b`)
	// seedRef is a source document cited by its internal number: the word
	// seed, an optional space, dash or underscore, and a number 000-009,
	// in any case, inside identifiers too. The documents are cited through
	// docs/protocols instead.
	seedRef = regexp.MustCompile(`(?i)seeds?[ _-]?00\d`)
	// trackerRef is a tracker number: the word issue or stop (any case,
	// singular or plural) and a number, with or without "#". Those words
	// without a number are English, not a reference.
	trackerRef = regexp.MustCompile(`(?i)\b(?:issues?|stops?)\s+#?\d+\b(?:\s+point\s+\d+)?`)
	// unit follows a number that counts something: "issue 3 requests",
	// "stop 2 servers" are sentences, not tracker references.
	unit = regexp.MustCompile(`^\s+(?:requests?|retries|servers?|clients?|packets?|datagrams?|frames?|times|connections?|players?|rooms?|instances?|sessions?|bytes?|ms|s|seconds?|minutes?|workers?|shards?)\b`)
	// link targets: Markdown links and images, HTML href and src.
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	htmlLink = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
)

// scan returns the forbidden references in the text of the file at name
// (a slash path relative to the repository's root).
func scan(name string, text []byte) []finding {
	var out []finding
	for i, line := range strings.Split(string(text), "\n") {
		add := func(what, s string) { out = append(out, finding{i + 1, what, s}) }
		for _, m := range outside.FindAllString(line, -1) {
			add("path outside the repository", m)
		}
		for _, m := range seedRef.FindAllString(line, -1) {
			add("source document cited by number (cite docs/protocols)", m)
		}
		for _, loc := range trackerRef.FindAllStringIndex(line, -1) {
			if m := line[loc[0]:loc[1]]; strings.Contains(m, "#") || !unit.MatchString(line[loc[1]:]) {
				add("tracker reference", m)
			}
		}
		for _, re := range []*regexp.Regexp{mdLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				if climbsOut(name, m[1]) {
					add("link out of the repository", m[1])
				}
			}
		}
	}
	return out
}

// climbsOut reports whether target, a link in the file at name, leads out of
// the repository. URLs, anchors and template expressions never do.
func climbsOut(name, target string) bool {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") || strings.Contains(target, "{{") {
		return false
	}
	if strings.HasPrefix(target, "/") {
		return false // site-absolute: not a file path of this repository
	}
	p := path.Join(path.Dir(name), target)
	return p == ".." || strings.HasPrefix(p, "../")
}

// tracked lists the tracked files, relative to the repository's root.
func tracked(t *testing.T) (root string, files []string) {
	t.Helper()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git work tree (%v): nothing to list", err)
	}
	root = strings.TrimSpace(string(top))
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("git ls-files listed nothing")
	}
	return root, files
}

// skipped reports whether a tracked file is not text this test reads:
// fuzz corpora and binary files.
func skipped(name string, b []byte) bool {
	if strings.Contains("/"+name, "/testdata/fuzz/") {
		return true
	}
	head := b
	if len(head) > 8000 {
		head = head[:8000]
	}
	return bytes.IndexByte(head, 0) >= 0
}

func TestNoOutsideReferences(t *testing.T) {
	root, files := tracked(t)
	read, text := 0, 0
	for _, f := range files {
		if _, ok := exceptions[f]; ok {
			continue
		}
		if !strings.Contains("/"+f, "/testdata/fuzz/") {
			text++
		}
		b, err := os.ReadFile(root + "/" + f)
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		if skipped(f, b) {
			continue
		}
		read++
		for _, fd := range scan(f, b) {
			t.Errorf("%s:%d: %s: %q", f, fd.line, fd.what, fd.text)
		}
	}
	if read < text*9/10 {
		t.Errorf("read %d of %d tracked files outside fuzz corpora: the binary rule skips too much", read, text)
	}
	for f := range exceptions {
		if _, err := os.Stat(root + "/" + f); err != nil {
			t.Errorf("exception %s: %v (remove it from the list)", f, err)
		}
	}
}

// s joins its parts, so that this file does not hold the references it
// looks for.
func s(parts ...string) string { return strings.Join(parts, "") }

func TestScan(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []string // the what of each finding, in order
	}{
		{"a.go", s("// see ../sh", "ared/PROTOCOLS.md"), []string{"path outside the repository"}},
		{"a.go", s("// se", "ed 003 §5"), []string{"source document cited by number (cite docs/protocols)"}},
		{"a.go", s("// Se", "eds 002-004"), []string{"source document cited by number (cite docs/protocols)"}},
		{"a.go", s("func se", "ed001List()"), []string{"source document cited by number (cite docs/protocols)"}},
		{"a.go", s(`"se`, `ed-001-layout"`), []string{"source document cited by number (cite docs/protocols)"}},
		{"a.go", "seed: 42, --seed 7, seed+1, the seed's reading", nil},
		{"a.md", s("## Soak (is", "sue 15)"), []string{"tracker reference"}},
		{"a.go", s("// the fix of Is", "sue #11"), []string{"tracker reference"}},
		{"a.go", s("// as st", "op 21 asked."), []string{"tracker reference"}},
		{"a.go", s("// is", "sue 10 point 7: what"), []string{"tracker reference"}},
		{"a.go", "// an issue with the port; the issues are known; stop the server", nil},
		{"a.go", "// the client may issue 3 requests, then stop 2 servers and wait 5 s", nil},
		{"a.go", s("// is", "sue 5 asks for it"), []string{"tracker reference"}},
		{"a.go", "// hex 0xdeadbeef, uuid 123e4567-e89b-12d3-a456-426614174000, #11 alone", nil},
		{"docs/x/a.md", "[up](../../README.md) [in](../y.md) [web](https://x.org/../a) [anchor](#s5)", nil},
		{"docs/a.md", "[out](../../other/README.md)", []string{"link out of the repository"}},
		{"a.html", `<a href="../x.html">`, []string{"link out of the repository"}},
		{"deploy/k_test.go", `want "../../" + dir`, nil},
	} {
		var got []string
		for _, f := range scan(tt.name, []byte(tt.text)) {
			got = append(got, f.what)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("scan(%s, %q) = %v, want %v", tt.name, tt.text, got, tt.want)
		}
	}
}
