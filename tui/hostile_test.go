package tui

import (
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// The probe's payloads: a window title, a screen clear, a clipboard
// write, a colour no NO_COLOR style uses, an 8-bit CSI and a bidi override.
const (
	evilTitle = "\x1b]0;pwned\x07"
	evilClear = "\x1b[2J"
	evilClip  = "\x1b]52;c;cm0gLXJmIH4=\x07"
	evilSGR   = "\x1b[38;5;200m"
	evilC1    = "\u009b31m"
	evilBidi  = "\u202e"
)

// injected reports which hostile sequence reached the screen as itself.
func injected(s string) string {
	for _, bad := range []string{"\x1b]", evilClear, evilSGR, "\x07", "\u009b", evilBidi} {
		if strings.Contains(s, bad) {
			return bad
		}
	}
	return ""
}

// Issue 14, item 1: message text (the user's, the model's, a loaded
// checkpoint's), checkpoint metadata and the bundle name never reach the
// terminal as escapes; they are shown spelled out. Our own styles and the
// markdown rendering still work.
func TestViewsShowFileTextVisibly(t *testing.T) {
	all := evilTitle + evilClear + evilClip + evilSGR + evilC1 + evilBidi
	f := testFake(t, FakeOptions{Info: engine.ModelInfo{Name: "gemma" + evilTitle, Family: "r1", Context: 2048, Notes: []string{"note" + evilClear}}})
	m := newTestModel(t, f, 120, 40, Options{Env: []string{"NO_COLOR=1"}})
	if bad := injected(m.View().Content); bad != "" {
		t.Fatalf("%q reached the welcome screen", bad)
	}
	if title := m.View().WindowTitle; strings.ContainsAny(title, "\x1b\x07") {
		t.Fatalf("window title %q carries control characters", title)
	}
	send(m, engine.Cleared{Messages: []engine.Message{
		{Role: "user", Content: "question " + all},
		{Role: "model", Content: "# Heading\n\n**bold** " + all + "\n\n- item " + evilSGR},
	}})
	send(m, engine.Started{PromptTokens: 5},
		&engine.Delta{Text: thinkOpen + "thought\nhidden " + all + thinkClose, Tokens: []int{1}, FromDraft: []bool{true}, Live: live(1, 10, engine.SpecOn, 0)},
		&engine.Delta{Text: "streamed " + all + "\n\nmore", Tokens: []int{2}, FromDraft: []bool{true}, Live: live(2, 10, engine.SpecOn, 0)})
	send(m, engine.Checkpoints{Op: "list", List: []engine.CheckpointInfo{{Name: "evil", Bundle: all, Turns: 1}}})
	m.Update(press("ctrl+s"))
	views := map[string]string{"streaming": m.View().Content}
	send(m, engine.Finished{Reply: thinkOpen + "thought\nhidden " + all + thinkClose + "streamed " + all + "\n\nmore"})
	views["finished"] = m.View().Content
	m.Update(press("ctrl+r"))
	views["thinking"] = m.View().Content
	m.Update(press("ctrl+x"))
	views["drafts"] = m.View().Content
	send(m, engine.Failed{Op: "load", Err: errErr("checkpoint \"evil\": orchard.json: buffer " + all + ": bad")})
	views["toast"] = m.View().Content
	for name, v := range views {
		if bad := injected(v); bad != "" {
			t.Errorf("%s view: %q reached the terminal", name, bad)
		}
	}
	got := plain(m)
	for _, want := range []string{`\x1b]0;pwned\x07`, `\x1b[2J`, `\u009b31m`, `\u202e`, `⚠ \x1b]`} {
		if !strings.Contains(got+views["finished"], want) {
			t.Errorf("the escape %s is not shown visibly", want)
		}
	}
	// In colour, markdown is still rendered and our styles still apply.
	c := newTestModel(t, f, 120, 40, Options{})
	send(c, engine.Cleared{Messages: []engine.Message{{Role: "model", Content: "# Heading\n\n**bold** " + all}}})
	if v := c.View().Content; !strings.Contains(v, "Heading") || strings.Contains(plain(c), "# Heading") || injected(v) != "" || !strings.Contains(v, "\x1b[") {
		t.Errorf("colour view: markdown not rendered, styles lost, or %q injected:\n%s", injected(v), plain(c))
	}
	if text, _ := m.conv.LastReply(); injected(text) != "" {
		t.Errorf("/copy would put %q on the clipboard", injected(text))
	}
}

// The picker shows bundle names and problems from files.
func TestPickerShowsFileTextVisibly(t *testing.T) {
	p := NewPicker([]PickerEntry{
		{Name: "ok" + evilTitle, Family: "r1", Path: "/m/" + evilClear, Valid: true},
		{Name: "bad", Path: "/m/bad", Reason: "tokenizer.json: token " + evilClip + " has id 2000000000"},
	})
	p.st = newStyles(true, true)
	if bad := injected(p.View()); bad != "" {
		t.Fatalf("%q reached the picker", bad)
	}
	if !strings.Contains(p.View(), `ok\x1b]0;pwned\x07`) {
		t.Fatalf("picker:\n%s", p.View())
	}
}

type errErr string

func (e errErr) Error() string { return string(e) }

// Attachment chips show names from checkpoints visibly, and a thumbnail
// whose header claims a huge picture is not decoded.
func TestAttachmentChipsAreSafe(t *testing.T) {
	c := newConversation(newStyles(true, false), newMarkdown(true, false), nil)
	c.SetSize(80, 20)
	// A PNG header for 100000×100000 pixels, nothing after it.
	bomb := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x01\x86\xa0\x00\x01\x86\xa0\x08\x02\x00\x00\x00\x00\x00\x00\x00")
	lines := c.chips([]engine.Attachment{{Kind: "image", Name: "cat" + evilTitle + ".png", SHA256: "ab", Thumbnail: bomb}}, 80)
	if len(lines) != 1 || injected(lines[0]) != "" || !strings.Contains(lines[0], `cat\x1b]0;pwned\x07.png`) {
		t.Fatalf("chips: %q", lines)
	}
}
