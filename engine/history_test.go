package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// historyEngine starts an engine with a history in a fresh folder.
func historyEngine(t *testing.T, fam string, set Settings, p HistoryPolicy) (*Engine, *checkpoints.Store) {
	t.Helper()
	store := tempStore(t) // before the engine: removed after it closed
	s := newSession(t, testbundle.Tiny(t, fam), set)
	s.stops = nil
	e := Start(s, ModelInfo{})
	t.Cleanup(func() { e.Close() })
	e.UseHistory(store, p)
	return e, store
}

// until collects events until one satisfies ok, failing on a Failed.
func until[T Event](t *testing.T, e *Engine, ok func(T) bool) T {
	t.Helper()
	var got T
	collect(t, e, func(ev Event) bool {
		if f, isF := ev.(Failed); isF {
			t.Fatalf("failed: %s: %v", f.Op, f.Err)
		}
		x, is := ev.(T)
		if is && ok(x) {
			got = x
			return true
		}
		return false
	})
	return got
}

func anyOf[T Event](T) bool { return true }

// sendWait sends text and returns the reply's ids and its metrics.
func sendWait(t *testing.T, e *Engine, text string) ([]int, TurnMetrics) {
	t.Helper()
	e.Send(text)
	var ids []int
	var m TurnMetrics
	collect(t, e, func(ev Event) bool {
		switch x := ev.(type) {
		case *Delta:
			ids = append(ids, x.Tokens...)
		case Finished:
			m = x.Metrics
			return true
		case Failed:
			t.Fatalf("send %q: %v", text, x.Err)
		}
		return false
	})
	return ids, m
}

// listHistory asks for the history and waits for a list for q that ok
// accepts: a list the engine sent for an earlier change may come first.
func listHistory(t *testing.T, e *Engine, q string, ok func([]HistoryInfo) bool) []HistoryInfo {
	t.Helper()
	e.ListHistory(q)
	var last []HistoryInfo
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-e.Events():
			switch h := ev.(type) {
			case History:
				if h.Op == "list" && h.Query == q {
					if last = h.List; ok(last) {
						return last
					}
				}
			case Failed:
				t.Fatalf("failed: %s: %v", h.Op, h.Err)
			}
		case <-deadline:
			t.Fatalf("no list for %q as wanted; the last was %+v", q, last)
		}
	}
}

// TestHistoryResumeEqualsUninterrupted: /new keeps the conversation in
// the history; resuming it later (with its cache, or as text only when
// the budget keeps none) continues token for token as the conversation
// that never left — and the conversation it replaced is kept in turn.
func TestHistoryResumeEqualsUninterrupted(t *testing.T) {
	for _, fam := range testbundle.Families() {
		for _, keep := range []int{1, 0} {
			t.Run(fmt.Sprintf("%s/keep%d", fam, keep), func(t *testing.T) {
				t.Parallel()
				set := Settings{MaxTokens: 8, System: "Be brief."}
				e, _ := historyEngine(t, fam, set, HistoryPolicy{KeepKV: keep, KVBudget: 1 << 30})
				first := "First question, long enough to pass the window."
				sendWait(t, e, first)
				held := len(e.sess.Committed()) // read between commands: the engine is idle
				e.Clear()
				kept := until(t, e, func(h History) bool { return h.Op == "kept" })
				if kept.Title != first || kept.ID == "" {
					t.Fatalf("kept %+v", kept)
				}
				until(t, e, anyOf[Cleared])
				sendWait(t, e, "Another conversation.")

				listHistory(t, e, "", func(list []HistoryInfo) bool {
					return len(list) == 2 && list[0].Current && list[0].ID == "" && list[1].ID == kept.ID && list[1].KV == (keep > 0)
				})
				e.ResumeHistory(kept.ID)
				cl := until(t, e, anyOf[Cleared])
				if len(cl.Messages) != 2 || cl.Messages[0].Content != first || cl.ContextUsed != held {
					t.Fatalf("resumed %+v, context %d (held %d)", cl.Messages, cl.ContextUsed, held)
				}
				until(t, e, func(h History) bool { return h.Op == "resume" && h.ID == kept.ID })
				got, met := sendWait(t, e, "Second.")

				u := newSession(t, testbundle.Tiny(t, fam), set)
				u.stops = nil
				reply(t, u, first)
				want, _ := reply(t, u, "Second.")
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("resumed %v, uninterrupted %v", got, want)
				}
				if keep > 0 && met.ReusedTokens != held {
					t.Errorf("resumed with its cache, the turn reused %d of %d tokens", met.ReusedTokens, held)
				}
				if keep == 0 && met.ReusedTokens != 0 {
					t.Errorf("resumed as text, the turn reused %d tokens", met.ReusedTokens)
				}
				// The conversation it replaced was kept (it is the newest); the
				// resumed one is marked as the one on screen.
				listHistory(t, e, "", func(list []HistoryInfo) bool {
					return len(list) == 2 && list[0].Title == "Another conversation." && !list[0].Current && list[1].Current && list[1].ID == kept.ID
				})
			})
		}
	}
}

