package campaign

import "github.com/agentline/agentline"

// Fill replaces each {{name}} placeholder in text (spaces inside the
// braces allowed: {{ name }}) with the value of the variable of that name.
//
// A placeholder whose name has no variable stays as it is written: an
// author who misspells a name, or a contact whose upload lacks a column,
// then hears "{{frist_name}}" in a test call and sees it in the
// transcript, where an empty string would hide the mistake. Values go in
// literally: a value that itself holds "{{other}}" is not expanded again,
// so a contact's data cannot pull in another's variables.
//
// It is agentline.FillVariables, which the live call path uses on each
// campaign call: one rule for what a test here shows and what a caller
// hears.
func Fill(text string, vars map[string]string) string { return agentline.FillVariables(text, vars) }

// Placeholders returns the names of the placeholders in text, each once,
// in the order they first appear: what a console can check against an
// upload's columns before a campaign starts.
func Placeholders(text string) []string { return agentline.VariableNames(text) }
