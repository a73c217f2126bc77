package tui

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/orchard-llm/orchard/engine"
)

func TestCodeBlocks(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []codeBlock // lang, code, top
	}{
		{"none", "just *text*", nil},
		{"one", "Here:\n```go\nfunc f() {}\n```\nDone.", []codeBlock{{lang: "go", code: "func f() {}", top: true}}},
		{"tilde and plain", "~~~\na\nb\n~~~\n\n```python title\nprint(1)\n```", []codeBlock{
			{code: "a\nb", top: true}, {lang: "python", code: "print(1)", top: true}}},
		{"in a list", "1. step\n\n   ```sh\n   ls\n   ```\n", []codeBlock{{lang: "sh", code: "ls"}}},
		{"unclosed", "```js\nlet x = 1\n", []codeBlock{{lang: "js", code: "let x = 1", top: true}}},
		{"longer fence", "````md\n```\ninner\n```\n````", []codeBlock{{lang: "md", code: "```\ninner\n```", top: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := codeBlocks(tt.src)
			if len(got) != len(tt.want) {
				t.Fatalf("%d blocks, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.lang != w.lang || g.code != w.code || g.top != w.top {
					t.Errorf("block %d = %+v, want %+v", i, g, w)
				}
				if g.top && !strings.HasPrefix(strings.TrimLeft(tt.src[g.start:], " "), "```") && !strings.HasPrefix(tt.src[g.start:], "~~~") {
					t.Errorf("block %d starts at %q", i, tt.src[g.start:])
				}
			}
		})
	}
}

// TestCodeLabelsNumberTheConversation: every block is labelled where it
// starts, numbered through the conversation (user messages too), and
// /copy code N names the block it copied.
func TestCodeLabelsNumberTheConversation(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 100, 50, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{
		{Role: "user", Content: "Fix this:\n```go\nx := 1\n```"},
		{Role: "model", Content: "Two ways:\n\n```go\nx := 2\n```\n\nor\n\n```python\nx = 2\nprint(x)\n```\n\nDone."},
	}})
	got := plain(m)
	for _, want := range []string{"code 1 · go · /copy code 1", "code 2 · go · /copy code 2", "code 3 · python · /copy code 3"} {
		if !strings.Contains(got, want) {
			t.Fatalf("no label %q:\n%s", want, got)
		}
	}
	// The label is right above the code.
	lines := strings.Split(got, "\n")
	for i, l := range lines {
		if strings.Contains(l, "code 3 · python") && !strings.Contains(lines[i+1], "x = 2") {
			t.Fatalf("the line after the label is %q", lines[i+1])
		}
	}
	for _, tt := range []struct {
		arg, toast string
	}{
		{"code 4", "There is no code block 4; the conversation has 3 blocks."},
		{"code x", "/copy code takes the number of a block"},
		{"codes", "/copy takes nothing (the last reply) or code [N]"},
	} {
		m.Update(press("esc"))
		typeText(m, "/copy "+tt.arg)
		m.Update(press("enter"))
		if !strings.Contains(m.toast.last, tt.toast) {
			t.Errorf("/copy %s: toast %q, want %q", tt.arg, m.toast.last, tt.toast)
		}
	}
	cb, n, total := m.conv.CodeBlock(0)
	if n != 3 || total != 3 || cb.code != "x = 2\nprint(x)" {
		t.Fatalf("the last block is %d of %d: %+v", n, total, cb)
	}
}

// TestCopyCodeOverOSC52: /copy code N sends exactly the block's code
// over OSC 52 (the real program loop) and says which block it was.
func TestCopyCodeOverOSC52(t *testing.T) {
	reply := "Run:\n\n```sh\nmake test\nmake lint\n```\n\nThen:\n\n```go\nfmt.Println(\"ok\")\n```\n"
	f := testFake(t, FakeOptions{Reply: func(string, int, engine.Settings) string { return reply }})
	m, err := newModel(f, Options{Env: []string{"HOME=" + t.TempDir()}, NoNativeClipboard: true, AutosaveEvery: -1, Theme: "dark"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	m.done = done
	m.calls = newCallQueue(f, nil)
	defer func() { close(done); m.calls.close() }()
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 40))
	waitFor := func(what ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			for _, w := range what {
				if !strings.Contains(string(b), w) {
					return false
				}
			}
			return true
		}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	enter := func(s string) {
		tm.Type(s)
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	}
	enter("how do I check it?")
	waitFor("code 2 · go")
	enter("/copy code 1")
	waitFor("\x1b]52;c;"+base64.StdEncoding.EncodeToString([]byte("make test\nmake lint")), "Copied code block 1 (sh), 2 lines")
	enter("/copy code")
	waitFor("\x1b]52;c;"+base64.StdEncoding.EncodeToString([]byte(`fmt.Println("ok")`)), "2 (go), 1 line")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