// TestHistoryBudget: only the most recent KeepKV conversations keep
// their cache, within KVBudget; the others keep their text.
func TestHistoryBudget(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy HistoryPolicy
		kv     int
	}{
		{"two newest", HistoryPolicy{KeepKV: 2, KVBudget: 1 << 30}, 2},
		{"budget of one byte", HistoryPolicy{KeepKV: 5, KVBudget: 1}, 0},
		{"none", HistoryPolicy{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, store := historyEngine(t, "r1", Settings{MaxTokens: 4}, tt.policy)
			for i := range 4 {
				sendWait(t, e, fmt.Sprintf("conversation %d", i))
				e.Clear()
				until(t, e, anyOf[Cleared])
			}
			infos, err := store.List()
			if err != nil {
				t.Fatal(err)
			}
			if len(infos) != 4 {
				t.Fatalf("%d conversations kept, want 4", len(infos))
			}
			kv := 0
			for i, in := range infos {
				if in.Tokens > 0 {
					kv++
					if i >= tt.kv {
						t.Errorf("conversation %d (older) kept its cache", i)
					}
				}
				cp, err := store.Show(in.Name)
				if err != nil || len(cp.Conversation.Messages) != 2 {
					t.Fatalf("%s: %v %+v", in.Name, err, cp)
				}
			}
			if kv != tt.kv {
				t.Fatalf("%d conversations kept their cache, want %d", kv, tt.kv)
			}
		})
	}
}

// TestHistorySearchAndDelete: a search finds text anywhere in a
// conversation, ignoring case, with the words around it; deleting takes
// an entry out; deleting the conversation on screen leaves it on screen
// and it is kept again once it changes.
func TestHistorySearchAndDelete(t *testing.T) {
	e, _ := historyEngine(t, "v2", Settings{MaxTokens: 4}, HistoryPolicy{KeepKV: 4, KVBudget: 1 << 30})
	for _, m := range []string{"About apples and PEARS in the orchard.", "About plums."} {
		sendWait(t, e, m)
		e.Clear()
		until(t, e, anyOf[Cleared])
	}
	got := listHistory(t, e, "pears", func(l []HistoryInfo) bool {
		return len(l) == 1 && strings.Contains(l[0].Snippet, "PEARS in the orchard")
	})
	listHistory(t, e, "quince", func(l []HistoryInfo) bool { return len(l) == 0 })
	e.DeleteHistory(got[0].ID)
	until(t, e, func(h History) bool { return h.Op == "delete" })
	listHistory(t, e, "", func(l []HistoryInfo) bool { return len(l) == 1 && l[0].Title == "About plums." })

	// The conversation on screen: kept by the autosave, deleted, not
	// kept again until it changes.
	sendWait(t, e, "About cherries.")
	e.Autosave()
	list := until(t, e, func(h History) bool { return h.Op == "list" && len(h.List) == 2 && h.List[0].ID != "" }).List
	cur := list[0]
	if !cur.Current || cur.Title != "About cherries." {
		t.Fatalf("autosaved: %+v", list)
	}
	e.DeleteHistory(cur.ID)
	until(t, e, func(h History) bool { return h.Op == "delete" })
	e.Autosave()
	listHistory(t, e, "cherries", func(l []HistoryInfo) bool { return len(l) == 1 && l[0].ID == "" })
	sendWait(t, e, "And figs?")
	e.Autosave()
	until(t, e, func(h History) bool {
		return h.Op == "list" && len(h.List) == 1 && h.List[0].ID != "" && h.List[0].Current
	})
}

// TestLoadKeepsConversationInHistory: loading a named checkpoint keeps
// the conversation it replaces, and the loaded one goes on as a new
// conversation of the history.
func TestLoadKeepsConversationInHistory(t *testing.T) {
	e, store := historyEngine(t, "r1", Settings{MaxTokens: 4}, HistoryPolicy{KeepKV: 4, KVBudget: 1 << 30})
	ck := tempStore(t)
	t.Cleanup(func() { e.Close() }) // before the folder goes
	e.UseStore(ck, 0)
	sendWait(t, e, "Saved one.")
	e.SaveCheckpoint("a")
	until(t, e, func(c Checkpoints) bool { return c.Op == "save" })
	e.Clear()
	until(t, e, anyOf[Cleared])
	sendWait(t, e, "On screen.")
	e.LoadCheckpoint("a")
	until(t, e, func(h History) bool { return h.Op == "kept" })
	until(t, e, func(c Checkpoints) bool { return c.Op == "load" })
	sendWait(t, e, "Loaded and went on.")
	e.Autosave()
	until(t, e, func(h History) bool { return h.Op == "list" && len(h.List) == 3 })
	infos, _ := store.List()
	titles := []string{}
	for _, in := range infos {
		cp, _ := store.Show(in.Name)
		titles = append(titles, cp.Conversation.Messages[0].Content)
	}
	if fmt.Sprint(titles) != "[Saved one. On screen. Saved one.]" {
		t.Fatalf("history holds %v", titles)
	}
}

