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

// A caller's id echoed in an error is escaped when it could forge a log
// line or hide what it holds.
func TestAnEchoedIDWithControlCharactersIsQuoted(t *testing.T) {
	for in, want := range map[string]string{
		"s-0123abcd":     "s-0123abcd",
		"a\nb":           `"a\nb"`,
		"a\x00b":         `"a\x00b"`,
		"a b":            `"a b"`,
		"bad\xffutf8":    `"bad\xffutf8"`,
		"attach-[::1]:9": "attach-[::1]:9",
	} {
		if got := echoField(in); got != want {
			t.Errorf("echoField(%q) = %s, want %s", in, got, want)
		}
	}
	err := newError("Pool.Session", ErrSessionNotFound, "")
	err.Session = "x\nbrowserpool: forged line"
	if msg := err.Error(); strings.Contains(msg, "\n") {
		t.Errorf("an error line holds a newline from a caller's id: %q", msg)
	}
}
