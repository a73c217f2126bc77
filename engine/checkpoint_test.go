package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestCheckpointContinuesLikeUninterrupted: save after a turn, restore
// into a fresh session (through the store, on disk), and the next turns
// equal those of the session that went on — every family, also after the
// sliding window has wrapped.
func TestCheckpointContinuesLikeUninterrupted(t *testing.T) {
	for _, fam := range testbundle.Families() {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			store := tempStore(t)
			a := newSession(t, b, Settings{MaxTokens: 12, System: "Be terse."})
			a.stops = nil
			reply(t, a, "First question, long enough to pass the window.")
			saveTo(t, store, a, "mid")
			want1, _ := reply(t, a, "Second.")
			want2, _ := reply(t, a, "Third.")

			loaded, err := store.Load("mid", b.Identity)
			if err != nil {
				t.Fatal(err)
			}
			c := newSession(t, b, Settings{})
			c.stops = nil
			reply(t, c, "something else entirely") // a conversation to replace
			if err := c.Restore(loaded); err != nil {
				t.Fatal(err)
			}
			if c.Settings().System != "Be terse." || len(c.Messages()) != 2 {
				t.Fatalf("restored settings %+v, %d messages", c.Settings(), len(c.Messages()))
			}
			got1, end := reply(t, c, "Second.")
			got2, _ := reply(t, c, "Third.")
			if fmt.Sprint(got1, got2) != fmt.Sprint(want1, want2) {
				t.Fatalf("restored\n%v %v\nuninterrupted\n%v %v", got1, got2, want1, want2)
			}
			if f := end.(Finished); f.Metrics.ReusedTokens != len(loaded.Tokens) {
				t.Errorf("the turn after restore reused %d of %d tokens", f.Metrics.ReusedTokens, len(loaded.Tokens))
			}
		})
	}
}

// TestEngineCheckpointCommands: save, list, load, rename, delete and the
// refusals, through the engine's asynchronous API.
func TestEngineCheckpointCommands(t *testing.T) {
	b := testbundle.Tiny(t, "v2")
	root := t.TempDir()
	store, err := checkpoints.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(t, b, Settings{MaxTokens: 5})
	e := Start(s, ModelInfo{})
	defer e.Close()
	e.UseStore(store, 0)
	wait := func(want Op) Event {
		t.Helper()
		evs := collect(t, e, func(ev Event) bool {
			switch x := ev.(type) {
			case Checkpoints:
				return x.Op == want
			case Failed:
				return true
			}
			return isEnd(ev)
		})
		return evs[len(evs)-1]
	}
	e.SaveCheckpoint("empty-ok")
	if ev, ok := wait("save").(Checkpoints); !ok || len(ev.List) != 1 || !ev.List[0].Compatible {
		t.Fatalf("save of an empty conversation: %#v", ev)
	}
	e.Send("hello")
	collect(t, e, isEnd)
	e.SaveCheckpoint("a")
	wait("save")
	// The autosave reports the list too (the panel shows it; an empty
	// list would empty the panel).
	e.Autosave()
	if ev, ok := wait("autosave").(Checkpoints); !ok || fmt.Sprint(names(ev.List)) != fmt.Sprint([]string{checkpoints.Autosave, "a", "empty-ok"}) {
		t.Fatalf("autosave: %#v", ev)
	}
	e.Clear()
	collect(t, e, func(ev Event) bool { _, ok := ev.(Cleared); return ok })
	e.LoadCheckpoint("a")
	var restored []Message
	evs := collect(t, e, func(ev Event) bool {
		if c, ok := ev.(Cleared); ok {
			restored = c.Messages
		}
		x, ok := ev.(Checkpoints)
		return ok && x.Op == "load"
	})
	if len(restored) != 2 || len(e.Messages()) != 2 {
		t.Fatalf("after load: %d messages (events %d)", len(restored), len(evs))
	}
	e.RenameCheckpoint("a", "b")
	if ev := wait("rename").(Checkpoints); fmt.Sprint(names(ev.List)) != fmt.Sprint([]string{checkpoints.Autosave, "b", "empty-ok"}) {
		t.Fatalf("after rename: %+v", ev.List)
	}
	e.LoadCheckpoint("nope")
	if f, ok := wait("load").(Failed); !ok || !errors.Is(f.Err, checkpoints.ErrNotFound) {
		t.Fatalf("loading a missing checkpoint: %#v", f)
	}
	// Corrupt one file of "b": refused, conversation unchanged.
	before := e.Messages()
	dirs, _ := os.ReadDir(root)
	for _, d := range dirs {
		if d.Name() == "b" {
			files, _ := os.ReadDir(filepath.Join(root, "b"))
			for _, f := range files {
				if strings.HasPrefix(f.Name(), "state_") {
					p := filepath.Join(root, "b", f.Name())
					data, _ := os.ReadFile(p)
					data[len(data)/2] ^= 0xff
					os.WriteFile(p, data, 0o600)
					break
				}
			}
		}
	}
	e.LoadCheckpoint("b")
	f, ok := wait("load").(Failed)
	if !ok || !strings.Contains(f.Err.Error(), "state_") {
		t.Fatalf("loading a corrupt checkpoint: %#v", f)
	}
	if fmt.Sprint(e.Messages()) != fmt.Sprint(before) {
		t.Fatal("a refused load changed the conversation")
	}
	e.DeleteCheckpoint("b")
	if ev := wait("delete").(Checkpoints); len(ev.List) != 2 {
		t.Fatalf("after delete: %+v", ev.List)
	}
}

