//go:build darwin || linux

package checkpoints

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
)

// crashEnv, when set, makes TestCrashWhileSaving the child: it saves into
// the store it names until it is killed.
const crashEnv = "ORCHARD_CHECKPOINTS_CRASH_STORE"

// generation is a 16 MiB checkpoint whose every byte and token says g, so
// a loaded one shows whether it is whole and which save it came from. Its
// position is far enough in for the bundle's caches to hold that much.
func generation(g int) *Checkpoint {
	const buffers, size, pos = 8, 2 << 20, 256
	id := identity(bundle.V2, "crash")
	cp := &Checkpoint{Meta: Meta{Name: "main", Identity: id, BundleName: "crash test"},
		Tokens: slices.Repeat([]int{g}, pos), Cache: Cache{Family: bundle.V2, Position: pos}}
	for i := range buffers {
		cp.Cache.Buffers = append(cp.Cache.Buffers, Buffer{Name: fmt.Sprintf("chunk_%d/k", i), Shape: []int{size / 2},
			DType: coreml.Float16, Data: bytes.Repeat([]byte{byte(g)}, size)})
	}
	return cp
}

func generationOf(t *testing.T, cp *Checkpoint) int {
	t.Helper()
	g := cp.Tokens[0]
	for _, b := range cp.Cache.Buffers {
		if len(bytes.Trim(b.Data, string([]byte{byte(g)}))) != 0 {
			t.Fatalf("buffer %s mixes generations (tokens say %d)", b.Name, g)
		}
	}
	return g
}

func crashChild(root string) {
	s, err := Open(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	cp, err := s.Show("main")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println("ready")
	for g := cp.Tokens[0] + 1; ; g++ {
		if err := s.Save(generation(g % 256)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
}

// A child process saves a large checkpoint over and over and is killed
// with SIGKILL at a random moment; afterwards the store holds the old
// checkpoint or the new one, whole, and no temp folder is visible.
func TestCrashWhileSaving(t *testing.T) {
	if root := os.Getenv(crashEnv); root != "" {
		crashChild(root)
	}
	root := filepath.Join(t.TempDir(), "store")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Save(generation(0)); err != nil {
		t.Fatal(err)
	}
	saveTime := time.Since(start)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	last, unchanged := 0, 0
	for run := range 10 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWhileSaving$")
		cmd.Env = append(os.Environ(), crashEnv+"="+root)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %q %s", line, stderr.String())
		}
		// Anywhere within a few saves: before, inside or between them.
		time.Sleep(time.Duration(rng.Int64N(int64(4*saveTime) + 1)))
		cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("run %d: the child ended by itself (%v): %s", run, err, stderr.String())
		}

		s, err := Open(root)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if e.Name() != "main" && e.Name() != lockFile {
				t.Errorf("run %d: %s left in the store", run, e.Name())
			}
		}
		list, err := s.List()
		if err != nil || len(list) != 1 || list[0].Name != "main" || list[0].Problem != "" {
			t.Fatalf("run %d: list %+v %v", run, list, err)
		}
		cp, err := s.Load("main", identity(bundle.V2, "crash"))
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		g := generationOf(t, cp)
		if g < last {
			t.Errorf("run %d: generation %d went back from %d", run, g, last)
		}
		if g == last {
			unchanged++
		}
		last = g
	}
	t.Logf("one save takes %v; after 10 kills the store held generation %d; %d kills came before the child's first save landed", saveTime, last, unchanged)
}
