package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
)

// keyMap holds every binding of the chat screen. Users can rebind any
// of them by name through Options.Keys.
type keyMap struct {
	Send        key.Binding
	Newline     key.Binding
	Cancel      key.Binding
	Quit        key.Binding
	Palette     key.Binding
	Editor      key.Binding
	Help        key.Binding
	Stats       key.Binding
	Checkpoints key.Binding
	Drafts      key.Binding
	Thinking    key.Binding
	HistoryPrev key.Binding
	HistoryNext key.Binding
	Complete    key.Binding
	ScrollUp    key.Binding
	ScrollDown  key.Binding
	PageUp      key.Binding
	PageDown    key.Binding
	Top         key.Binding
	Bottom      key.Binding
	Focus       key.Binding
	Message     key.Binding
	Regenerate  key.Binding
	VersionPrev key.Binding
	VersionNext key.Binding
	Search      key.Binding
	History     key.Binding
	New         key.Binding
	Fold        key.Binding
}

func defaultKeyMap() keyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Send:        b("enter", "send", "enter"),
		Newline:     b("shift+enter", "newline", "shift+enter", "ctrl+j"),
		Cancel:      b("esc", "stop reply", "esc"),
		Quit:        b("ctrl+c×2", "quit", "ctrl+c"),
		Palette:     b("ctrl+p", "commands", "ctrl+p"),
		Editor:      b("ctrl+o", "$EDITOR", "ctrl+o"),
		Help:        b("?", "help", "?", "f1"),
		Stats:       b("ctrl+t", "stats", "ctrl+t", "f2"),
		Checkpoints: b("ctrl+s", "checkpoints", "ctrl+s", "f3"),
		Drafts:      b("ctrl+x", "show drafts", "ctrl+x", "f4"),
		Thinking:    b("ctrl+r", "show thinking", "ctrl+r", "f5"),
		HistoryPrev: b("↑", "edit · history", "up"),
		HistoryNext: b("↓", "history", "down"),
		Complete:    b("tab", "complete", "tab"),
		ScrollUp:    b("shift+↑", "scroll", "shift+up", "alt+up"),
		ScrollDown:  b("shift+↓", "scroll", "shift+down", "alt+down"),
		PageUp:      b("pgup", "page up", "pgup"),
		PageDown:    b("pgdn", "page down", "pgdown"),
		Top:         b("ctrl+home", "top", "ctrl+home"),
		Bottom:      b("ctrl+end", "follow", "ctrl+end"),
		Focus:       b("tab", "panel", "tab"),
		Message:     b("f6", "whole message", "f6"),
		// ctrl+r unfolds thinking; g for "generate again".
		Regenerate:  b("ctrl+g", "regenerate", "ctrl+g", "f8"),
		VersionPrev: b("←", "older version", "left"),
		VersionNext: b("→", "newer version", "right"),
		Search:      b("ctrl+f", "find", "ctrl+f"),
		History:     b("ctrl+l", "history", "ctrl+l", "f7"),
		New:         b("ctrl+n", "new chat", "ctrl+n"),
		// A long paste is one chip in the input; y as in yank.
		Fold: b("ctrl+y", "unfold paste", "ctrl+y"),
	}
}

// bindings names each binding for Options.Keys.
func (k *keyMap) bindings() map[string]*key.Binding {
	return map[string]*key.Binding{
		"send": &k.Send, "newline": &k.Newline, "cancel": &k.Cancel, "quit": &k.Quit,
		"palette": &k.Palette, "editor": &k.Editor, "help": &k.Help, "stats": &k.Stats,
		"checkpoints": &k.Checkpoints, "drafts": &k.Drafts, "thinking": &k.Thinking,
		"history-prev": &k.HistoryPrev, "history-next": &k.HistoryNext, "complete": &k.Complete,
		"scroll-up": &k.ScrollUp, "scroll-down": &k.ScrollDown, "page-up": &k.PageUp,
		"page-down": &k.PageDown, "top": &k.Top, "bottom": &k.Bottom, "focus": &k.Focus,
		"message": &k.Message, "regenerate": &k.Regenerate, "version-prev": &k.VersionPrev,
		"version-next": &k.VersionNext, "search": &k.Search, "history": &k.History, "new": &k.New,
		"fold": &k.Fold,
	}
}

