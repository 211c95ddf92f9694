package agentline

import (
	"regexp"
	"strings"
)

// placeholder is {{name}}, with optional spaces or tabs inside the braces.
var placeholder = regexp.MustCompile(`\{\{[ \t]*([A-Za-z_][A-Za-z0-9_]{0,63})[ \t]*\}\}`)

// FillVariables replaces each {{name}} placeholder in text (spaces inside
// the braces allowed: {{ name }}) with the value of the variable of that
// name: how a campaign contact's variables reach the agent's instructions
// and greeting on its call. internal/campaign documents the rules (as
// campaign.Fill); they live here because the live call path, which fills
// a call's session, is itself under the package that places campaign calls
// and cannot import it.
//
// A placeholder whose name has no variable stays as it is written: an
// author who misspells a name, or a contact whose upload lacks a column,
// then hears "{{frist_name}}" in a test call and sees it in the
// transcript, where an empty string would hide the mistake. Values go in
// literally: a value that itself holds "{{other}}" is not expanded again,
// so a contact's data cannot pull in another's variables.
func FillVariables(text string, vars map[string]string) string {
	if len(vars) == 0 || !strings.Contains(text, "{{") {
		return text
	}
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := vars[strings.Trim(m[2:len(m)-2], " \t")]; ok {
			return v
		}
		return m
	})
}

// VariableNames returns the names of the placeholders in text, each once,
// in the order they first appear.
func VariableNames(text string) []string {
	var names []string
	seen := map[string]bool{}
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	return names
}
