package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/internal/syncbuf"
	"github.com/orchard-llm/orchard/server"
)

// bannerAddr finds the TCP address in the banner of orchard serve.
var bannerAddr = regexp.MustCompile(`listening on  http://(127\.0\.0\.1:\d+)`)

// waitBanner waits up to limit for the banner of orchard serve on stderr
// and returns its TCP address; exited says whether serve ended meanwhile
// (and with what code).
func waitBanner(t *testing.T, stderr *syncbuf.Buffer, limit time.Duration, exited func() (int, bool)) string {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		if m := bannerAddr.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		if code, ok := exited(); ok {
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner: %s", stderr.String())
		}
	}
}

// servingHere is orchard serve run by Main in this process.
type servingHere struct {
	addr   string // its TCP address
	stderr *syncbuf.Buffer
	done   chan int
}

// serveHere runs `orchard serve ARGS` in this process and waits for its
// banner.
func serveHere(t *testing.T, args ...string) *servingHere {
	t.Helper()
	s := &servingHere{stderr: &syncbuf.Buffer{}, done: make(chan int, 1)}
	go func() {
		s.done <- Main(append([]string{"serve"}, args...), strings.NewReader(""), &bytes.Buffer{}, s.stderr)
	}()
	s.addr = waitBanner(t, s.stderr, 60*time.Second, func() (int, bool) {
		select {
		case code := <-s.done:
			return code, true
		default:
			return 0, false
		}
	})
	return s
}

// stop sends this process SIGTERM, which serve catches, and fails the
// test unless serve exits 0 within a minute.
func (s *servingHere) stop(t *testing.T) {
	t.Helper()
	syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	select {
	case code := <-s.done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, s.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}

func serveEnv(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("ORCHARD_CONFIG", "")
	t.Setenv("ORCHARD_DATA_DIR", "")
	t.Setenv("ORCHARD_API_KEY", "")
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	return home
}

// TestServeRefusals: usage mistakes are exit 2 before anything loads.
func TestServeRefusals(t *testing.T) {
	serveEnv(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"serve", "--demo", "--listen", "0.0.0.0:0"}, "beyond this machine"},
		{[]string{"serve", "--demo", "--listen", "nonsense"}, "want host:port"},
		{[]string{"serve"}, "give --model DIR"},
		{[]string{"serve", "--demo", "--queue", "0"}, "--queue"},
		{[]string{"serve", "--demo", "extra"}, "unexpected argument"},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.says) {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
	}
}

// TestServe: orchard serve --demo listens on TCP and the socket, prints
// how to reach it, answers, and on SIGTERM shuts down with exit 0.
func TestServe(t *testing.T) {
	home := serveEnv(t)
	sock := filepath.Join(home, "s.sock")
	srv := serveHere(t, "--demo", "--listen", "127.0.0.1:0", "--socket", sock, "--api-key", "k", "--max-media-size", "3MiB",
		"--origins", "http://localhost:3000", "--aliases", "gpt-4o-mini")
	banner := srv.stderr.String()
	for _, want := range []string{"ssh -L", "curl http://127.0.0.1:", "Authorization: Bearer", "orchard --attach"} {
		if !strings.Contains(banner, want) {
			t.Errorf("the banner lacks %q:\n%s", want, banner)
		}
	}
	h, err := server.Probe(context.Background(), srv.addr, "k")
	if err != nil || h.Status != "ok" || h.BundleID == "" {
		t.Fatalf("TCP: %+v %v", h, err)
	}
	if _, err := server.Probe(context.Background(), "unix:"+sock, ""); err != nil {
		t.Fatalf("socket: %v", err)
	}
	// Without the key /health says only that the server is up.
	if h, err := server.Probe(context.Background(), srv.addr, ""); err != nil || h.Status != "ok" || h.BundleID != "" || h.BundleDir != "" {
		t.Fatalf("TCP health without the key: %+v %v", h, err)
	}
	// The guard, the aliases and the version reach the server.
	do := func(method, path, host string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+srv.addr+path, strings.NewReader(body))
		if host != "" {
			req.Host = host
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := do("GET", "/v1/models", "evil.example", map[string]string{"Authorization": "Bearer k"}, ""); r.StatusCode != 403 {
		t.Errorf("a foreign Host: HTTP %d", r.StatusCode)
	}
	if r := do("OPTIONS", "/v1/chat/completions", "", map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}, ""); r.StatusCode != 204 {
		t.Errorf("a preflight from --origins: HTTP %d", r.StatusCode)
	}
	r := do("POST", "/v1/chat/completions", "", map[string]string{"Authorization": "Bearer k", "Content-Type": "application/json"},
		`{"model": "gpt-4o-mini", "temperature": 1, "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}]}`)
	if r.StatusCode != 200 || r.Header.Get("X-Orchard-Ignored") != "temperature" {
		t.Errorf("an alias at temperature 1: HTTP %d, ignored %q", r.StatusCode, r.Header.Get("X-Orchard-Ignored"))
	}
	var health struct {
		Version string `json:"version"`
	}
	if resp, err := http.Get("http://" + srv.addr + "/health"); err == nil {
		json.NewDecoder(resp.Body).Decode(&health)
		resp.Body.Close()
	}
	if health.Version != moduleVersion() {
		t.Errorf("health version %q, want %q", health.Version, moduleVersion())
	}
	// server.max_media_size reaches the server: attached screens read it.
	req, _ := http.NewRequest("GET", "http://"+srv.addr+"/orchard/v1/session", nil)
	req.Header.Set("Authorization", "Bearer k")
	var session struct {
		Info struct {
			MaxFileBytes int64 `json:"max_file_bytes"`
		} `json:"info"`
		Settings struct {
			MaxTokens int `json:"max_tokens"`
		} `json:"settings"`
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&session)
	resp.Body.Close()
	if err != nil || session.Info.MaxFileBytes != 3<<20 {
		t.Errorf("max_file_bytes %d, want 3 MiB (%v)", session.Info.MaxFileBytes, err)
	}
	// The demo's chat replies are capped as in the demo chat.
	if session.Settings.MaxTokens != demoReplyTokens {
		t.Errorf("the demo chat's max_tokens is %d, want %d", session.Settings.MaxTokens, demoReplyTokens)
	}
	srv.stop(t)
	if _, err := server.Probe(context.Background(), "unix:"+sock, ""); err == nil {
		t.Fatal("the socket still answers")
	}
}
