package repocheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function outside tests may be, from its
// func keyword to its closing brace. A function past it does several
// things; name them. (Its cyclomatic complexity, at most 25, is checked
// by .ci/run with the pinned gocyclo.)
const maxFuncLines = 100

// longFuncs returns, one line each, the functions of src (a Go file's text,
// named name) longer than max lines, closures counted in the function
// that holds them.
func longFuncs(name string, src []byte, max int) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		from, to := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		if n := to - from + 1; n > max {
			out = append(out, fmt.Sprintf("%s:%d: %s is %d lines (at most %d)", name, from, funcName(fd), n, max))
		}
	}
	return out, nil
}

// funcName is fd's name as gocyclo prints it: (*T).m, T.m or f.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if ix, ok := t.(*ast.IndexExpr); ok { // generic receiver T[P]
		t = ix.X
	}
	switch r := t.(type) {
	case *ast.StarExpr:
		if id, ok := r.X.(*ast.Ident); ok {
			return "(*" + id.Name + ")." + fd.Name.Name
		}
	case *ast.Ident:
		return r.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// TestFunctionLength: no function outside tests is over maxFuncLines.
func TestFunctionLength(t *testing.T) {
	root, files := tracked(t)
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") || strings.Contains("/"+f, "/testdata/") {
			continue
		}
		n++
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		long, err := longFuncs(f, src, maxFuncLines)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range long {
			t.Error(l)
		}
	}
	if n < 100 {
		t.Fatalf("read %d Go files: the listing no longer finds the sources", n)
	}
}

// TestLongFuncsCatches: the check names a function one line over the
// limit, with its receiver, and not one at the limit.
func TestLongFuncsCatches(t *testing.T) {
	body := func(name string, lines int) string {
		return "func " + name + " {\n" + strings.Repeat("\t_ = 1\n", lines-2) + "}\n"
	}
	src := "package p\n\ntype T struct{}\n\n" + body("ok()", 5) + body("(t *T) long()", 6) + body("(T) fine()", 5) +
		"var _ = func() {\n" + strings.Repeat("\t_ = 1\n", 10) + "}\n"
	got, err := longFuncs("p.go", []byte(src), 5)
	if err != nil {
		t.Fatal(err)
	}
	want := "p.go:10: (*T).long is 6 lines (at most 5)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("longFuncs = %q, want [%q]", got, want)
	}
}