// TestForeignCheckpointRefused names both bundles.
func TestForeignCheckpointRefused(t *testing.T) {
	store := tempStore(t)
	r1 := newSession(t, testbundle.Tiny(t, "r1"), Settings{MaxTokens: 3})
	reply(t, r1, "x")
	saveTo(t, store, r1, "r1chat")
	s3 := newSession(t, testbundle.Tiny(t, "stateful3"), Settings{})
	e := Start(s3, ModelInfo{})
	defer e.Close()
	e.UseStore(store, 0)
	e.LoadCheckpoint("r1chat")
	evs := collect(t, e, func(ev Event) bool { _, ok := ev.(Failed); return ok })
	f := evs[len(evs)-1].(Failed)
	var ie *checkpoints.IdentityError
	if !errors.As(f.Err, &ie) || !strings.Contains(f.Err.Error(), "synthetic-r1") || !strings.Contains(f.Err.Error(), "stateful3") {
		t.Fatalf("foreign load: %v", f.Err)
	}
}

// TestContinueFromCoreLLMDirectory: an r1 cache written in corellm-chat's
// --kv-save layout and read back continues exactly as the session that
// wrote it would have.
func TestContinueFromCoreLLMDirectory(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	a := newSession(t, b, Settings{Speculation: SpecModeOff})
	if err := a.PrefillOnly("Tell me about pears.", func(Event) {}); err != nil {
		t.Fatal(err)
	}
	cp, err := a.Checkpoint("kv", 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kv")
	if err := checkpoints.WriteCoreLLM(dir, cp); err != nil {
		t.Fatal(err)
	}
	ref := newSession(t, b, Settings{MaxTokens: 20, Speculation: SpecModeOff})
	ref.stops = nil
	want, _ := reply(t, ref, "Tell me about pears.")

	id, _ := checkpoints.CoreLLMIdentityOf(b)
	kv, err := checkpoints.ReadCoreLLM(dir, &id)
	if err != nil {
		t.Fatal(err)
	}
	toks, pending := kv.Tokens()
	if pending == nil || *pending != want[0] {
		t.Fatalf("pending %v, want the prefill's prediction %d", pending, want[0])
	}
	c := newSession(t, b, Settings{MaxTokens: 20, Speculation: SpecModeOn})
	c.stops = nil
	err = c.Restore(&checkpoints.Checkpoint{Meta: checkpoints.Meta{Name: "kv"}, Tokens: toks, Pending: pending, Cache: kv.Cache})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	if err := c.Continue(func(e Event) {
		if d, ok := e.(*Delta); ok {
			got = append(got, d.Tokens...)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("continued %v, uninterrupted %v", got, want)
	}
}

// tempStore is a checkpoint store in a folder of the test's own.
func tempStore(t *testing.T) *checkpoints.Store {
	t.Helper()
	store, err := checkpoints.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// saveTo saves s's conversation in store as checkpoint name.
func saveTo(t *testing.T, store *checkpoints.Store, s *Session, name string) {
	t.Helper()
	cp, err := s.Checkpoint(name, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(cp); err != nil {
		t.Fatal(err)
	}
}

// names are the names of a checkpoint list, in its order.
func names(l []CheckpointInfo) []string {
	out := make([]string, len(l))
	for i, c := range l {
		out[i] = c.Name
	}
	return out
}