// KeyNames lists the action names Options.Keys accepts.
func KeyNames() []string {
	k := defaultKeyMap()
	var names []string
	for n := range k.bindings() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// override rebinds actions; an unknown action or an empty key list is
// an error naming the valid choices.
func (k *keyMap) override(keys map[string][]string) error {
	all := k.bindings()
	names := make([]string, 0, len(keys))
	for n := range keys {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		b, ok := all[name]
		if !ok {
			return fmt.Errorf("unknown key action %q (known: %s)", name, strings.Join(KeyNames(), ", "))
		}
		ks := slices.DeleteFunc(slices.Clone(keys[name]), func(s string) bool { return strings.TrimSpace(s) == "" })
		if len(ks) == 0 {
			return fmt.Errorf("key action %q: no keys given", name)
		}
		for _, key := range ks {
			if printableKey(key) && name != "help" {
				return fmt.Errorf("key action %q: %s is a key you type, so bound to %s it could no longer go into a message; "+
					"give %s a key with a modifier (such as ctrl+%s or alt+%s) or an F key", name, key, name, name, key, key)
			}
		}
		b.SetKeys(ks...)
		b.SetHelp(ks[0], b.Help().Desc)
	}
	return k.checkEssential()
}

// printableKey reports whether a key names a character the input takes
// (q, Q, shift+q, 7, é, space), as opposed to one with ctrl, alt or
// another modifier, or a named key (enter, f5, up). Only help may have
// one: it acts on an empty input, as ? does.
func printableKey(k string) bool {
	k = strings.TrimPrefix(strings.ToLower(k), "shift+")
	return k == "space" || utf8.RuneCountInString(k) == 1
}

// checkEssential refuses bindings that leave no way to send or to quit:
// send and quit each need a key no other action uses (a shared key goes
// to whichever action the screen checks first).
func (k *keyMap) checkEssential() error {
	all := k.bindings()
	for _, name := range []string{"send", "quit"} {
		var own, shared []string
		for _, key := range all[name].Keys() {
			var others []string
			for other, b := range all {
				if other != name && slices.Contains(b.Keys(), key) {
					others = append(others, other)
				}
			}
			if len(others) == 0 {
				own = append(own, key)
				continue
			}
			sort.Strings(others)
			shared = append(shared, fmt.Sprintf("%s is also %s", key, strings.Join(others, " and ")))
		}
		if len(own) == 0 {
			return fmt.Errorf("key bindings leave no way to %s: %s; give %s a key of its own", name, strings.Join(shared, ", "), name)
		}
	}
	return nil
}

// CheckKeys reports whether overrides (action name → keys, as
// Options.Keys) are valid: known actions, at least one key each, no key
// one types (q) for anything but help, and a key of its own left for
// send and for quit. The chat screen refuses
// what this refuses; config show uses it to say so before.
func CheckKeys(keys map[string][]string) error {
	k := defaultKeyMap()
	return k.override(keys)
}

// ShortHelp is the help bar.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Send, k.Newline, k.Cancel, k.Palette, k.Stats, k.Checkpoints, k.Help, k.Quit}
}

// FullHelp is the ? screen.
func (k keyMap) FullHelp() [][]key.Binding {
	// Eight rows in three columns, so the keys fit 80 columns. Tab both
	// completes and selects the panel; it is listed once unless rebound
	// apart. ← and → act on an empty input, as ↑ does.
	versions := k.VersionPrev
	versions.SetHelp(k.VersionPrev.Help().Key+"/"+k.VersionNext.Help().Key, "versions")
	first := []key.Binding{k.Send, k.Newline, k.Editor, k.HistoryPrev, k.Complete, k.Cancel, k.Regenerate, versions}
	view := []key.Binding{k.ScrollUp, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Search, k.Message, k.Quit}
	if slices.Equal(k.Focus.Keys(), k.Complete.Keys()) {
		first[4].SetHelp(k.Complete.Help().Key, "complete · panel")
	} else {
		view = append(view, k.Focus)
	}
	return [][]key.Binding{
		first,
		view,
		{k.Palette, k.Stats, k.Checkpoints, k.History, k.New, k.Drafts, k.Thinking, k.Fold},
	}
}

