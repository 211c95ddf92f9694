package agentline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// Size limits that keep the code readable: a production file a reader can
// hold in mind, and functions that fit on a screen. Tests, and the fakes
// that stand in for outside services, are not held to them.
const (
	maxFileLines = 400
	maxFuncLines = 80
)

func TestCodeSizeLimits(t *testing.T) {
	fset := token.NewFileSet()
	walkGo(t, true, func(path string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		if n := fset.Position(f.End()).Line; n > maxFileLines {
			t.Errorf("%s has %d lines (at most %d)", path, n, maxFileLines)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "a function literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, name = fn.Body, fn.Name.Name
			case *ast.FuncLit:
				body = fn.Body
			}
			if body == nil {
				return true
			}
			start, end := fset.Position(n.Pos()), fset.Position(body.Rbrace)
			if lines := end.Line - start.Line + 1; lines > maxFuncLines {
				t.Errorf("%s:%d: %s has %d lines (at most %d)", path, start.Line, name, lines, maxFuncLines)
			}
			return true
		})
		return nil
	})
}
