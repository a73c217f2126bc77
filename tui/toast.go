package tui

import (
	"strings"
	"time"

	xansi "github.com/charmbracelet/x/ansi"
	"github.com/orchard-llm/orchard/engine"
)

type toastKind int

const (
	toastInfo toastKind = iota
	toastError
)

// toast is the line for notices and errors. Each message replaces the
// last and expires on its own; the id lets a stale expiry be ignored.
type toast struct {
	st       *Styles
	width    int
	maxLines int    // rows a toast may take; a longer one ends in more
	more     string // how to see all of a long message ("f6 shows all")
	text     string
	kind     toastKind
	id       int
	last     string // the last message shown, kept after it expires
	lastKind toastKind
}

// toastExpireMsg clears the toast with that id if it is still shown.
type toastExpireMsg struct{ id int }

const (
	toastInfoFor  = 4 * time.Second
	toastErrorFor = 10 * time.Second
	toastReadRate = 50 * time.Millisecond // per character: a long message stays longer
)

// SetSize sets the width and, from the screen height, how many rows a
// toast may take: a quarter of the screen, at least two.
func (t *toast) SetSize(w, h int) {
	t.width = w
	t.maxLines = max(2, h/4)
}

// Show sets the message and returns how long it should stay: long enough
// to read all of it.
func (t *toast) Show(kind toastKind, text string) (int, time.Duration) {
	t.id++
	t.kind, t.text = kind, tidyMessage(text)
	t.last, t.lastKind = t.text, kind
	read := time.Duration(len(t.text)) * toastReadRate
	if kind == toastError {
		return t.id, max(toastErrorFor, read)
	}
	return t.id, max(toastInfoFor, read)
}

func (t *toast) Expire(id int) {
	if id == t.id {
		t.text = ""
	}
}

func (t *toast) Visible() bool { return t.text != "" }

// Last is the last message shown, kept after it expired (f6 shows it
// whole), and LastKind its kind.
func (t *toast) Last() string        { return t.last }
func (t *toast) LastKind() toastKind { return t.lastKind }

// Lines is how many rows View takes.
func (t *toast) Lines() int {
	if !t.Visible() {
		return 0
	}
	return len(t.lines())
}

func (t *toast) lines() []string {
	prefix := "• "
	if t.kind == toastError {
		prefix = "✕ "
	}
	w := max(t.width-1, 10)
	ls := wrapPlain(prefix+t.text, w)
	if n := max(t.maxLines, 2); len(ls) > n {
		// Too long even for several rows: the last row says how to see
		// the rest, which is also in the log.
		ls = ls[:n]
		more := " … " + t.more
		ls[n-1] = xansi.Truncate(ls[n-1], max(w-xansi.StringWidth(more), 1), "") + more
	}
	return ls
}

func (t *toast) View() string {
	if !t.Visible() {
		return ""
	}
	style := t.st.ToastInfo
	if t.kind == toastError {
		style = t.st.ToastError
	}
	ls := t.lines()
	for i, l := range ls {
		ls[i] = style.Render(l)
	}
	return strings.Join(ls, "\n")
}

// tidyMessage makes any text fit a toast: runs of whitespace collapse,
// so a multi-line error reads as one sentence, and every other control
// character (an escape sequence quoted from a file, say) is spelled out
// rather than sent to the terminal.
func tidyMessage(s string) string {
	return safeLine(strings.Join(strings.Fields(s), " "))
}

// failureText turns an engine failure into a sentence. Engine errors
// are written for people, so their text is kept; the operation says
// what did not happen.
func failureText(op engine.Op, err error) string {
	what := map[engine.Op]string{
		engine.OpSend:     "The message was not sent",
		engine.OpSave:     "The checkpoint was not saved",
		engine.OpLoad:     "The checkpoint was not loaded",
		engine.OpDelete:   "The checkpoint was not deleted",
		engine.OpRename:   "The checkpoint was not renamed",
		engine.OpFork:     "The conversation was not forked",
		engine.OpList:     "The checkpoints could not be listed",
		engine.OpSettings: "The setting was not changed",
		engine.OpClear:    "The conversation was not cleared",
		engine.OpAutosave: "Autosave failed",
		// Regenerate, edit, versions and the history.
		engine.OpRegenerate:    "The reply was not regenerated",
		engine.OpEdit:          "The message was not changed",
		engine.OpVersion:       "The version was not shown",
		engine.OpHistory:       "The history is not available",
		engine.OpResume:        "The conversation was not resumed",
		engine.OpHistoryDelete: "The conversation was not deleted from the history",
		engine.OpHistoryRename: "The conversation was not renamed",
	}[op]
	if what == "" {
		what = "Something went wrong"
		if op != "" {
			what = string(op) + " failed"
		}
	}
	if err == nil {
		return what + "."
	}
	return what + ": " + err.Error()
}