// failingHistory is a history whose writes fail with err while it is set,
// as a full disk (ENOSPC), a read-only one or a folder orchard may not
// write to make them fail.
type failingHistory struct {
	*checkpoints.Store
	err atomic.Pointer[error]
}

func (f *failingHistory) Save(cp *checkpoints.Checkpoint) error {
	if err := f.err.Load(); err != nil {
		return fmt.Errorf("checkpoint %q: %w", cp.Meta.Name, &fs.PathError{Op: "write", Path: "history/" + cp.Meta.Name + "/cache.bin", Err: *err})
	}
	return f.Store.Save(cp)
}

func (f *failingHistory) fail(err error) { f.err.Store(&err) }

// TestReplacingRefusedWhenNotKept: with the disk full, /new, a load, a fork
// and resuming another conversation refuse in one sentence, and the
// conversation stays in the session, cache and all: nothing is replaced
// that the history could not keep first. Once the disk has room, /new
// keeps it and clears.
func TestReplacingRefusedWhenNotKept(t *testing.T) {
	store := tempStore(t)
	e, hstore := historyEngine(t, "r1", Settings{MaxTokens: 6}, HistoryPolicy{KeepKV: 4, KVBudget: 1 << 30})
	hist := &failingHistory{Store: hstore}
	e.UseHistory(hist, HistoryPolicy{KeepKV: 4, KVBudget: 1 << 30})
	e.UseStore(store, 0)
	sendWait(t, e, "A saved conversation.")
	e.SaveCheckpoint("saved")
	until(t, e, func(c Checkpoints) bool { return c.Op == "save" })
	e.Clear()
	kept := until(t, e, func(h History) bool { return h.Op == "kept" })
	until(t, e, anyOf[Cleared])
	sendWait(t, e, "The conversation on screen.")
	msgs, committed := e.Messages(), e.sess.Committed()

	hist.fail(syscall.ENOSPC)
	for _, tc := range []struct {
		op Op
		do func() error
	}{
		{"clear", e.Clear},
		{"load", func() error { return e.LoadCheckpoint("saved") }},
		{"fork", func() error { return e.ForkCheckpoint("saved") }},
		{"resume", func() error { return e.ResumeHistory(kept.ID) }},
	} {
		tc.do()
		var failed Failed
		collect(t, e, func(ev Event) bool {
			switch x := ev.(type) {
			case Cleared:
				t.Fatalf("%s: the conversation was replaced: %+v", tc.op, x.Messages)
			case Failed:
				if x.Op == "history" {
					return false // the reader's list may fail on its own
				}
				failed = x
				return true
			}
			return false
		})
		var nk *NotKeptError
		if failed.Op != tc.op || !errors.As(failed.Err, &nk) || !errors.Is(failed.Err, syscall.ENOSPC) ||
			failed.Err.Error() != "the disk is full: the conversation was kept on screen; free space or /save elsewhere" {
			t.Fatalf("%s: Failed{%s, %v}", tc.op, failed.Op, failed.Err)
		}
		e.Mark(1)
		until(t, e, func(Marker) bool { return true })
		if got := e.Messages(); fmt.Sprint(got) != fmt.Sprint(msgs) || fmt.Sprint(e.sess.Committed()) != fmt.Sprint(committed) {
			t.Fatalf("%s: the session holds %+v (%d tokens), want %+v (%d tokens)", tc.op, got, len(e.sess.Committed()), msgs, len(committed))
		}
	}

	hist.err.Store(nil)
	e.Clear()
	until(t, e, func(h History) bool { return h.Op == "kept" })
	if cl := until(t, e, anyOf[Cleared]); len(cl.Messages) != 0 {
		t.Fatalf("cleared to %+v", cl.Messages)
	}
	infos, err := hstore.List()
	if err != nil || len(infos) != 2 {
		t.Fatalf("the history holds %d conversations (%v), want 2", len(infos), err)
	}
}

// TestNotKeptSentence: each cause is named as a person would, with what
// to do; the conversation is always said to be still there.
func TestNotKeptSentence(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{syscall.ENOSPC, "the disk is full: the conversation was kept on screen; free space or /save elsewhere"},
		{syscall.EDQUOT, "the disk quota is used up: the conversation was kept on screen; free space or /save elsewhere"},
		{syscall.EROFS, "the history folder is on a read-only disk: the conversation was kept on screen; make it writable or /save elsewhere"},
		{syscall.EACCES, "orchard may not write to the history folder (permission denied): the conversation was kept on screen; fix its permissions or /save elsewhere"},
		{errors.New("checksum mismatch"), "the history could not keep it (history: checksum mismatch): the conversation was kept on screen; /save it elsewhere"},
	} {
		err := &NotKeptError{Err: fmt.Errorf("history: %w", &fs.PathError{Op: "write", Path: "x", Err: tc.err})}
		if _, plain := tc.err.(syscall.Errno); !plain {
			err = &NotKeptError{Err: fmt.Errorf("history: %w", tc.err)}
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.err, got, tc.want)
		}
	}
}
