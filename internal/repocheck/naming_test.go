package repocheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNamedOutside: a file outside a protocol's own and allowed ones that
// imports one of its packages, or spells its name, is reported with its
// line; its own files, allowed files, other string literals and comments
// are not.
func TestNamedOutside(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"wire/foo/foo.go":    "package foo\n\nconst Name = \"foo-proto\"\n",
		"engine/bad.go":      "package engine\n\nimport _ \"" + Module + "/wire/foo\"\n",
		"engine/bad2.go":     "package engine\n\nvar p = \"foo-proto\"\n",
		"engine/good.go":     "package engine\n\n// foo-proto is named in this comment only.\nvar p = \"foo-proto2\"\n",
		"cmd/x/allowed.go":   "package main\n\nimport _ \"" + Module + "/wire/foo/sub\"\n",
		"engine/wirefoox.go": "package engine\n\nimport _ \"" + Module + "/wire/foox\"\n",
		"suite/foo_1.go":     "package suite\n\nvar p = \"foo-proto\"\n",
	}
	var names []string
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	got, err := NamedOutside(root, names, Ownership{Name: "foo-proto", Own: []string{"wire/foo"}, Allowed: map[string]string{"cmd/x": "the test's", "suite/foo_*.go": "a pattern"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`engine/bad.go:3: imports wire/foo, a package of foo-proto`,
		`engine/bad2.go:3: names foo-proto ("foo-proto")`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("NamedOutside =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	all, err := GoFiles(root)
	if err != nil || len(all) != len(names) {
		t.Errorf("GoFiles = %v, %v", all, err)
	}
}