// The keys inside the components that take the focus. They are not
// rebindable (the footers name them) and never reach the keyMap's: the
// component that has the focus gets every key but ctrl+c.

// yesNoKeys answer a question, a component's own or the confirm line's:
// y is yes, esc leaves things as they are, any other key is no.
type yesNoKeys struct{ Yes, Esc key.Binding }

// fieldKeys end typing into a field: enter takes it, esc leaves it.
type fieldKeys struct{ Accept, Cancel key.Binding }

type checkpointKeys struct {
	yesNoKeys
	fieldKeys
	Up, Down, First, Last, Load, Fork, Delete, Rename, Save, Leave key.Binding
}

type historyKeys struct {
	yesNoKeys
	fieldKeys
	Up, Down, PageUp, PageDown, Resume, Delete, Rename, Close, Leave key.Binding
}

type findKeys struct{ Close, Older, Newer key.Binding }

type paletteKeys struct{ Close, Choose, Up, Down key.Binding }

func bind(help, desc string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

func newYesNoKeys() yesNoKeys {
	return yesNoKeys{Yes: bind("y", "yes", "y", "Y"), Esc: bind("esc", "neither", "esc")}
}

func newFieldKeys() fieldKeys {
	return fieldKeys{Accept: bind("enter", "take it", "enter"), Cancel: bind("esc", "leave it", "esc")}
}

func newCheckpointKeys() checkpointKeys {
	return checkpointKeys{
		yesNoKeys: newYesNoKeys(),
		fieldKeys: newFieldKeys(),
		Up:        bind("↑/k", "up", "up", "k"),
		Down:      bind("↓/j", "down", "down", "j"),
		First:     bind("home/g", "first", "home", "g"),
		Last:      bind("end/G", "last", "end", "G"),
		Load:      bind("enter", "load", "enter", "l"),
		Fork:      bind("f", "fork", "f"),
		Delete:    bind("d", "delete", "d", "delete", "backspace"),
		Rename:    bind("r", "rename", "r"),
		Save:      bind("s", "save", "s", "n"),
		Leave:     bind("esc", "back", "esc", "tab", "q"),
	}
}

func newHistoryKeys() historyKeys {
	return historyKeys{
		yesNoKeys: newYesNoKeys(),
		fieldKeys: newFieldKeys(),
		Up:        bind("↑", "up", "up", "ctrl+p"),
		Down:      bind("↓", "down", "down", "ctrl+n"),
		PageUp:    bind("pgup", "page up", "pgup"),
		PageDown:  bind("pgdn", "page down", "pgdown"),
		Resume:    bind("enter", "resume", "enter"),
		Delete:    bind("ctrl+d", "delete", "ctrl+d", "delete"),
		Rename:    bind("ctrl+r", "rename", "ctrl+r", "f2"),
		Close:     bind("esc", "close", "esc"),
		Leave:     bind("tab", "input", "tab"),
	}
}

func newFindKeys() findKeys {
	return findKeys{
		Close: bind("esc", "closes", "esc"),
		Older: bind("enter/↑", "older", "enter", "up", "ctrl+p", "ctrl+f"),
		Newer: bind("↓", "newer", "shift+enter", "down", "ctrl+n"),
	}
}

func newPaletteKeys() paletteKeys {
	return paletteKeys{
		Close:  bind("esc", "close", "esc", "ctrl+p", "ctrl+c"),
		Choose: bind("enter", "run", "enter"),
		Up:     bind("↑", "up", "up", "ctrl+k", "shift+tab"),
		Down:   bind("↓", "down", "down", "ctrl+n", "tab"),
	}
}
