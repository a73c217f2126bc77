package tui

import (
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Raw HTML in a reply is shown as the model wrote it. glamour sanitises
// HTML to nothing, so a <li>, a <details> or a model's <unused192> would
// vanish with the text inside the tag, and an HTML block would take the
// lines after it (up to a blank line) with it. literalHTML turns every
// tag outside code into text before rendering: its markdown punctuation
// is backslash-escaped, so goldmark reads it as text and glamour prints
// it. orchard interprets no tag: each shows as written (the lines of an
// HTML block flow as a paragraph does).

// htmlParser parses as glamour does (GFM and definition lists), so the
// HTML it finds is the HTML glamour would drop.
var htmlParser = goldmark.New(goldmark.WithExtensions(extension.GFM, extension.DefinitionList)).Parser()

// literalHTML returns src with its raw HTML made literal text. Inline
// HTML and the raw blocks (<pre>, <script>, comments, …) are escaped whole;
// in a block that starts with a tag only the tags are, so the markdown
// lines CommonMark let the block take are read as markdown again. That
// may reveal more HTML (a <li> line that now interrupts a paragraph), so
// it runs again until none is left; the last pass escapes whole blocks.
func literalHTML(src string) string {
	if !strings.Contains(src, "<") {
		return src // most replies: no parse needed
	}
	for pass := 0; ; pass++ {
		out, found := literalPass(src, pass >= 3)
		if !found {
			return out
		}
		src = out
	}
}

// htmlTag matches an open or closing tag as CommonMark defines them.
var htmlTag = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^\s"'=<>` + "`" + `]+|'[^']*'|"[^"]*"))?)*\s*/?>`)

// literalPass escapes the HTML of one parse; found reports whether there
// was any. whole escapes every block line whole.
func literalPass(src string, whole bool) (string, bool) {
	b := []byte(src)
	type span struct {
		seg  text.Segment
		tags bool // escape only the tags in it
	}
	var html []span // in source order
	ast.Walk(htmlParser.Parse(text.NewReader(b)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.RawHTML:
			for i := range n.Segments.Len() {
				html = append(html, span{seg: n.Segments.At(i)})
			}
		case *ast.HTMLBlock:
			tags := !whole && (n.HTMLBlockType == ast.HTMLBlockType6 || n.HTMLBlockType == ast.HTMLBlockType7)
			for i := range n.Lines().Len() {
				seg := n.Lines().At(i)
				// The block's first line always changes, so each pass
				// gets somewhere.
				t := tags && (i > 0 || htmlTag.Match(seg.Value(b)))
				html = append(html, span{seg: seg, tags: t})
			}
			if n.HasClosure() {
				html = append(html, span{seg: n.ClosureLine})
			}
		}
		return ast.WalkContinue, nil
	})
	if len(html) == 0 {
		return src, false
	}
	var out strings.Builder
	out.Grow(len(src) + len(src)/8)
	last := 0
	for _, h := range html {
		if h.seg.Start < last {
			continue // never twice
		}
		out.Write(b[last:h.seg.Start])
		line := b[h.seg.Start:h.seg.Stop]
		if !h.tags {
			escapeMarkdown(&out, line)
		} else {
			at := 0
			for _, m := range htmlTag.FindAllIndex(line, -1) {
				out.Write(line[at:m[0]])
				escapeMarkdown(&out, line[m[0]:m[1]])
				at = m[1]
			}
			out.Write(line[at:])
		}
		last = h.seg.Stop
	}
	out.Write(b[last:])
	return out.String(), true
}

// escapeMarkdown writes s with a backslash before each character markdown
// could read as syntax. These are the escapes glamour prints as the
// character alone; it would print a backslash before any other.
func escapeMarkdown(out *strings.Builder, s []byte) {
	for _, c := range s {
		if strings.IndexByte("\\`*_{}[]<>()#+-.!|", c) >= 0 {
			out.WriteByte('\\')
		}
		out.WriteByte(c)
	}
}
