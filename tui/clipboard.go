package tui

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/atotto/clipboard"
	xansi "github.com/charmbracelet/x/ansi"
)

// copiedMsg reports the end of a copy: OSC 52 has been sent, native says
// whether the local clipboard took the text as well, and inside tmux what
// tmux did with it.
type copiedMsg struct {
	what   string // "code block 2 (go)"; "" for the last reply
	chars  int
	lines  int
	native bool
	tmux   *tmuxCopy // nil outside tmux
}

// tmuxCopy is what a copy inside tmux reached. A default tmux drops OSC 52
// (set-clipboard is "external", allow-passthrough off), so the text also
// goes into tmux's paste buffer.
type tmuxCopy struct {
	clipboard bool  // tmux passes OSC 52 on: set-clipboard on or allow-passthrough
	buffer    error // tmux load-buffer's failure; nil: the buffer holds the text
}

// commandRunner runs a program with env and stdin and returns its output;
// /copy runs tmux with it, tests inject one.
type commandRunner func(env []string, stdin, name string, args ...string) (string, error)

// runProgram is the commandRunner of the chat: a few seconds at most.
func runProgram(env []string, stdin, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, name, args...)
	c.Env, c.Stdin = env, strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			return "", fmt.Errorf("%s %s: %s", name, args[0], msg)
		}
		return "", fmt.Errorf("%s %s: %w", name, args[0], err)
	}
	return out.String(), nil
}

// copyText puts text on the clipboard of the machine the user sits at
// with OSC 52, which travels over SSH inside the terminal stream, and
// also on this machine's clipboard when it has one (pbcopy, wl-copy,
// xclip, xsel). Inside tmux the sequence is also sent wrapped for
// passthrough, and the text goes into tmux's paste buffer (load-buffer),
// which a default tmux, dropping OSC 52, leaves as the one place it
// arrives.
func copyText(text, what string, env []string, native bool, run commandRunner) tea.Cmd {
	cmds := []tea.Cmd{tea.SetClipboard(text)}
	inTmux := lookupEnv(env, "TMUX") != ""
	if inTmux {
		seq := xansi.SetSystemClipboard(text)
		cmds = append(cmds, tea.Raw(xansi.TmuxPassthrough(seq)))
	}
	cmds = append(cmds, func() tea.Msg {
		msg := copiedMsg{what: what, chars: len([]rune(text)), lines: strings.Count(text, "\n") + 1}
		if native && !clipboard.Unsupported {
			msg.native = clipboard.WriteAll(text) == nil
		}
		if inTmux {
			msg.tmux = tmuxCopyText(text, env, run)
		}
		return msg
	})
	return tea.Sequence(cmds...)
}

// tmuxCopyText asks tmux whether it passes OSC 52 on and loads text into
// its paste buffer.
func tmuxCopyText(text string, env []string, run commandRunner) *tmuxCopy {
	var tc tmuxCopy
	if out, err := run(env, "", "tmux", "display-message", "-p", "#{set-clipboard} #{allow-passthrough}"); err == nil {
		f := strings.Fields(out)
		tc.clipboard = len(f) > 0 && f[0] == "on" || len(f) > 1 && f[1] != "0" && f[1] != "off"
	}
	_, tc.buffer = run(env, text, "tmux", "load-buffer", "-")
	return &tc
}

// text says where a copy went: an error when inside tmux it reached
// nothing but the passthrough that tmux drops.
func (msg copiedMsg) text() (string, bool) {
	what := commas(msg.chars) + " characters"
	if msg.what != "" {
		what = msg.what + ", " + plural(msg.lines, "line") + ","
	}
	native := ""
	if msg.native {
		native = " and this machine's clipboard"
	}
	tc := msg.tmux
	switch {
	case tc == nil:
		return fmt.Sprintf("Copied %s to your terminal's clipboard (OSC 52)%s.", what, native), true
	case tc.clipboard && tc.buffer == nil:
		return fmt.Sprintf("Copied %s to your terminal's clipboard (OSC 52, through tmux)%s and tmux's buffer (prefix+] pastes).", what, native), true
	case tc.clipboard:
		return fmt.Sprintf("Copied %s to your terminal's clipboard (OSC 52, through tmux)%s.", what, native), true
	case tc.buffer == nil:
		return fmt.Sprintf("Copied %s to tmux's buffer (prefix+] pastes)%s. For your terminal's clipboard too, add set -g set-clipboard on to ~/.tmux.conf.", what, native), true
	case msg.native:
		return fmt.Sprintf("Copied %s to this machine's clipboard; tmux passes OSC 52 on only with set -g set-clipboard on in ~/.tmux.conf (%v).", what, tc.buffer), true
	}
	return fmt.Sprintf("Nothing was copied: inside tmux, OSC 52 reaches your terminal's clipboard only with set -g set-clipboard on in ~/.tmux.conf, and %v. /export writes the conversation to a file.", tc.buffer), false
}
