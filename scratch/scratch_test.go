package scratch

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var owned = []string{"conversation-*.gob", ".conversation-*.gob.tmp*"}

// TestMain doubles as the helper process of TestDeadProcess: with
// SCRATCH_HELPER set it opens a folder in that parent, writes what it is
// told to, prints the folder and waits to be killed.
func TestMain(m *testing.M) {
	if parent := os.Getenv("SCRATCH_HELPER"); parent != "" {
		f, err := Open(parent, "spill", owned...)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		for _, name := range strings.Fields(os.Getenv("SCRATCH_FILES")) {
			os.WriteFile(filepath.Join(f.Dir(), name), []byte("x"), 0o600)
		}
		fmt.Println(f.Dir())
		select {}
	}
	os.Exit(m.Run())
}

func write(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestOpenClose: a folder of its own, 0700, beside whatever the parent
// holds; Close removes the owner's files and the folder, and leaves a file
// someone else put in it, with the folder.
func TestOpenClose(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "conversations")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	thesis := filepath.Join(parent, "thesis.txt")
	write(t, thesis)
	f, err := Open(parent, "spill", owned...)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(f.Dir()); err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(f.Dir()) != parent {
		t.Fatalf("folder %s: %v %v", f.Dir(), fi.Mode(), err)
	}
	if fi, _ := os.Stat(parent); fi.Mode().Perm() != 0o755 {
		t.Fatalf("the parent's mode changed to %v", fi.Mode())
	}
	write(t, filepath.Join(f.Dir(), "conversation-1.gob"))
	write(t, filepath.Join(f.Dir(), ".conversation-2.gob.tmp123"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(f.Dir()) || !exists(thesis) {
		t.Fatalf("after Close: folder there %v, thesis there %v", exists(f.Dir()), exists(thesis))
	}

	g, err := Open(parent, "spill", owned...)
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(g.Dir(), "notes.txt")
	write(t, notes)
	write(t, filepath.Join(g.Dir(), "conversation-1.gob"))
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if !exists(notes) || exists(filepath.Join(g.Dir(), "conversation-1.gob")) || exists(filepath.Join(g.Dir(), markerName)) {
		t.Fatal("Close removed a file it does not own, or left its own")
	}
}

// TestTwoLive: two owners in one parent never clean each other's folder.
func TestTwoLive(t *testing.T) {
	parent := t.TempDir()
	a, err := Open(parent, "spill", owned...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	mine := filepath.Join(a.Dir(), "conversation-1.gob")
	write(t, mine)
	b, err := Open(parent, "spill", owned...) // cleans dead folders first
	if err != nil {
		t.Fatal(err)
	}
	if n := Clean(parent, "spill", owned...); n != 0 || !exists(mine) {
		t.Fatalf("Clean removed %d live folders; a's file there: %v", n, exists(mine))
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !exists(mine) {
		t.Fatal("b's Close removed a's file")
	}
}

// helper starts a process that opens a folder in parent and writes files
// in it; it returns the folder and the process.
func helper(t *testing.T, parent string, files ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SCRATCH_HELPER="+parent, "SCRATCH_FILES="+strings.Join(files, " "))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error:") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q %v", line, err)
	}
	return strings.TrimSpace(line), cmd
}

// TestDeadProcess: the folder of a process killed with SIGKILL is cleaned
// by the next one — only its own files — while a live process's folder,
// folders without orchard's marker, a foreign marker and a link are left.
func TestDeadProcess(t *testing.T) {
	parent := t.TempDir()
	dead, cmd := helper(t, parent, "conversation-1.gob", ".conversation-2.gob.tmp99")
	deadWithNotes, cmd2 := helper(t, parent, "conversation-1.gob", "notes.txt")
	live, cmd3 := helper(t, parent, "conversation-1.gob")
	defer func() { cmd3.Process.Kill(); cmd3.Wait() }()
	for _, c := range []*exec.Cmd{cmd, cmd2} {
		c.Process.Kill() // SIGKILL: no Close ran
		c.Wait()
	}
	if !exists(filepath.Join(dead, "conversation-1.gob")) {
		t.Fatal("the helper's file is missing before the cleaning")
	}
	// Folders named like orchard's that it cannot prove are its own.
	userMade := filepath.Join(parent, "spill-mine")
	os.Mkdir(userMade, 0o700)
	write(t, filepath.Join(userMade, "conversation-1.gob"))
	foreign := filepath.Join(parent, "spill-foreign")
	os.Mkdir(foreign, 0o700)
	write(t, filepath.Join(foreign, markerName)) // "mine", not orchard's text
	write(t, filepath.Join(foreign, "conversation-1.gob"))
	elsewhere := t.TempDir()
	write(t, filepath.Join(elsewhere, "conversation-1.gob"))
	os.Symlink(elsewhere, filepath.Join(parent, "spill-link"))

	if n := Clean(parent, "spill", owned...); n != 1 {
		t.Errorf("removed %d folders whole, want 1", n)
	}
	if exists(dead) {
		t.Errorf("the dead process's folder %s is still there", dead)
	}
	if !exists(filepath.Join(deadWithNotes, "notes.txt")) || exists(filepath.Join(deadWithNotes, "conversation-1.gob")) {
		t.Errorf("the dead folder with a note: note there %v, cache there %v",
			exists(filepath.Join(deadWithNotes, "notes.txt")), exists(filepath.Join(deadWithNotes, "conversation-1.gob")))
	}
	for _, keep := range []string{filepath.Join(live, "conversation-1.gob"), filepath.Join(userMade, "conversation-1.gob"),
		filepath.Join(foreign, "conversation-1.gob"), filepath.Join(elsewhere, "conversation-1.gob")} {
		if !exists(keep) {
			t.Errorf("%s was removed", keep)
		}
	}
}
