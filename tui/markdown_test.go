package tui

import (
	"strings"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

func TestSafeBoundary(t *testing.T) {
	cases := []struct {
		name, text string
		want       string // text[:boundary]
	}{
		{"paragraphs", "One.\n\nTwo.\n\nThr", "One.\n\n"},
		{"incomplete next line decides nothing", "One.\n\nTw", ""},
		{"complete next line", "One.\n\nTwo\n", "One.\n\n"},
		{"inside a fence", "Text\n\n```go\nfunc a() {}\n\nfunc b() {}\n", "Text\n\n"},
		{"after a closed fence", "```\ncode\n```\n\nAfter\n", "```\ncode\n```\n\n"},
		{"loose list item", "- a\n\n- b\n", ""},
		{"list then paragraph", "- a\n- b\n\nAfter\n", "- a\n- b\n\n"},
		{"indented continuation", "1. a\n\n   more\n", ""},
		{"link definitions stop it", "[x]: http://x\n\nText\n\nMore\n", ""},
		{"html stops it", "Text\n\n<div>\n\nx\n\nMore\n", "Text\n\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := safeBoundary(c.text, 0)
			if got := c.text[:b]; got != c.want {
				t.Fatalf("boundary after %q, want after %q", got, c.want)
			}
		})
	}
}

