package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestChunk(t *testing.T) {
	long := strings.Repeat("Our kettles are tested for ten thousand boil cycles before they ship. ", 40) // ~2.8 KB, one paragraph
	tests := []struct {
		name string
		text string
		want []string // each chunk must contain these, in order
	}{
		{"empty", " \n\n \n", nil},
		{"plain paragraphs", "First paragraph.\n\nSecond paragraph.", []string{"First paragraph.\n\nSecond paragraph."}},
		{"headings start sections with their path", "# Returns\n\nThirty days.\n\n## Refunds\n\nFive days.\n\n# Shipping\n\nThree days.",
			[]string{"Returns\n\nThirty days.", "Returns › Refunds\n\nFive days.", "Shipping\n\nThree days."}},
		{"heading without text is dropped", "# Empty\n\n# Full\n\nText.", []string{"Full\n\nText."}},
		{"code fence keeps # lines", "# Setup\n\n```\n# not a heading\nrun it\n```", []string{"Setup\n\n```\n# not a heading\nrun it\n```"}},
		{"CRLF", "# A\r\n\r\nB\r\n", []string{"A\n\nB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Chunk(tt.text)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d chunks %q, want %q", len(got), got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("chunk %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}

	t.Run("long sections split with overlap", func(t *testing.T) {
		var paras []string
		for i := range 30 {
			paras = append(paras, strings.Repeat("word ", 20)+"sentence number "+string(rune('A'+i))+".")
		}
		got := Chunk("# Care guide\n\n" + strings.Join(paras, "\n\n"))
		if len(got) < 3 {
			t.Fatalf("got %d chunks", len(got))
		}
		for i, c := range got {
			if !strings.HasPrefix(c, "Care guide\n\n") {
				t.Fatalf("chunk %d lacks its heading: %.40q", i, c)
			}
			if len(c) > chunkTarget+chunkOverlap+200 {
				t.Fatalf("chunk %d is %d bytes", i, len(c))
			}
			if i > 0 {
				// The first paragraph of a chunk repeats the last of the one before.
				prev := got[i-1][strings.LastIndex(got[i-1], "\n\n")+2:]
				if !strings.Contains(c, prev) {
					t.Fatalf("chunk %d does not overlap chunk %d", i, i-1)
				}
			}
		}
		all := strings.Join(got, "\n")
		for _, p := range paras {
			if !strings.Contains(all, p) {
				t.Fatalf("paragraph lost: %q", p)
			}
		}
	})

	t.Run("long paragraph split at sentences", func(t *testing.T) {
		got := Chunk(long + "\n\n" + strings.Repeat("é", 2000))
		for i, c := range got {
			if len(c) > chunkHardMax+chunkOverlap+10 {
				t.Fatalf("chunk %d is %d bytes", i, len(c))
			}
			if !utf8.ValidString(c) {
				t.Fatalf("chunk %d cuts a character", i)
			}
		}
		if !strings.HasSuffix(strings.TrimSpace(got[0]), "ship.") {
			t.Fatalf("first chunk does not end at a sentence: %q", got[0][len(got[0])-30:])
		}
	})
}

func TestHTMLToText(t *testing.T) {
	doc := `<!doctype html><html><head><title> Help &amp; FAQ </title><style>p{color:red}</style>
	<script>alert("x")</script></head><body><nav>Home</nav>
	<h1>Shipping</h1><p>We ship <em>worldwide</em>.<br>Tracking is<b>included</b>.</p>
	<h2>Costs</h2><ul><li>Standard: 5 &euro;</li><li>Express: 15 &euro;</li></ul>
	<noscript>enable js</noscript><table><tr><td>Zone</td><td>Days</td></tr></table></body></html>`
	text, title := HTMLToText(doc)
	if title != "Help & FAQ" {
		t.Fatalf("title = %q", title)
	}
	want := "Home\n\n# Shipping\n\nWe ship worldwide.\nTracking isincluded.\n\n## Costs\n\nStandard: 5 €\n\nExpress: 15 €\n\nZone Days"
	if text != want {
		t.Fatalf("text =\n%q\nwant\n%q", text, want)
	}
	chunks := Chunk(text)
	if len(chunks) != 3 || !strings.HasPrefix(chunks[2], "Shipping › Costs\n\n") {
		t.Fatalf("chunks = %q", chunks)
	}
}

func TestCapOutput(t *testing.T) {
	if s, cut := capOutput([]byte("short"), false); s != "short" || cut {
		t.Fatalf("short = %q %v", s, cut)
	}
	big := []byte(strings.Repeat("€", MaxOutputBytes)) // 3 bytes each
	s, cut := capOutput(big, false)
	if !cut || !utf8.ValidString(s) || !strings.Contains(s, "[output truncated") || len(s) > MaxOutputBytes+100 {
		t.Fatalf("big: %d bytes, cut %v", len(s), cut)
	}
	if s, _ := capOutput([]byte("a\xffb"), false); s != "a\uFFFDb" {
		t.Fatalf("invalid UTF-8 = %q", s)
	}
}

// FuzzChunk: any upload turns into passages without panicking, each within
// the size bounds and valid UTF-8 when the input was.
func FuzzChunk(f *testing.F) {
	for _, s := range []string{"", "# A\n\nB", "<h1>x</h1><p>y", "```\n# a\n", strings.Repeat("é", 3000), "a. b. c.\r\n\r\n#\n##  \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, _ := HTMLToText(s)
		for _, in := range []string{s, text} {
			for _, c := range Chunk(in) {
				if strings.TrimSpace(c) == "" {
					t.Fatalf("empty chunk from %q", in)
				}
				if utf8.ValidString(in) && !utf8.ValidString(c) {
					t.Fatalf("invalid UTF-8 chunk %q from %q", c, in)
				}
			}
		}
	})
}
