package repocheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Module is the module path; paths below are relative to it.
const Module = "github.com/lobbybench/lobbybench"

// Ownership is one protocol as NamedOutside checks it: no package outside
// its own names it.
type Ownership struct {
	// Name is its name ("udp-lobby").
	Name string
	// Own are its packages' directories, relative to the module root
	// ("protocols/udplobby"); the packages below them are its too.
	Own []string
	// Allowed are further directories, files or file patterns
	// (path.Match, e.g. "protocols/tcplobby/tcpcases/tcp_6_*.go"), relative, that may name
	// it, each with the reason.
	Allowed map[string]string
}

// NamedOutside returns, one line each, the files among files (relative to
// root) outside p's own and allowed ones that name protocol p: that import
// one of its packages or hold its name as a string literal.
func NamedOutside(root string, files []string, p Ownership) ([]string, error) {
	inside := func(rel string) bool {
		for _, d := range p.Own {
			if rel == d || strings.HasPrefix(rel, d+"/") {
				return true
			}
		}
		for a := range p.Allowed {
			if ok, _ := path.Match(a, rel); ok || rel == a || strings.HasPrefix(rel, a+"/") {
				return true
			}
		}
		return false
	}
	var out []string
	for _, rel := range files {
		if inside(rel) {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if dir, ok := strings.CutPrefix(ip, Module+"/"); ok && ownDir(dir, p.Own) {
				out = append(out, fmt.Sprintf("%s:%d: imports %s, a package of %s", rel, fset.Position(imp.Pos()).Line, dir, p.Name))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && s == p.Name {
					out = append(out, fmt.Sprintf("%s:%d: names %s (%s)", rel, fset.Position(lit.Pos()).Line, p.Name, lit.Value))
				}
			}
			return true
		})
	}
	return out, nil
}

func ownDir(dir string, own []string) bool {
	for _, d := range own {
		if dir == d || strings.HasPrefix(dir, d+"/") {
			return true
		}
	}
	return false
}

// Root returns the module's root directory.
func Root() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// BinaryFiles returns the non-test Go files of the module's packages that
// cmd/lobbybench links, relative to root.
func BinaryFiles(root string) ([]string, error) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}\t{{join .GoFiles \",\"}}{{end}}", "./cmd/lobbybench")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps ./cmd/lobbybench: %v: %s", err, stderr.Bytes())
	}
	var files []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		dir, list, ok := strings.Cut(sc.Text(), "\t")
		rel, err := filepath.Rel(root, dir)
		if !ok || err != nil || strings.HasPrefix(rel, "..") || list == "" {
			continue // outside the module
		}
		for _, f := range strings.Split(list, ",") {
			files = append(files, path.Join(filepath.ToSlash(rel), f))
		}
	}
	sort.Strings(files)
	return files, sc.Err()
}

// GoFiles returns every Go file of the module, tests too (not under
// testdata or hidden directories), relative to root.
func GoFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// NamedOnlyHere is a protocol's naming test: it fails t once for each
// place, in the files the binary links (BinaryFiles), outside p's own
// packages and its allowed files, that names the protocol (NamedOutside).
func NamedOnlyHere(t testing.TB, p Ownership) {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	files, err := BinaryFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	found, err := NamedOutside(root, files, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}
