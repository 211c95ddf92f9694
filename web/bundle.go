package web

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/evanw/esbuild/pkg/api"

	jssdk "github.com/agentline/agentline/sdk/js"
)

// sdkImport is the SDK's package name, as the widget imports it.
const sdkImport = "@agentline/client"

// bundle builds one JavaScript file from entry (the source of a module
// that may import "@agentline/client") and the SDK's embedded files, with
// esbuild's bundler, minified; format is IIFE for the widget's classic
// script or ESM for /sdk/client.js. No npm step: the SDK's files are in
// the binary.
func bundle(name string, entry []byte, format api.Format) ([]byte, error) {
	return bundleWith(name, entry, format, sdkPlugin(jssdk.Files))
}

// bundleWith bundles entry with plugin as its only resolver.
func bundleWith(name string, entry []byte, format api.Format, plugin api.Plugin) ([]byte, error) {
	res := api.Build(api.BuildOptions{
		Stdin:             &api.StdinOptions{Contents: string(entry), Sourcefile: name, Loader: api.LoaderJS},
		Bundle:            true,
		Write:             false,
		Format:            format,
		Platform:          api.PlatformBrowser,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		LegalComments:     api.LegalCommentsNone,
		Plugins:           []api.Plugin{plugin},
	})
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		if e.Location != nil {
			return nil, fmt.Errorf("bundle %s: %s:%d: %s", name, e.Location.File, e.Location.Line, e.Text)
		}
		return nil, fmt.Errorf("bundle %s: %s", name, e.Text)
	}
	if len(res.OutputFiles) != 1 {
		return nil, fmt.Errorf("bundle %s: %d output files", name, len(res.OutputFiles))
	}
	return res.OutputFiles[0].Contents, nil
}

// sdkPlugin resolves "@agentline/client" and the SDK's relative imports
// to files of fsys, and refuses any other import: the bundle holds
// agentline's code only.
func sdkPlugin(fsys fs.FS) api.Plugin {
	return api.Plugin{Name: "agentline-sdk", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			switch {
			case a.Path == sdkImport:
				return api.OnResolveResult{Path: "index.js", Namespace: "sdk"}, nil
			case a.Namespace == "sdk" && strings.HasPrefix(a.Path, "./"):
				return api.OnResolveResult{Path: path.Join(path.Dir(a.Importer), a.Path), Namespace: "sdk"}, nil
			}
			return api.OnResolveResult{}, fmt.Errorf("import %q: only %s and its own files may be imported", a.Path, sdkImport)
		})
		b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: "sdk"}, loadJS(fsys))
	}}
}

// consolePlugin resolves the console's relative imports ("./dom.js" from
// app.js, "../api.js" from pages/agents.js) to the files of dir in fsys,
// relative to the importing file, and leaves absolute ones
// ("/sdk/client.js") as imports the browser loads when the page asks for
// them; anything else, or a path out of dir, is refused.
func consolePlugin(fsys fs.FS, dir string) api.Plugin {
	return api.Plugin{Name: "agentline-console", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			if strings.HasPrefix(a.Path, "/") {
				return api.OnResolveResult{Path: a.Path, External: true}, nil
			}
			// The entry (stdin) is dir's app.js; a module imports from its own folder.
			from := dir
			if a.Namespace == "console" {
				from = path.Dir(a.Importer)
			}
			p := path.Join(from, a.Path)
			relative := strings.HasPrefix(a.Path, "./") || strings.HasPrefix(a.Path, "../")
			if relative && strings.HasSuffix(a.Path, ".js") && strings.HasPrefix(p, dir+"/") {
				return api.OnResolveResult{Path: p, Namespace: "console"}, nil
			}
			return api.OnResolveResult{}, fmt.Errorf("import %q: the console imports only its own files (./name.js, ../name.js) and the server's (/path)", a.Path)
		})
		b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: "console"}, loadJS(fsys))
	}}
}

// loadJS loads a resolved path of a plugin's namespace from fsys, as
// JavaScript.
func loadJS(fsys fs.FS) func(api.OnLoadArgs) (api.OnLoadResult, error) {
	return func(a api.OnLoadArgs) (api.OnLoadResult, error) {
		src, err := fs.ReadFile(fsys, a.Path)
		if err != nil {
			return api.OnLoadResult{}, err
		}
		s := string(src)
		return api.OnLoadResult{Contents: &s, Loader: api.LoaderJS}, nil
	}
}