// TestStreamingMarkdownMatchesFullRender checks that rendering a reply
// token by token ends with the same lines as rendering it once, for
// prose cut at safe boundaries.
func TestStreamingMarkdownMatchesFullRender(t *testing.T) {
	md := newMarkdown(true, false)
	text := goldenReply + "\n\nA second paragraph with `code`.\n\n## Heading\n\nLast words."
	var s streamMarkdown
	var got []string
	for i := 1; i <= len(text); i++ {
		got = s.render(md, text[:i], 60, 0)
	}
	want := md.render(text, 60)
	// Equal as seen: escape sequences may be split differently.
	if xansi.Strip(strings.Join(got, "\n")) != xansi.Strip(strings.Join(want, "\n")) {
		t.Fatalf("streamed render differs:\n%s\n---\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s.stable == 0 {
		t.Fatal("no stable prefix was ever cached")
	}
}

func TestCleanLines(t *testing.T) {
	md := newMarkdown(true, false)
	for _, l := range md.render("Some *text* here.\n\n| a | b |\n|---|---|\n| 1 | 2 |", 40) {
		if strings.HasSuffix(xansi.Strip(l), " ") {
			t.Errorf("trailing padding kept: %q", l)
		}
		if xansi.StringWidth(l) > 40 {
			t.Errorf("line wider than 40: %q", l)
		}
		if strings.Contains(l, "\x1b[") && !strings.HasSuffix(l, "\x1b[m") && !strings.HasSuffix(l, "\x1b[0m") {
			t.Errorf("style left open: %q", l)
		}
	}
	if got := trimStyledSpace("\x1b[1mab\x1b[m\x1b[2m   \x1b[m"); got != "\x1b[1mab\x1b[m" {
		t.Errorf("trimStyledSpace = %q", got)
	}
}

func TestSplitThinking(t *testing.T) {
	text := "intro " + thinkOpen + "thought\nhmm" + thinkClose + "answer" + thinkOpen + "more"
	parts := splitThinking(text)
	var got []string
	for _, p := range parts {
		kind := "answer"
		if p.thinking {
			kind = "thinking"
			if p.open {
				kind += "(open)"
			}
		}
		got = append(got, kind+":"+text[p.start:p.end])
	}
	want := "answer:intro |thinking:thought\nhmm|answer:answer|thinking(open):more"
	if strings.Join(got, "|") != want {
		t.Fatalf("parts = %q", strings.Join(got, "|"))
	}
	if p := splitThinking("abc<|chan"); len(p) != 1 || p[0].end != 3 {
		t.Fatalf("a partial marker is shown: %+v", p)
	}
	if got := stripThinking(text); got != "intro answer" {
		t.Fatalf("stripThinking = %q", got)
	}
}

func TestAppendRunsApportionsMixedDeltas(t *testing.T) {
	runs := appendRuns(nil, 0, engine.Delta{Text: "aaaa"})
	runs = appendRuns(runs, 4, engine.Delta{Text: "bbbbcccc", FromDraft: []bool{true, false}})
	runs = appendRuns(runs, 12, engine.Delta{Text: "dd", FromDraft: []bool{false}})
	want := []draftRun{{4, false}, {8, true}, {14, false}}
	if len(runs) != len(want) {
		t.Fatalf("runs = %+v", runs)
	}
	for i := range want {
		if runs[i] != want[i] {
			t.Fatalf("runs = %+v, want %+v", runs, want)
		}
	}
	if got := clipRuns(runs, 6); len(got) != 2 || got[1].end != 6 {
		t.Fatalf("clipRuns = %+v", got)
	}
}

func TestFormatting(t *testing.T) {
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 2048: "2,048", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := commas(in); got != want {
			t.Errorf("commas(%d) = %q", in, got)
		}
	}
	if got := humanBytes(612 << 20); got != "612 MiB" {
		t.Errorf("humanBytes = %q", got)
	}
	if got := sparkline([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 8); got != "▁▂▃▄▅▆▇█" {
		t.Errorf("sparkline = %q", got)
	}
	if got := sparkline([]float64{5, 5}, 8); got != "▁▁" {
		t.Errorf("flat sparkline = %q", got)
	}
	if got := specCapability([]int{2, 4, 16}); got != "verify 2–16" {
		t.Errorf("specCapability = %q", got)
	}
}

// TestRawHTMLShownAsWritten: glamour drops every tag; a reply shows the
// HTML its model wrote as text, outside code as inside, and an HTML
// block no longer takes the markdown after it.
func TestRawHTMLShownAsWritten(t *testing.T) {
	md := newMarkdown(true, true)
	for _, c := range []struct {
		in   string
		want []string // each on the screen, in order
		not  []string
	}{
		{"The token <unused192> appeared here.", []string{"The token <unused192> appeared here."}, nil},
		{"A <b>bold</b> word and <i>one</i> more.", []string{"A <b>bold</b> word and <i>one</i> more."}, nil},
		{"Steps:\n\n<ol>\n  <li>one</li>\n  <li>two</li>\n</ol>", []string{"<ol> <li>one</li> <li>two</li> </ol>"}, nil},
		{"<details>\n<summary>Answer</summary>\n\n**42**, of course.\n</details>", []string{"<details> <summary>Answer</summary>", "**42**, of course. </details>"}, nil},
		// The lines after a one-line tag stay markdown: the list is a list.
		{"<unused7>\n- apples\n- pears", []string{"<unused7>", "• apples", "• pears"}, []string{"- apples"}},
		{"<!-- note -->\nText after.", []string{"<!-- note --> Text after."}, nil},
		{`<img src="a_b_c.png" alt="*x*">`, []string{`<img src="a_b_c.png" alt="*x*">`}, nil},
		{"- item <br> two\n- <li>x</li>", []string{"• item <br> two", "• <li>x</li>"}, nil},
		{"| a | b |\n|---|---|\n| x<br>y | <i>z</i> |", []string{"x<br>y", "<i>z</i>"}, nil},
		// Code is code, as before; autolinks and a lone < are text.
		{"Use `<div>` here.", []string{"Use <div> here."}, []string{`\<`}},
		{"```html\n<li>x</li>\n```", []string{"<li>x</li>"}, []string{`\<`}},
		{"a < b and <https://example.com>", []string{"a < b and https://example.com"}, nil},
	} {
		var lines []string
		for _, l := range md.render(c.in, 60) {
			lines = append(lines, strings.TrimSpace(xansi.Strip(l)))
		}
		got := strings.Join(lines, "\n")
		at := 0
		for _, w := range c.want {
			i := strings.Index(got[at:], w)
			if i < 0 {
				t.Errorf("%q renders as\n%s\nwant %q (after byte %d)", c.in, got, w, at)
				break
			}
			at += i + len(w)
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%q renders as\n%s\nwith %q", c.in, got, n)
			}
		}
	}
}

// FuzzLiteralHTML: whatever a model writes, literalHTML ends and leaves
// no HTML for glamour to drop.
func FuzzLiteralHTML(f *testing.F) {
	for _, s := range []string{"<b>x</b>", "<ol>\n<li>a</li>\n</ol>", "<!--\n\n-->", "<pre>\n\n</pre>", "<div\nclass=x>\n- a", "\\<b>", "> <details>\n> - x", "1. <unused1>\n   <li>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		out := literalHTML(s)
		if _, found := literalPass(out, false); found {
			t.Fatalf("HTML left in %q (from %q)", out, s)
		}
	})
}
