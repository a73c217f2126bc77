package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/internal/syncbuf"
)

// TestServeProcessHelper is not a test: run by serveProcess in a child
// process, it is `orchard serve` with the arguments in
// ORCHARD_SERVE_ARGS (separated by newlines), so a test can kill it with
// SIGKILL or run two servers at once.
func TestServeProcessHelper(t *testing.T) {
	args := os.Getenv("ORCHARD_SERVE_ARGS")
	if args == "" {
		t.Skip("the child process of serveProcess")
	}
	os.Exit(Main(append([]string{"serve"}, strings.Split(args, "\n")...), strings.NewReader(""), io.Discard, os.Stderr))
}

// serveProc is `orchard serve` in a child process.
type serveProc struct {
	cmd    *exec.Cmd
	addr   string
	stderr *syncbuf.Buffer
}

// serveProcess starts `orchard serve ARGS` in a child process (with the
// test's environment) and waits for its banner.
func serveProcess(t *testing.T, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeProcessHelper$")
	cmd.Env = append(os.Environ(), "ORCHARD_SERVE_ARGS="+strings.Join(args, "\n"))
	p := &serveProc{cmd: cmd, stderr: &syncbuf.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill(syscall.SIGKILL) })
	p.addr = waitBanner(t, p.stderr, 90*time.Second, func() (int, bool) {
		return p.cmd.ProcessState.ExitCode(), p.cmd.ProcessState != nil
	})
	return p
}

// kill sends sig and waits for the process to end; it returns the exit
// code (-1 when killed by a signal).
func (p *serveProc) kill(sig syscall.Signal) int {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Signal(sig)
		p.cmd.Wait()
	}
	return p.cmd.ProcessState.ExitCode()
}

// post sends a JSON body and decodes the JSON answer into out.
func post(t *testing.T, addr, path, body string, out any) int {
	t.Helper()
	resp, err := http.Post("http://"+addr+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode
}

type completion struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		Details struct {
			Cached int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func complete(t *testing.T, addr string, msgs ...string) completion {
	t.Helper()
	var ms []map[string]string
	for i, m := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		ms = append(ms, map[string]string{"role": role, "content": m})
	}
	body, _ := json.Marshal(map[string]any{"model": "orchard", "messages": ms, "max_tokens": 4})
	var c completion
	if st := post(t, addr, "/v1/chat/completions", string(body), &c); st != 200 || len(c.Choices) != 1 {
		t.Fatalf("completion: %d %+v", st, c)
	}
	return c
}

// TestServeSpillFolders: orchard serve keeps the conversations it spills
// in a folder of its own under <data>/conversations: a user's file there
// survives start and exit, and two servers on one data folder keep each
// other's spilled caches (the second one's start and exit remove none of
// the first's, which still serves from them).
func TestServeSpillFolders(t *testing.T) {
	home := serveEnv(t)
	data := filepath.Join(home, "notes")
	convs := filepath.Join(data, "conversations")
	if err := os.MkdirAll(convs, 0o755); err != nil {
		t.Fatal(err)
	}
	thesis := filepath.Join(convs, "thesis.txt")
	if err := os.WriteFile(thesis, []byte("chapter one"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--demo", "--data-dir", data, "--listen", "127.0.0.1:0", "--socket", "none", "--keep", "0"}
	a := serveProcess(t, args...)
	if _, err := os.Stat(thesis); err != nil {
		t.Fatalf("the user's file in conversations/ is gone at start: %v", err)
	}
	first := complete(t, a.addr, "the first conversation")
	complete(t, a.addr, "another one, which pushes the first out of memory")
	spilled := func() []string {
		files, _ := filepath.Glob(filepath.Join(convs, "spill-*", "conversation-*.gob"))
		return files
	}
	aFiles := spilled()
	if len(aFiles) == 0 {
		t.Fatalf("server a spilled nothing: %v", aFiles)
	}

	// Server b, in this process, on the same data folder.
	b := serveHere(t, args...)
	complete(t, b.addr, "b's own")
	complete(t, b.addr, "and b's second")
	b.stop(t)
	for _, f := range aFiles {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("b's start or exit removed a's spilled cache %s", f)
		}
	}
	// a serves its first conversation from the disk still.
	again := complete(t, a.addr, "the first conversation", first.Choices[0].Message.Content, "go on")
	if again.Usage.Details.Cached == 0 {
		t.Fatal("a's spilled conversation was not reused")
	}
	if code := a.kill(syscall.SIGTERM); code != 0 {
		t.Fatalf("a: exit %d: %s", code, a.stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(convs, "spill-*")); len(left) != 0 {
		t.Fatalf("spill folders left after both exited: %v", left)
	}
	if _, err := os.Stat(thesis); err != nil {
		t.Fatalf("the user's file in conversations/ is gone: %v", err)
	}
}

// sessionMessages reads the chat's conversation from a server.
func sessionMessages(t *testing.T, addr string) []struct{ Role, Content string } {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/orchard/v1/session")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s.Messages
}

// TestServeKillLosesOnlyTheTurnInFlight: a chat turn sent to orchard
// serve with no chat screen attached is autosaved when it ends; killed
// with SIGKILL during the next turn, the server comes back with
// --continue holding the first turn whole (and the second only if it
// had ended and been saved too).
func TestServeKillLosesOnlyTheTurnInFlight(t *testing.T) {
	home := serveEnv(t)
	data := filepath.Join(home, "data")
	args := []string{"--demo", "--data-dir", data, "--listen", "127.0.0.1:0", "--socket", "none"}
	a := serveProcess(t, args...)
	if st := post(t, a.addr, "/orchard/v1/session/messages", `{"text": "remember the apples"}`, nil); st != 202 {
		t.Fatalf("send: %d", st)
	}
	t0 := time.Now()
	for {
		if list, _ := checkpoints.Open(filepath.Join(data, "checkpoints")); list != nil {
			if infos, err := list.List(); err == nil && slices.ContainsFunc(infos, func(in checkpoints.Info) bool {
				return in.Name == checkpoints.Autosave && in.Turns == 1
			}) {
				break
			}
		}
		if time.Since(t0) > 30*time.Second {
			t.Fatal("the finished turn was not autosaved")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the turn was on disk %v after it was sent", time.Since(t0).Round(time.Millisecond))
	first := sessionMessages(t, a.addr)
	if len(first) != 2 {
		t.Fatalf("the conversation: %+v", first)
	}
	if st := post(t, a.addr, "/orchard/v1/session/messages", `{"text": "and the pears"}`, nil); st != 202 {
		t.Fatalf("send: %d", st)
	}
	a.kill(syscall.SIGKILL)

	b := serveProcess(t, append(args, "--continue")...)
	var got []struct{ Role, Content string }
	for deadline := time.Now().Add(20 * time.Second); len(got) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("--continue brought nothing back")
		}
		got = sessionMessages(t, b.addr)
	}
	if len(got) != 2 && len(got) != 4 || got[0] != first[0] || got[1] != first[1] || len(got) == 4 && got[2].Content != "and the pears" {
		t.Fatalf("after kill -9 and --continue: %+v, want %+v and at most the turn in flight", got, first)
	}
	if code := b.kill(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d: %s", code, b.stderr.String())
	}
}
