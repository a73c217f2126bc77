package tui

import (
	"os"
	"os/exec"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"
)

// maxInputRows bounds how tall the input grows before it scrolls.
const maxInputRows = 6

// inputPlaceholder is shown in the empty input while it has the focus.
const inputPlaceholder = "Message · / for commands · ctrl+p palette"

// input is the message editor: a multi-line textarea with a history of
// sent messages (up/down on an empty input) and $EDITOR on demand. It
// owns what ↑ and ↓ mean: on an empty input ↑ edits the last message
// sent, ↑ again walks back through the messages sent; in a longer text
// they move the cursor.
type input struct {
	st         *Styles
	ta         textarea.Model
	width      int
	prev, next key.Binding // ↑ and ↓, as bound

	history []string
	hpos    int    // index into history while browsing; len(history) when not
	stash   string // what was typed before browsing started

	editing  bool   // the input holds the last message, to be sent in its place
	editOrig string // that message as it was

	label string // said on the rule above the input (editing a message)
	note  string // said at the rule's right end (the message's cost)

	pastes  pastes // long pastes folded into chips (paste.go)
	foldKey string // the key that unfolds and folds them, for the rule
	sized   string // the value the size on the rule was measured for
	sizedH  int    // at this height
	size    string // that size, "" for a short message
}

func newInput(st *Styles, k keyMap) input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Placeholder = inputPlaceholder
	ta.SetPromptFunc(2, func(i textarea.PromptInfo) string {
		if i.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	ta.SetStyles(st.Textarea)
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = maxInputRows
	// Count content in visual rows, not logical lines, so a long paste
	// is accepted whole and newlines are not refused after MaxHeight.
	ta.MaxContentHeight = 100000
	ta.SetVirtualCursor(false)
	km := textarea.DefaultKeyMap()
	km.InsertNewline = k.Newline
	// The chat screen owns these keys.
	for _, b := range []*key.Binding{&km.TransposeCharacterBackward, &km.SelectLineUp, &km.SelectLineDown, &km.InputBegin, &km.InputEnd} {
		b.SetEnabled(false)
	}
	km.LinePrevious.SetKeys("up")
	km.LineNext.SetKeys("down")
	km.SelectAll.SetEnabled(false)
	ta.KeyMap = km
	ta.Focus()
	return input{st: st, ta: ta, foldKey: k.Fold.Help().Key, prev: k.HistoryPrev, next: k.HistoryNext}
}

func (in *input) SetSize(w, maxRows int) {
	in.width = w
	in.ta.SetWidth(w)
	in.ta.MaxHeight = max(1, min(maxInputRows, maxRows))
	in.ta, _ = in.ta.Update(nil) // recompute the dynamic height
}

// Update edits the text with a key or a paste. ↑ on an empty input asks
// for the last message sent (editLastAction); a step through the history
// says so (browsedAction), so the Model leaves the completion alone.
func (in *input) Update(msg tea.Msg) (action, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		v := in.ta.Value()
		switch {
		case key.Matches(k, in.prev) && v == "" && !in.Browsing():
			return editLastAction{}, nil
		case key.Matches(k, in.prev) && in.editing && v == in.editOrig:
			// ↑ again on the message shown for editing: back through
			// the ones sent before it.
			orig := in.editOrig
			in.StopEditing()
			in.BrowseFrom(orig)
			return browsedAction{}, nil
		case key.Matches(k, in.prev) && (v == "" || in.Browsing()):
			in.HistoryPrev()
			return browsedAction{}, nil
		case key.Matches(k, in.next) && in.Browsing():
			in.HistoryNext()
			return browsedAction{}, nil
		}
	}
	var cmd tea.Cmd
	in.ta, cmd = in.ta.Update(msg)
	return nil, cmd
}

// EditLast puts last, the last message sent, in the input to be sent in
// its place; with none it steps back through the history instead. It
// reports whether it started editing.
func (in *input) EditLast(last string) bool {
	if last == "" {
		in.HistoryPrev()
		return false
	}
	in.StartEditing(last)
	return true
}

