package agentline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agentline/agentline"

// The layers the code keeps: storage is SQL and storage policy, so it
// imports no feature package (nor the analysis it stores the results of);
// configuration is plain values read from the environment, so the feature
// packages take it and not the reverse. Each list is everything the
// package may import from this module.
func TestLayers(t *testing.T) {
	allowed := map[string][]string{
		"internal/store":  {module, module + "/internal/coalesce"},
		"internal/config": {module},
	}
	for dir, ok := range allowed {
		for path, file := range productionImports(t, dir) {
			if strings.HasPrefix(path, module) && !slices.Contains(ok, path) {
				t.Errorf("%s imports %s; %s may import only %v from this module", file, path, dir, ok)
			}
		}
	}
}

// productionImports maps each import of dir's non-test files to one file
// that makes it.
func productionImports(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		path := filepath.Join(dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[p] = path
		}
	}
	return out
}

// A handler keeps its dependencies in private fields given to its
// constructor: one that embeds an Options struct makes every dependency a
// public field anyone holding the handler can swap while it serves.
func TestHandlersEmbedNoOptions(t *testing.T) {
	fset := token.NewFileSet()
	walkGo(t, false, func(path string) error {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if len(field.Names) == 0 && strings.HasSuffix(typeName(field.Type), "Options") {
					t.Errorf("%s: %s embeds %s; keep its dependencies in private fields", fset.Position(field.Pos()), ts.Name.Name, typeName(field.Type))
				}
			}
			return true
		})
		return nil
	})
}

func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// walkGo calls fn with the path of every production Go file of the module
// (no tests, no hidden or testdata folders, no node_modules; with
// skipFakes, no folder of a fake that stands in for an outside service).
func walkGo(t *testing.T, skipFakes bool, fn func(path string) error) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || skipFakes && strings.HasSuffix(name, "fake")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return fn(path)
	})
	if err != nil {
		t.Fatal(err)
	}
}
