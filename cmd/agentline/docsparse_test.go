package main

// The reading half of the docs harness (docs_test.go): the ```sh blocks of a
// Markdown file, their skip markers, the commands in them and what their
// comments promise.
//
// Conventions the docs follow (written for humans first):
//
//   - Every ```sh block runs, in order, in one bash session per file
//     (set -euo pipefail), so variables a block sets are there for the next.
//   - <!-- docs-test: skip: REASON --> just before a block skips it, and
//     <!-- docs-test: skip-file: REASON --> anywhere skips the whole file;
//     the reason is printed.
//   - Every curl must answer 2xx, unless its comment says otherwise: a
//     comment that starts with a status ("# 204", "# 401 {...}"), at the end
//     of the command or on the comment lines right after it, is the status
//     expected. JSON after the status (or a comment that starts with JSON)
//     is the body expected: whitespace is ignored and "..." stands for
//     anything. Any other comment is prose.

import (
	"fmt"
	"regexp"
	"strings"
)

// docBlock is one ```sh block of a file.
type docBlock struct {
	Line  int      // line of the opening fence, 1-based
	Lines []string // the block's lines, its indentation removed
	Skip  string   // why the harness does not run it; "" runs it
	// Shows is the ```json block right after it (blank lines between at
	// most): the answer of its last curl, whose shape is checked.
	Shows string
	end   int // index of the first non-blank line after it
}

var (
	skipMarker     = regexp.MustCompile(`^\s*<!--\s*docs-test:\s*skip:\s*(.*?)\s*-->\s*$`)
	skipFileMarker = regexp.MustCompile(`(?m)^\s*<!--\s*docs-test:\s*skip-file:\s*(.*?)\s*-->\s*$`)
)

// parseDoc returns the sh blocks of a Markdown file, and the reason the
// whole file is skipped, if it is.
func parseDoc(text string) (blocks []docBlock, skipFile string) {
	if m := skipFileMarker.FindStringSubmatch(text); m != nil {
		skipFile = m[1]
	}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
		b := docBlock{Line: i + 1}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := lines[i]
			if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
				l = l[indent:]
			}
			b.Lines = append(b.Lines, l)
		}
		if lang == "json" && len(blocks) > 0 && blocks[len(blocks)-1].end == b.Line-1 {
			blocks[len(blocks)-1].Shows = strings.Join(b.Lines, "\n")
		}
		if lang != "sh" {
			continue
		}
		b.end = i + 1
		for b.end < len(lines) && strings.TrimSpace(lines[b.end]) == "" {
			b.end++
		}
		for j := b.Line - 2; j >= 0 && j >= b.Line-4; j-- {
			if m := skipMarker.FindStringSubmatch(lines[j]); m != nil {
				b.Skip = m[1]
				break
			}
			if strings.TrimSpace(lines[j]) != "" {
				break
			}
		}
		blocks = append(blocks, b)
	}
	return blocks, skipFile
}

// docCommand is one logical shell command of a block: its lines joined by
// continuations and quotes that span lines.
type docCommand struct {
	Line   int    // doc line of its first line
	Text   string // as written, line breaks kept
	Curl   bool   // it runs curl
	Expect expectation
}

// expectation is what a curl's comment promises: a status (0: any 2xx) and
// a body pattern ("" for none).
type expectation struct {
	Status int
	Body   string
}

var curlWord = regexp.MustCompile(`(^|[\s(|;&])curl\s`)

// splitCommands cuts a block into commands, with the expectation of each
// from its trailing comment and the comment lines right after it.
func splitCommands(b docBlock) ([]docCommand, error) {
	var cmds []pendingCommand
	var cur []string
	var comment string
	start := 0
	var st quoteState
	for i, l := range b.Lines {
		if len(cur) == 0 {
			t := strings.TrimSpace(l)
			n := len(cmds)
			switch {
			case t == "" && n > 0:
				cmds[n-1].closed = true
			case strings.HasPrefix(t, "#") && n > 0 && !cmds[n-1].closed:
				cmds[n-1].comments = append(cmds[n-1].comments, strings.TrimPrefix(t, "#"))
			}
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			start = b.Line + 1 + i
		}
		code, c := st.scan(l)
		cur = append(cur, l)
		if c != "" {
			comment = c
		}
		if st.open() || continues(code) {
			continue
		}
		text := strings.Join(cur, "\n")
		cmds = append(cmds, pendingCommand{docCommand: docCommand{Line: start, Text: text, Curl: curlWord.MatchString(text)}, trailing: comment})
		cur, comment = nil, ""
	}
	if len(cur) > 0 {
		return nil, fmt.Errorf("line %d: a command is not closed (a quote or a trailing backslash)", start)
	}
	out := make([]docCommand, len(cmds))
	for i, c := range cmds {
		if c.Curl && len(curlWord.FindAllString(c.Text, -1)) > 1 {
			return nil, fmt.Errorf("line %d: one curl per command, so that its answer can be checked", c.Line)
		}
		e, err := parseExpectation(c.trailing, c.comments)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", c.Line, err)
		}
		c.Expect = e
		out[i] = c.docCommand
	}
	return out, nil
}

