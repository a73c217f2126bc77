package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestSpillRemovesOnlyItsOwn: in a folder the engine did not make, its
// spilled caches are written and removed at Close, and nothing else is:
// a file someone else put there, and the folder, stay as they were.
func TestSpillRemovesOnlyItsOwn(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(4)
	dir := t.TempDir()
	thesis := filepath.Join(dir, "thesis.txt")
	if err := os.WriteFile(thesis, []byte("three years"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := countingSession(t, b, DefaultSettings())
	e := Start(s, ModelInfo{})
	e.KeepConversations(1, 1<<30)
	e.SpillConversations(dir, 1<<30)
	for _, text := range []string{"one", "two", "three"} {
		finished(t, run(t, e, Request{Messages: []Message{{Role: "user", Content: text}}, Settings: set}))
	}
	spilled, _ := filepath.Glob(filepath.Join(dir, "conversation-*.gob"))
	if st := e.ConversationStats(); st.OnDisk < 1 || len(spilled) != st.OnDisk {
		t.Fatalf("%d on disk, %d files", st.OnDisk, len(spilled))
	}
	e.Close()
	left, _ := os.ReadDir(dir)
	if len(left) != 1 || left[0].Name() != "thesis.txt" {
		t.Fatalf("after Close the folder holds %v, want thesis.txt alone", left)
	}
}
