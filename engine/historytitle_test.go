package engine

import (
	"slices"
	"strings"
	"testing"
)

// titlesOf is a history list as id → title.
func titlesOf(list []HistoryInfo) map[string]string {
	out := map[string]string{}
	for _, h := range list {
		out[h.ID] = h.Title
	}
	return out
}

// TestHistoryRenameAndDistinctTitles: two conversations that start with
// the same message are told apart in the list ("… (2)", by when they
// began); a conversation renamed (in the history or the one on screen)
// keeps its title through later keeps, a rewrite without its cache and a
// resume; "" gives back its first message.
func TestHistoryRenameAndDistinctTitles(t *testing.T) {
	e, store := historyEngine(t, "r1", Settings{MaxTokens: 4}, HistoryPolicy{KeepKV: 1, KVBudget: 1 << 30})
	var ids []string
	for range 2 {
		sendWait(t, e, "Same start.")
		e.Clear()
		ids = append(ids, until(t, e, func(h History) bool { return h.Op == "kept" }).ID)
		until(t, e, anyOf[Cleared])
	}
	sendWait(t, e, "Same start.")
	// The kept ones in the order they began (ids within one second tie
	// at random), the one on screen last.
	kept := func(ti map[string]string) []string {
		pair := []string{ti[ids[0]], ti[ids[1]]}
		slices.Sort(pair)
		return pair
	}
	both := []string{"Same start.", "Same start. (2)"}
	listHistory(t, e, "", func(l []HistoryInfo) bool {
		ti := titlesOf(l)
		return len(l) == 3 && slices.Equal(kept(ti), both) && ti[""] == "Same start. (3)"
	})
	// A search lists the titles the whole list has.
	listHistory(t, e, "same", func(l []HistoryInfo) bool { return len(l) == 3 && slices.Equal(kept(titlesOf(l)), both) })

	// Rename the oldest: the others are told apart among themselves.
	e.RenameHistory(ids[0], "  Apple   notes ")
	if h := until(t, e, func(h History) bool { return h.Op == "rename" }); h.ID != ids[0] || h.Title != "Apple notes" {
		t.Fatalf("rename: %+v", h)
	}
	listHistory(t, e, "", func(l []HistoryInfo) bool {
		ti := titlesOf(l)
		return ti[ids[0]] == "Apple notes" && ti[ids[1]] == "Same start." && ti[""] == "Same start. (2)"
	})
	// Renamed in place: the list keeps its order (the newest first).
	infos, _ := store.List()
	if len(infos) != 2 || infos[1].Name != ids[0] {
		t.Fatalf("store order %+v", infos)
	}

	// The conversation on screen, not kept yet: kept, then named.
	e.RenameHistory("", "On screen")
	cur := until(t, e, func(h History) bool { return h.Op == "rename" })
	if cur.ID == "" || slices.Contains(ids, cur.ID) || cur.Title != "On screen" {
		t.Fatalf("rename on screen: %+v", cur)
	}
	// It changes and is kept again (the autosave): the title stays. The
	// keep rewrites the older entries without their cache (keep_kv 1).
	sendWait(t, e, "More words.")
	e.Autosave()
	listHistory(t, e, "", func(l []HistoryInfo) bool {
		ti := titlesOf(l)
		return len(l) == 3 && ti[cur.ID] == "On screen" && ti[ids[0]] == "Apple notes" && !l[2].KV
	})

	// Resumed, it says its title; kept again on the way out, it keeps it.
	e.ResumeHistory(ids[0])
	if h := until(t, e, func(h History) bool { return h.Op == "resume" }); h.Title != "Apple notes" {
		t.Fatalf("resume: %+v", h)
	}
	sendWait(t, e, "Go on.")
	e.Clear()
	until(t, e, func(h History) bool { return h.Op == "kept" && h.ID == ids[0] })
	until(t, e, anyOf[Cleared])
	listHistory(t, e, "", func(l []HistoryInfo) bool { return titlesOf(l)[ids[0]] == "Apple notes" })

	// "" gives the first message back.
	e.RenameHistory(ids[0], "")
	if h := until(t, e, func(h History) bool { return h.Op == "rename" }); h.Title != "Same start." {
		t.Fatalf("rename to nothing: %+v", h)
	}
	listHistory(t, e, "", func(l []HistoryInfo) bool { return slices.Equal(kept(titlesOf(l)), both) })

	// Nothing on screen: nothing to name.
	e.RenameHistory("", "x")
	evs := collect(t, e, func(ev Event) bool { _, ok := ev.(Failed); return ok })
	if f := evs[len(evs)-1].(Failed); f.Op != "history-rename" || !strings.Contains(f.Err.Error(), "nothing to name") {
		t.Fatalf("empty: %s: %v", f.Op, f.Err)
	}
}