// continues says whether a line's code goes on on the next line: a
// trailing backslash, or a pipe or && or || still waiting for its command.
func continues(code string) bool {
	code = strings.TrimRight(code, " \t")
	return strings.HasSuffix(code, "\\") || strings.HasSuffix(code, "|") || strings.HasSuffix(code, "&&")
}

// pendingCommand is a command with its comments, before they are read.
type pendingCommand struct {
	docCommand
	trailing string   // the comment on its last line
	comments []string // comment lines right after it
	closed   bool     // a blank line came after it: later comments are not its
}

// quoteState follows shell quoting across the lines of a command.
type quoteState struct{ q byte }

func (s *quoteState) open() bool { return s.q != 0 }

// scan reads one line and returns its code (without a comment) and its
// comment ("" for none).
func (s *quoteState) scan(l string) (code, comment string) {
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case s.q == '\'':
			if c == '\'' {
				s.q = 0
			}
		case s.q == '"':
			if c == '\\' {
				i++
			} else if c == '"' {
				s.q = 0
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			s.q = c
		case c == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return l[:i], l[i+1:]
		}
	}
	return l, ""
}

var statusPrefix = regexp.MustCompile(`^(\d{3})\b`)

// parseExpectation reads what a command's comments promise: the trailing
// comment, else the first comment line after it; JSON that is not closed
// on that line goes on over the next comment lines.
func parseExpectation(trailing string, after []string) (expectation, error) {
	first, rest := strings.TrimSpace(trailing), after
	if first == "" && len(after) > 0 {
		first, rest = strings.TrimSpace(after[0]), after[1:]
	}
	var e expectation
	if m := statusPrefix.FindStringSubmatch(first); m != nil {
		fmt.Sscan(m[1], &e.Status)
		first = strings.TrimSpace(first[len(m[1]):])
	}
	if !strings.HasPrefix(first, "{") && !strings.HasPrefix(first, "[") {
		return e, nil
	}
	text := first
	for {
		if n := balancedLen(text); n > 0 {
			e.Body = text[:n]
			return e, nil
		}
		if len(rest) == 0 {
			return e, fmt.Errorf("the JSON of its comment does not close: %s", text)
		}
		text += "\n" + rest[0]
		rest = rest[1:]
	}
}

// balancedLen is the length of the bracketed JSON text starts with, or 0
// when it does not close.
func balancedLen(text string) int {
	depth, inString := 0, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// bodyMatches says whether body is what pattern documents: whitespace
// aside, with "..." standing for anything.
func bodyMatches(pattern, body string) bool {
	squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
	parts := strings.Split(squash(pattern), "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re, err := regexp.Compile(`(?s)^` + strings.Join(parts, ".*") + `$`)
	return err == nil && re.MatchString(squash(body))
}

// shapeDiff lists where the JSON an answer has and the JSON a doc shows
// differ in shape: keys missing on either side, and values of another
// kind (null, and the string "..." in the doc, match anything). Values
// themselves are examples and may differ; arrays compare their first
// elements.
func shapeDiff(path string, doc, got any) []string {
	if doc == nil || got == nil || doc == "..." {
		return nil
	}
	switch d := doc.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: the doc shows an object, the answer has %T", path, got)}
		}
		var diffs []string
		for k, v := range d {
			if gv, ok := g[k]; ok {
				diffs = append(diffs, shapeDiff(path+"."+k, v, gv)...)
			} else {
				diffs = append(diffs, fmt.Sprintf("%s.%s: shown in the doc, not in the answer", path, k))
			}
		}
		for k := range g {
			if _, ok := d[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: in the answer, not shown in the doc", path, k))
			}
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: the doc shows an array, the answer has %T", path, got)}
		}
		if len(d) > 0 && len(g) > 0 {
			return shapeDiff(path+"[0]", d[0], g[0])
		}
		return nil
	}
	if fmt.Sprintf("%T", doc) != fmt.Sprintf("%T", got) {
		return []string{fmt.Sprintf("%s: the doc shows %T, the answer has %T", path, doc, got)}
	}
	return nil
}
