package tools

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// Chunk sizes, in bytes. A passage is small enough to hand a few to the
// model and large enough to hold an answer with its context.
const (
	chunkTarget  = 900  // a chunk grows up to about this size
	chunkOverlap = 200  // the next chunk of a section repeats up to this much
	chunkHardMax = 1400 // longer paragraphs are split at sentence or word ends
)

var headingLine = regexp.MustCompile(`^(#{1,6})\s+(.+?)\s*#*\s*$`)

// section is the text under one heading.
type section struct {
	heading    string // the heading path, e.g. "Returns › Refunds"
	paragraphs []string
}

// Chunk splits plain text or Markdown into overlapping passages: first by
// headings (each passage starts with its heading path, so it reads on its
// own), then by paragraphs, packed up to the target size; a section's next
// passage repeats the end of the previous one so an answer that straddles
// the cut is still found whole.
func Chunk(text string) []string {
	var out []string
	for _, s := range splitSections(text) {
		out = append(out, chunkSection(s)...)
	}
	return out
}

func splitSections(text string) []section {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var sections []section
	var path [6]string
	cur := section{}
	var para []string
	flushPara := func() {
		if p := strings.TrimSpace(strings.Join(para, "\n")); p != "" {
			cur.paragraphs = append(cur.paragraphs, p)
		}
		para = para[:0]
	}
	flushSection := func() {
		flushPara()
		if len(cur.paragraphs) > 0 {
			sections = append(sections, cur)
		}
	}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inFence = !inFence
		}
		if m := headingLine.FindStringSubmatch(trimmed); m != nil && !inFence {
			flushSection()
			level := len(m[1])
			path[level-1] = m[2]
			for i := level; i < len(path); i++ {
				path[i] = ""
			}
			var parts []string
			for _, p := range path {
				if p != "" {
					parts = append(parts, p)
				}
			}
			cur = section{heading: strings.Join(parts, " › ")}
			continue
		}
		if trimmed == "" && !inFence {
			flushPara()
			continue
		}
		para = append(para, line)
	}
	flushSection()
	return sections
}

func chunkSection(s section) []string {
	var pieces []string
	for _, p := range s.paragraphs {
		pieces = append(pieces, splitLong(p, chunkHardMax)...)
	}
	prefix := ""
	if s.heading != "" {
		prefix = s.heading + "\n\n"
	}
	var out []string
	var cur []string
	size := 0
	emit := func() {
		out = append(out, prefix+strings.Join(cur, "\n\n"))
	}
	for _, p := range pieces {
		if size > 0 && size+len(p) > chunkTarget {
			emit()
			last := cur[len(cur)-1]
			cur, size = nil, 0
			if o := tail(last, chunkOverlap); o != "" {
				cur, size = []string{o}, len(o)
			}
		}
		cur = append(cur, p)
		size += len(p) + 2
	}
	if len(cur) > 0 {
		emit()
	}
	return out
}

// tail returns the end of p, at most n bytes, starting at a sentence (or
// else a word) boundary; all of p when it is short.
func tail(p string, n int) string {
	if len(p) <= n {
		return p
	}
	t := p[len(p)-n:]
	if i := strings.Index(t, ". "); i >= 0 && i < len(t)-2 {
		return t[i+2:]
	}
	if i := strings.IndexByte(t, ' '); i >= 0 {
		return t[i+1:]
	}
	return ""
}

// splitLong cuts p into pieces of at most max bytes, at sentence ends where
// it can and at spaces otherwise.
func splitLong(p string, max int) []string {
	var out []string
	for len(p) > max {
		cut := strings.LastIndex(p[:max], ". ")
		if cut < max/2 {
			cut = strings.LastIndexByte(p[:max], ' ')
		} else {
			cut++ // keep the period
		}
		if cut <= 0 {
			cut = max
			for cut > 0 && !utf8.RuneStart(p[cut]) {
				cut--
			}
		}
		out = append(out, strings.TrimSpace(p[:cut]))
		p = strings.TrimSpace(p[cut:])
	}
	if p != "" {
		out = append(out, p)
	}
	return out
}

// blockTags end a paragraph in HTML; skipTags hold no readable text.
var (
	blockTags = map[string]bool{
		"p": true, "div": true, "section": true, "article": true, "main": true, "header": true, "footer": true,
		"aside": true, "nav": true, "ul": true, "ol": true, "li": true, "dl": true, "dt": true, "dd": true,
		"table": true, "tr": true, "blockquote": true, "pre": true, "hr": true, "figure": true, "figcaption": true,
		"form": true, "fieldset": true, "address": true, "details": true, "summary": true,
	}
	skipTags = map[string]bool{
		"script": true, "style": true, "noscript": true, "template": true, "svg": true, "iframe": true,
		"object": true, "head": true, "canvas": true,
	}
	headingLevel = map[string]int{"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
)

// HTMLToText turns an HTML document into Markdown-like text for Chunk:
// headings become "#" lines, block elements end paragraphs, scripts and
// styles are dropped. It also returns the document's <title>.
func HTMLToText(doc string) (text, title string) {
	z := html.NewTokenizer(strings.NewReader(doc))
	var b strings.Builder
	skip := 0
	inTitle := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return normalizeText(b.String()), strings.Join(strings.Fields(title), " ")
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if tag == "title" {
				inTitle = tt == html.StartTagToken
				continue
			}
			if skipTags[tag] {
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch {
			case headingLevel[tag] > 0 && tt == html.StartTagToken:
				b.WriteString("\n\n" + strings.Repeat("#", headingLevel[tag]) + " ")
			case headingLevel[tag] > 0:
				b.WriteString("\n\n")
			case tag == "br":
				b.WriteString("\n")
			case blockTags[tag]:
				b.WriteString("\n\n")
			case tag == "td" || tag == "th":
				b.WriteString(" ")
			}
		case html.TextToken:
			if inTitle {
				title += string(z.Text())
				continue
			}
			if skip > 0 {
				continue
			}
			// Whitespace around inline text separates words: keep one space.
			raw := string(z.Text())
			if raw != strings.TrimLeftFunc(raw, unicode.IsSpace) {
				b.WriteString(" ")
			}
			b.WriteString(strings.Join(strings.Fields(raw), " "))
			if raw != strings.TrimRightFunc(raw, unicode.IsSpace) {
				b.WriteString(" ")
			}
		}
	}
}

var manyNewlines = regexp.MustCompile(`\n{3,}`)

// normalizeText trims every line and keeps at most one blank line in a row.
func normalizeText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.TrimSpace(manyNewlines.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}
