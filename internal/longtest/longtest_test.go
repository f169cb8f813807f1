package longtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCIRunsEveryLongCheck: every test that calls longtest.Skip or longtest.Enabled is named in
// the long-checks step of .ci/run, so a long check cannot silently stop running anywhere.
func TestCIRunsEveryLongCheck(t *testing.T) {
	root := filepath.Join("..", "..")
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`DPRL_LONG=1 go test[^\n]*\n?[^\n]*-run '\^\(([^)]*)\)\$'`).FindSubmatch(ci)
	if m == nil {
		t.Fatal(".ci/run: no `DPRL_LONG=1 go test … -run '^(A|B|…)$'` step")
	}
	named := map[string]bool{}
	for _, n := range strings.Split(string(m[1]), "|") {
		named[n] = true
	}
	found := 0
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") || strings.Contains(p, filepath.Join("internal", "longtest")) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			uses := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "longtest" {
						uses = true
					}
				}
				return !uses
			})
			if uses {
				found++
				if !named[fn.Name.Name] {
					t.Errorf("%s: %s is a long check but .ci/run's long-checks step does not name it", p, fn.Name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("found no long check: the scan is broken")
	}
}
