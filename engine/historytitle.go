package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/orchard-llm/orchard/checkpoints"
)

// A conversation of the history is titled by its first message unless it
// was given a title of its own (RenameHistory), which the history's
// checkpoint keeps in its state (sessionState.Title) and every later keep
// carries over. Titles in a list are told apart (DistinctTitles).

// maxTitle is the longest title kept, in characters.
const maxTitle = 80

// RenameHistory gives a conversation of the history a title of its own;
// "" gives it back its first message. id "" is the conversation on
// screen, kept first if it changed. It answers History{Op: OpRename} and
// a new list, or Failed{Op: OpHistoryRename}.
func (e *Engine) RenameHistory(id, title string) error {
	return e.do(OpHistoryRename, func() {
		if err := e.renameHistory(id, oneLine(title, maxTitle)); err != nil {
			e.emit(Failed{Op: OpHistoryRename, Err: err})
		}
	})
}

func (e *Engine) renameHistory(id, title string) error {
	if e.hist == nil {
		return ErrNoHistory
	}
	if id == "" || id == e.sess.historyID {
		kept, err := e.keep()
		if err != nil {
			return err
		}
		if kept == "" {
			return errors.New("there is nothing to name yet: the conversation is empty")
		}
		id = kept
	}
	meta, err := e.hist.Show(id)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	// Loaded whole (its cache too) under its own bundle's identity: it is
	// saved back as it was, with the title.
	cp, err := e.hist.Load(id, meta.Meta.Identity)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if err := setTitle(cp, title); err != nil {
		return err
	}
	if err := e.hist.Save(cp); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	e.reads.forget(id)
	e.emit(History{Op: OpRename, ID: id, Title: entryTitle(cp)})
	e.refreshHistory()
	return nil
}

// carryTitle gives a conversation about to be kept again the title its
// entry has, if any.
func (e *Engine) carryTitle(cp *checkpoints.Checkpoint) error {
	prev, err := e.hist.Show(cp.Meta.Name)
	if err != nil {
		return nil // not kept yet, or unreadable: nothing to carry
	}
	if t := storedTitle(prev); t != "" {
		return setTitle(cp, t)
	}
	return nil
}

// setTitle puts a title into a checkpoint's state ("" removes it).
func setTitle(cp *checkpoints.Checkpoint, title string) error {
	var st sessionState
	if len(cp.Conversation.Settings) > 0 {
		if err := json.Unmarshal(cp.Conversation.Settings, &st); err != nil {
			return fmt.Errorf("checkpoint %q: settings: %w", cp.Meta.Name, err)
		}
	}
	st.Title = title
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	cp.Conversation.Settings = raw
	return nil
}

// storedTitle is the title a checkpoint was given, "" for none.
func storedTitle(cp *checkpoints.Checkpoint) string {
	var st struct {
		Title string `json:"title"`
	}
	if len(cp.Conversation.Settings) == 0 || json.Unmarshal(cp.Conversation.Settings, &st) != nil {
		return ""
	}
	return st.Title
}

// entryTitle is a kept conversation's title: its own, else its first
// message.
func entryTitle(cp *checkpoints.Checkpoint) string {
	if t := storedTitle(cp); t != "" {
		return t
	}
	msgs := make([]Message, len(cp.Conversation.Messages))
	for i, m := range cp.Conversation.Messages {
		msgs[i] = Message{Role: m.Role, Content: m.Content}
	}
	return titleOf(msgs)
}

// DistinctTitles makes the titles of a history list tell its
// conversations apart: a title several share gets " (2)", " (3)", … in
// the order the conversations began (ids start with that time; the one
// on screen not kept yet is the newest), the first kept as it is.
func DistinctTitles(list []HistoryInfo) {
	order := make([]int, len(list))
	taken := map[string]bool{}
	for i, h := range list {
		order[i] = i
		taken[h.Title] = true
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := list[a].ID, list[b].ID
		switch {
		case x == "" && y != "":
			return 1
		case y == "" && x != "":
			return -1
		}
		return cmp.Compare(x, y)
	})
	count := map[string]int{}
	for _, i := range order {
		t := list[i].Title
		if t == "" {
			continue
		}
		count[t]++
		if count[t] == 1 {
			continue
		}
		for n := count[t]; ; n++ {
			if c := fmt.Sprintf("%s (%d)", t, n); !taken[c] {
				list[i].Title, taken[c], count[t] = c, true, n
				break
			}
		}
	}
}

// forget drops what the reader keeps of an entry rewritten in place.
func (r *historyReader) forget(id string) {
	r.listMu.Lock()
	delete(r.texts, id)
	r.listMu.Unlock()
}

// titles are the distinct titles of every entry of a list by id, the
// conversation on screen included when it is not kept yet (id cur, maybe
// ""), whatever a query then keeps of them.
func (r *historyReader) titles(e *Engine, st HistoryStore, infos []checkpoints.Info, cur string) map[string]string {
	var all []HistoryInfo
	kept := false
	for _, in := range infos {
		if in.Problem != "" {
			continue
		}
		kept = kept || in.Name == cur
		if txt, ok := r.text(st, in); ok {
			all = append(all, HistoryInfo{ID: in.Name, Title: txt.title})
		}
	}
	if !kept {
		all = append(all, HistoryInfo{ID: cur, Title: titleOf(e.Messages())})
	}
	DistinctTitles(all)
	out := make(map[string]string, len(all))
	for _, h := range all {
		out[h.ID] = h.Title
	}
	return out
}
