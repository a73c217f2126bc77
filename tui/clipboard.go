package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/atotto/clipboard"
	xansi "github.com/charmbracelet/x/ansi"
)

// copiedMsg reports the end of a copy: OSC 52 has been sent, and
// native says whether the local clipboard took the text as well.
type copiedMsg struct {
	what   string // "code block 2 (go)"; "" for the last reply
	chars  int
	lines  int
	native bool
}

// copyText puts text on the clipboard of the machine the user sits at
// with OSC 52, which travels over SSH inside the terminal stream, and
// also on this machine's clipboard when it has one (pbcopy, wl-copy,
// xclip, xsel). Inside tmux the sequence is also sent wrapped for
// passthrough, for sessions where tmux's own set-clipboard is off.
func copyText(text, what string, env []string, native bool) tea.Cmd {
	cmds := []tea.Cmd{tea.SetClipboard(text)}
	if lookupEnv(env, "TMUX") != "" {
		seq := xansi.SetSystemClipboard(text)
		cmds = append(cmds, tea.Raw(xansi.TmuxPassthrough(seq)))
	}
	cmds = append(cmds, func() tea.Msg {
		ok := false
		if native && !clipboard.Unsupported {
			ok = clipboard.WriteAll(text) == nil
		}
		return copiedMsg{what: what, chars: len([]rune(text)), lines: strings.Count(text, "\n") + 1, native: ok}
	})
	return tea.Sequence(cmds...)
}
