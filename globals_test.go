package agentline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"

	"github.com/agentline/agentline"
)

// No package exports a mutable package-level variable: a slice, map, array
// or channel any importer could change under every other one. Catalogs are
// functions returning copies, or unexported. Sentinel errors (Err...) stay
// variables, since errors.Is compares them by identity; so do values of
// types nobody can change, like an embed.FS.
func TestNoMutableExportedGlobals(t *testing.T) {
	fset := token.NewFileSet()
	walkGo(t, false, func(path string) error {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !name.IsExported() || strings.HasPrefix(name.Name, "Err") {
						continue
					}
					var value ast.Expr
					if i < len(vs.Values) {
						value = vs.Values[i]
					}
					if mutable(vs.Type, value) {
						t.Errorf("%s: exported package-level variable %s is mutable; return a copy from a function, or unexport it",
							fset.Position(name.Pos()), name.Name)
					}
				}
			}
		}
		return nil
	})
}

// mutable reports whether a variable declared with typ and value holds a
// slice, map, array or channel, as far as the syntax shows.
func mutable(typ, value ast.Expr) bool {
	switch typ.(type) {
	case *ast.ArrayType, *ast.MapType, *ast.ChanType:
		return true
	}
	switch v := value.(type) {
	case *ast.CompositeLit:
		return mutable(v.Type, nil)
	case *ast.CallExpr:
		if id, ok := v.Fun.(*ast.Ident); ok && id.Name == "make" {
			return true
		}
		return mutable(v.Fun, nil) // a conversion such as []byte(s)
	}
	return false
}

// The catalogs are copies: changing what one caller got changes nothing
// the next one gets.
func TestCatalogsAreCopies(t *testing.T) {
	events := agentline.EventTypes()
	events[0] = "changed"
	if agentline.EventTypes()[0] == "changed" || !agentline.KnownEventType(agentline.EventConversationStarted) {
		t.Error("EventTypes shares its catalog")
	}
	models := agentline.KnownModels()
	models[0].Name = "changed"
	if agentline.KnownModels()[0].Name == "changed" {
		t.Error("KnownModels shares its catalog")
	}
	voices := agentline.DefaultVoices()
	voices[agentline.ProviderOpenAI] = "changed"
	a := agentline.Agent{Name: "Ada", Model: "gpt-realtime"}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if agentline.DefaultVoices()[agentline.ProviderOpenAI] == "changed" || a.Voice == "changed" {
		t.Error("DefaultVoices shares its map")
	}
	live := agentline.LiveCallStatuses()
	live[0] = "changed"
	if slices.Contains(agentline.LiveCallStatuses(), "changed") {
		t.Error("LiveCallStatuses shares its slice")
	}
	doc := agentline.OpenAPI()
	doc[0] ^= 0xff
	if agentline.OpenAPI()[0] == doc[0] {
		t.Error("OpenAPI shares its bytes")
	}
}