// StartEditing shows orig to be edited; the rule above the input says so.
func (in *input) StartEditing(orig string) {
	in.editing, in.editOrig = true, orig
	in.SetValue(orig)
	in.SetLabel("editing your last message · enter sends it in its place · esc leaves it")
}

// StopEditing leaves the text as it is, no longer an edit.
func (in *input) StopEditing() {
	in.editing, in.editOrig = false, ""
	in.SetLabel("")
}

// Editing reports whether the input holds the last message, to be sent
// in its place; EditOrig is that message as it was.
func (in *input) Editing() bool    { return in.editing }
func (in *input) EditOrig() string { return in.editOrig }

// Value is the input as shown, chips and all; Text is the message it
// stands for, every chip unfolded.
func (in *input) Value() string { return in.ta.Value() }
func (in *input) Text() string  { return in.pastes.expand(in.ta.Value()) }

// Expand unfolds the chips in s, a value the input held.
func (in *input) Expand(s string) string { return in.pastes.expand(s) }

// SetStyles restyles the textarea after a theme change.
func (in *input) SetStyles(st *Styles) { in.ta.SetStyles(st.Textarea) }

// Paste puts pasted text at the cursor; a long one as a chip.
func (in *input) Paste(msg tea.PasteMsg) tea.Cmd {
	if chip, ok := in.pastes.fold(msg.Content); ok {
		in.ta.InsertString(chip)
		in.ta, _ = in.ta.Update(nil)
		return nil
	}
	_, cmd := in.Update(msg)
	return cmd
}

// ToggleFold unfolds the chips of the input into their text, or folds the
// pastes still whole in it back into chips. It reports whether anything
// changed.
func (in *input) ToggleFold() bool {
	v := in.ta.Value()
	next := in.pastes.expand(v)
	if next == v {
		next = in.pastes.refold(v)
	}
	if next == v {
		return false
	}
	in.SetValue(next)
	return true
}

func (in *input) Empty() bool { return strings.TrimSpace(in.ta.Value()) == "" }

func (in *input) SetValue(s string) {
	in.ta.SetValue(s)
	in.ta.MoveToEnd()
	in.ta, _ = in.ta.Update(nil)
}

func (in *input) Reset() {
	in.ta.Reset()
	in.ta, _ = in.ta.Update(nil)
	in.hpos = len(in.history)
}

// Focus takes the keys. The terminal's own cursor is shown (View's
// Cursor), so the textarea's blink is not needed.
func (in *input) Focus() tea.Cmd {
	in.ta.Focus()
	return nil
}

func (in *input) Blur() { in.ta.Blur() }

// Placeholder is "": the input's own placeholder says what it takes.
func (in *input) Placeholder() string { return "" }

// SetPlaceholder says, in the empty input, where the keys go while the
// input does not have them; "" restores the message placeholder.
func (in *input) SetPlaceholder(s string) {
	if s == "" {
		s = inputPlaceholder
	}
	in.ta.Placeholder = s
}

// Height is the rows View takes: a rule and the textarea.
func (in *input) Height() int { return 1 + in.ta.Height() }

// SetLabel puts a note on the rule above the input; "" removes it.
func (in *input) SetLabel(s string) { in.label = s }

// SetNote puts a note after the label (the message's cost, cost.go).
func (in *input) SetNote(s string) { in.note = s }

// sizeLabel says how long the message is when the input cannot show all
// of it (more lines than it shows, or chips), and how to fold or unfold.
func (in *input) sizeLabel() string {
	v, h := in.ta.Value(), in.ta.Height()
	if v == in.sized && h == in.sizedH {
		return in.size
	}
	in.sized, in.sizedH, in.size = v, h, ""
	text := in.pastes.expand(v)
	switch {
	case text != v:
		in.size = sizeText(text) + " in all · " + in.foldKey + " unfolds the paste"
	case strings.Count(v, "\n")+1 > h || len(v) > h*max(in.width-2, 1):
		in.size = sizeText(text)
		if in.pastes.refold(v) != v {
			in.size += " · " + in.foldKey + " folds the paste"
		}
	}
	return in.size
}

