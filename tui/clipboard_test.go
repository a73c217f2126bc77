package tui

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/engine"
)

// sequenceMsgs runs a command and the commands of a sequence or batch it
// returns, and collects their messages.
func sequenceMsgs(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeOf(tea.Cmd(nil)) {
		var out []tea.Msg
		for i := range v.Len() {
			out = append(out, sequenceMsgs(v.Index(i).Interface().(tea.Cmd))...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// fakeTmux answers display-message with its options and load-buffer with
// its error, keeping what was loaded.
type fakeTmux struct {
	options string // "external 0": a default tmux
	loadErr error
	loaded  []string
	calls   []string
}

func (ft *fakeTmux) run(env []string, stdin, name string, args ...string) (string, error) {
	ft.calls = append(ft.calls, name+" "+strings.Join(args, " "))
	if !slices.Contains(env, "TMUX=/tmp/tmux-1000/default,4242,0") {
		return "", errors.New("no $TMUX")
	}
	switch args[0] {
	case "display-message":
		return ft.options + "\n", nil
	case "load-buffer":
		if ft.loadErr != nil {
			return "", ft.loadErr
		}
		ft.loaded = append(ft.loaded, stdin)
		return "", nil
	}
	return "", errors.New("unexpected")
}

// TestCopyInsideTmux: a default tmux drops OSC 52, so /copy puts the text
// in tmux's buffer and says so (and how to reach the terminal's clipboard
// too); where tmux passes OSC 52 on it says that; where nothing took the
// text it says how to enable it, as an error. Outside tmux, tmux is never
// run.
func TestCopyInsideTmux(t *testing.T) {
	reply := "Plant in early spring."
	tmuxEnv := []string{"HOME=/home/test", "TMUX=/tmp/tmux-1000/default,4242,0"}
	for _, c := range []struct {
		name    string
		env     []string
		tmux    fakeTmux
		want    string
		isError bool
	}{
		{"no tmux", []string{"HOME=/home/test"}, fakeTmux{},
			"Copied 22 characters to your terminal's clipboard (OSC 52).", false},
		{"default tmux", tmuxEnv, fakeTmux{options: "external 0"},
			"Copied 22 characters to tmux's buffer (prefix+] pastes). For your terminal's clipboard too, add set -g set-clipboard on to ~/.tmux.conf.", false},
		{"set-clipboard on", tmuxEnv, fakeTmux{options: "on 0"},
			"Copied 22 characters to your terminal's clipboard (OSC 52, through tmux) and tmux's buffer (prefix+] pastes).", false},
		{"allow-passthrough", tmuxEnv, fakeTmux{options: "external 1"},
			"Copied 22 characters to your terminal's clipboard (OSC 52, through tmux) and tmux's buffer (prefix+] pastes).", false},
		{"old tmux", tmuxEnv, fakeTmux{options: "external"},
			"Copied 22 characters to tmux's buffer (prefix+] pastes).", false},
		{"load-buffer fails", tmuxEnv, fakeTmux{options: "external 0", loadErr: errors.New("tmux load-buffer: no server running on /tmp/tmux-1000/default")},
			"Nothing was copied: inside tmux, OSC 52 reaches your terminal's clipboard only with set -g set-clipboard on in ~/.tmux.conf, and tmux load-buffer: no server running on /tmp/tmux-1000/default. /export writes the conversation to a file.", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := testFake(t, FakeOptions{Messages: []engine.Message{{Role: "user", Content: "When?"}, {Role: "model", Content: reply}}})
			m := newTestModel(t, f, 100, 30, Options{Env: c.env})
			ft := c.tmux
			m.run = ft.run
			var copied *copiedMsg
			for _, msg := range sequenceMsgs(m.runCommand("/copy")) {
				if cm, ok := msg.(copiedMsg); ok {
					copied = &cm
				}
			}
			if copied == nil {
				t.Fatal("no copiedMsg")
			}
			m.Update(*copied)
			if !strings.HasPrefix(m.toast.text, c.want) || (m.toast.kind == toastError) != c.isError {
				t.Errorf("toast (error %v) %q\nwant %q", m.toast.kind == toastError, m.toast.text, c.want)
			}
			if c.env[len(c.env)-1] != tmuxEnv[1] {
				if len(ft.calls) > 0 {
					t.Errorf("tmux ran outside tmux: %v", ft.calls)
				}
				return
			}
			if c.tmux.loadErr == nil && !slices.Equal(ft.loaded, []string{reply}) {
				t.Errorf("tmux's buffer got %q", ft.loaded)
			}
		})
	}
}
