package browserpool

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestEveryErrorClassHasAHint parses the package's sources and checks that
// every exported Err* class is a key of the one hint table, so no error
// reaches a caller without telling it what to do next.
func TestEveryErrorClassHasAHint(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	classes, keys := map[string]bool{}, map[string]bool{}
	for _, f := range pkgs["browserpool"].Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
						classes[n.Name] = true
					}
					if n.Name == "hints" && i < len(vs.Values) {
						for _, el := range vs.Values[i].(*ast.CompositeLit).Elts {
							keys[el.(*ast.KeyValueExpr).Key.(*ast.Ident).Name] = true
						}
					}
				}
			}
		}
	}
	if len(classes) < 40 || len(keys) == 0 {
		t.Fatalf("found %d classes and %d hint keys; the scan is broken", len(classes), len(keys))
	}
	var missing []string
	for c := range classes {
		if !keys[c] {
			missing = append(missing, c)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("error classes without a default hint: %v", missing)
	}
	for class, hint := range hints {
		if strings.TrimSpace(hint) == "" {
			t.Errorf("class %q has an empty hint", class)
		}
	}
}