func (in *input) View() string {
	rule := in.st.InputRule.Render(strings.Repeat("─", max(in.width, 0)))
	label := in.label
	if size := in.sizeLabel(); size != "" {
		label = strings.TrimPrefix(label+" · "+size, " · ")
	}
	if in.note != "" {
		label = strings.TrimPrefix(label+" · "+in.note, " · ")
	}
	if label != "" && in.width > 10 {
		l := xansi.Truncate(" "+label+" ", in.width-4, "…")
		rule = in.st.InputRule.Render("──") + in.st.Version.Render(l) +
			in.st.InputRule.Render(strings.Repeat("─", max(0, in.width-2-xansi.StringWidth(l))))
	}
	return rule + "\n" + in.ta.View()
}

// Cursor returns the terminal cursor relative to the input's top-left.
func (in *input) Cursor() *tea.Cursor {
	c := in.ta.Cursor()
	if c != nil {
		c.Y++ // the rule
	}
	return c
}

// Remember adds a sent message to the history.
func (in *input) Remember(s string) {
	if s == "" || (len(in.history) > 0 && in.history[len(in.history)-1] == s) {
		in.hpos = len(in.history)
		return
	}
	in.history = append(in.history, s)
	in.hpos = len(in.history)
}

// Browsing reports whether the input shows an unedited history entry,
// so up/down keep walking the history rather than moving the cursor.
func (in *input) Browsing() bool {
	return in.hpos < len(in.history) && in.ta.Value() == in.history[in.hpos]
}

// BrowseFrom starts browsing the history from an empty input, passing
// over an entry equal to skip (the message just shown for editing).
func (in *input) BrowseFrom(skip string) bool {
	in.stash, in.hpos = "", len(in.history)
	if in.hpos > 0 && in.history[in.hpos-1] == skip {
		in.hpos--
	}
	if in.hpos == 0 {
		in.SetValue("")
		return false
	}
	in.hpos--
	in.SetValue(in.history[in.hpos])
	return true
}

func (in *input) HistoryPrev() bool {
	if in.hpos == 0 || len(in.history) == 0 {
		return false
	}
	if !in.Browsing() {
		in.stash = in.ta.Value()
		in.hpos = len(in.history)
	}
	in.hpos--
	in.SetValue(in.history[in.hpos])
	return true
}

func (in *input) HistoryNext() bool {
	if !in.Browsing() {
		return false
	}
	in.hpos++
	if in.hpos >= len(in.history) {
		in.hpos = len(in.history)
		in.SetValue(in.stash)
		return true
	}
	in.SetValue(in.history[in.hpos])
	return true
}

// Editor messages: the draft goes to a temporary file, $EDITOR runs
// with the terminal handed over, and the file comes back as the input.
type (
	editorReadyMsg struct {
		path string
		err  error
	}
	editorDoneMsg struct {
		text string
		err  error
	}
)

// prepareEditor writes the draft to a private temporary file.
func prepareEditor(draft string) tea.Cmd {
	return func() tea.Msg {
		f, err := os.CreateTemp("", "orchard-*.md")
		if err != nil {
			return editorReadyMsg{err: err}
		}
		_, err = f.WriteString(draft)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return editorReadyMsg{err: err}
		}
		return editorReadyMsg{path: f.Name()}
	}
}

// editorCommand picks $VISUAL, then $EDITOR, then vi. The variable may
// carry arguments ("code --wait").
func editorCommand(env []string, path string) *exec.Cmd {
	ed := lookupEnv(env, "VISUAL")
	if ed == "" {
		ed = lookupEnv(env, "EDITOR")
	}
	if ed == "" {
		ed = "vi"
	}
	f := strings.Fields(ed)
	return exec.Command(f[0], append(f[1:], path)...)
}

// runEditor hands the terminal to the editor and reads the file back.
func runEditor(env []string, path string) tea.Cmd {
	return tea.ExecProcess(editorCommand(env, path), func(err error) tea.Msg { return editorResult(path, err) })
}

// editorResult reads the edited file back and removes it.
func editorResult(path string, err error) tea.Msg {
	defer os.Remove(path)
	if err != nil {
		return editorDoneMsg{err: err}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return editorDoneMsg{err: err}
	}
	return editorDoneMsg{text: strings.TrimRight(string(b), "\n")}
}

func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
