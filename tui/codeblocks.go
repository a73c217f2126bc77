package tui

import (
	"bytes"
	"fmt"
	"strings"

	xansi "github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Code blocks are numbered through the conversation, in the order they
// are shown, and labelled where they start ("code 3 · go"), so
// /copy code 3 copies the block the user is looking at — the terminal's
// answer to the copy button a web chat puts on every block.

// codeBlock is a fenced code block of a message.
type codeBlock struct {
	lang  string
	code  string
	top   bool // a block of the document itself, not inside a list or quote: labelled in place
	start int  // byte offset of its opening fence line, −1 when unknown
}

var mdParser = goldmark.New().Parser()

// codeBlocks finds the fenced code blocks of markdown text, in order.
func codeBlocks(src string) []codeBlock {
	if !strings.Contains(src, "```") && !strings.Contains(src, "~~~") {
		return nil // most messages: no parse needed
	}
	b := []byte(src)
	doc := mdParser.Parse(text.NewReader(b))
	var out []codeBlock
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fc, ok := n.(*ast.FencedCodeBlock)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		var code bytes.Buffer
		lines := fc.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			code.Write(seg.Value(b))
		}
		out = append(out, codeBlock{lang: string(fc.Language(b)), code: strings.TrimSuffix(code.String(), "\n"),
			top: fc.Parent() == doc, start: fenceStart(fc, b)})
		return ast.WalkSkipChildren, nil
	})
	return out
}

// fenceStart is the offset of the line that opens fc.
func fenceStart(fc *ast.FencedCodeBlock, src []byte) int {
	at := -1
	switch {
	case fc.Info != nil:
		at = fc.Info.Segment.Start
	case fc.Lines().Len() > 0:
		// The first code line; the fence is the line before it.
		first := fc.Lines().At(0).Start
		at = bytes.LastIndexByte(src[:first], '\n')
		if at < 0 {
			return -1
		}
	default:
		return -1
	}
	return bytes.LastIndexByte(src[:at], '\n') + 1
}

// codeMarker stands in for a label while the markdown is rendered; the
// rendered line that holds it is replaced by the label.
const codeMarker = "%%orchardcode"

// markCode puts a marker paragraph before each top-level block, numbered
// from first.
func markCode(src string, blocks []codeBlock, first int) string {
	var b strings.Builder
	last := 0
	for i, cb := range blocks {
		if !cb.top || cb.start < last {
			continue
		}
		b.WriteString(src[last:cb.start])
		fmt.Fprintf(&b, "\n%s%d%%%%\n\n", codeMarker, first+i)
		last = cb.start
	}
	b.WriteString(src[last:])
	return b.String()
}

// labelCode replaces the marker lines of rendered markdown with labels.
func labelCode(lines []string, blocks []codeBlock, first int, label func(n int, lang string) string) []string {
	for i, l := range lines {
		at := strings.Index(l, codeMarker)
		if at < 0 {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(l[at+len(codeMarker):], "%d", &n); err != nil || n < first || n-first >= len(blocks) {
			continue
		}
		lines[i] = label(n, blocks[n-first].lang)
		// The label sits right above its block.
		if i+1 < len(lines) && strings.TrimSpace(xansi.Strip(lines[i+1])) == "" {
			lines = append(lines[:i+1], lines[i+2:]...)
		}
	}
	return lines
}

// codeLabel is the text of a block's label.
func codeLabel(n int, lang string) string {
	s := fmt.Sprintf("code %d", n)
	if lang != "" {
		s += " · " + lang
	}
	return s + fmt.Sprintf(" · /copy code %d", n)
}
