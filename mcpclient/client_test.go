package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchard-llm/orchard/config"
)

// stdioServer runs this test binary as an MCP server over stdio; started
// names a file the server writes its pid to when it starts.
func stdioServer(t *testing.T, mode string) (s Server, started string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	started = filepath.Join(t.TempDir(), "started")
	return Server{Command: exe, Env: map[string]string{serverEnv: mode, startedEnv: started}, Enabled: true}, started
}

// httpServer serves the test server by streamable HTTP, to requests that
// carry the bearer key.
func httpServer(t *testing.T, key string) Server {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testServer() }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return Server{URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer " + key}, Enabled: true}
}

func newClient(t *testing.T, servers map[string]Server, o Options) *Client {
	t.Helper()
	c := New(servers, o)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestServers: the same behaviour over stdio and streamable HTTP: list,
// call, a tool that fails, one that hangs, one that writes 1 MB.
func TestServers(t *testing.T) {
	stdio, started := stdioServer(t, "serve")
	for name, cfg := range map[string]Server{"stdio": stdio, "http": httpServer(t, "k3y")} {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, map[string]Server{"test": cfg}, Options{CallTimeout: 2 * time.Second, MaxOutput: 64 << 10})
			ctx := context.Background()
			if name == "stdio" {
				if _, err := os.Stat(started); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the server started before its first use (%v)", err)
				}
			}

			tools, err := c.Tools(ctx, "test")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			var echo Tool
			for _, tl := range tools {
				names = append(names, tl.Name)
				if tl.Name == "echo" {
					echo = tl
				}
			}
			slices.Sort(names)
			if want := []string{"big", "crash", "echo", "env", "fail", "hang"}; !slices.Equal(names, want) {
				t.Fatalf("tools = %v, want %v", names, want)
			}
			props, _ := echo.InputSchema["properties"].(map[string]any)
			if echo.Description != "Say the text back" || props["text"] == nil || echo.FullName() != "test.echo" {
				t.Errorf("echo = %+v", echo)
			}

			r, err := c.Call(ctx, "test", "echo", map[string]any{"text": "hi"})
			if err != nil || r.Text != "echo: hi" || r.IsError || r.Truncated {
				t.Fatalf("echo: %+v, %v", r, err)
			}

			r, err = c.Call(ctx, "test", "fail", nil)
			if err != nil || !r.IsError || !strings.Contains(r.Text, "the disk is on fire") {
				t.Errorf("fail: %+v, %v", r, err)
			}

			begin := time.Now()
			_, err = c.Call(ctx, "test", "hang", nil)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 2s") {
				t.Errorf("hang: %v", err)
			}
			if d := time.Since(begin); d > 10*time.Second {
				t.Errorf("hang took %v", d)
			}
			// The server is still there after a call timed out.
			if r, err := c.Call(ctx, "test", "echo", map[string]any{"text": "still"}); err != nil || r.Text != "echo: still" {
				t.Errorf("after the timeout: %+v, %v", r, err)
			}

			r, err = c.Call(ctx, "test", "big", map[string]any{"bytes": 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Truncated || len(r.Full) != 1<<20 || !strings.HasPrefix(r.Full, r.Text[:64<<10]) {
				t.Errorf("big: truncated %v, full %d bytes, text %d bytes", r.Truncated, len(r.Full), len(r.Text))
			}
			if !utf8.ValidString(r.Text) || len(r.Text) > 64<<10+200 || !strings.Contains(r.Text, "the tool wrote 1048576 bytes, the first 65536 are shown") {
				t.Errorf("big: the text for the model is %d bytes, ending %q", len(r.Text), r.Text[len(r.Text)-100:])
			}

			if _, err := c.Call(ctx, "test", "no_such_tool", nil); err == nil {
				t.Error("an unknown tool gave no error")
			}
			if _, err := c.Call(ctx, "other", "echo", nil); err == nil || !strings.Contains(err.Error(), `no server "other"`) {
				t.Errorf("an unknown server: %v", err)
			}

			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if _, err := c.Call(ctx, "test", "echo", nil); !errors.Is(err, ErrClosed) {
				t.Errorf("a call after Close: %v", err)
			}
			if name == "stdio" {
				if pid := readPid(t, started); alive(pid) {
					t.Errorf("the server's process %d is still running after Close", pid)
				}
			}
		})
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestCrashAtStart: a server that dies before the handshake is an error
// that shows what it wrote to stderr.
func TestCrashAtStart(t *testing.T) {
	cfg, _ := stdioServer(t, "crash-at-start")
	c := newClient(t, map[string]Server{"weather": cfg}, Options{})
	_, err := c.Tools(context.Background(), "weather")
	var se *ServerError
	if !errors.As(err, &se) || se.Op != "start" || se.Server != "weather" {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(se.Stderr, "fatal: no API key: set WEATHER_API_KEY") || !strings.Contains(err.Error(), "fatal: no API key") {
		t.Errorf("the error does not show the server's stderr: %v", err)
	}
}

// TestCrashDuringCall: a server that dies in a call is an error with its
// stderr; the next use starts it again.
func TestCrashDuringCall(t *testing.T) {
	cfg, started := stdioServer(t, "serve")
	c := newClient(t, map[string]Server{"test": cfg}, Options{})
	ctx := context.Background()
	_, err := c.Call(ctx, "test", "crash", nil)
	var se *ServerError
	if !errors.As(err, &se) || !strings.Contains(se.Stderr, "panic: runtime error: index out of range") {
		t.Fatalf("err = %v", err)
	}
	first := readPid(t, started)
	var r Result
	for range 50 { // the session notices the exit a moment later
		if r, err = c.Call(ctx, "test", "echo", map[string]any{"text": "back"}); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || r.Text != "echo: back" {
		t.Fatalf("after the crash: %+v, %v", r, err)
	}
	if again := readPid(t, started); again == first {
		t.Errorf("the server was not started again (pid %d)", again)
	}
}

func TestEnvAndArgs(t *testing.T) {
	cfg, _ := stdioServer(t, "serve")
	cfg.Env["WEATHER_UNITS"] = "metric"
	c := newClient(t, map[string]Server{"test": cfg}, Options{})
	r, err := c.Call(context.Background(), "test", "env", map[string]any{"text": "WEATHER_UNITS"})
	if err != nil || r.Text != "metric" {
		t.Errorf("the server's env: %+v, %v", r, err)
	}
}

// TestStartFailures: what cannot start says why.
func TestStartFailures(t *testing.T) {
	cases := map[string]struct {
		cfg  Server
		want string
	}{
		"no such command": {Server{Command: "orchard-no-such-mcp-server", Enabled: true}, "executable file not found"},
		"no key":          {Server{URL: httpServer(t, "right").URL, Headers: map[string]string{"Authorization": "Bearer wrong"}, Enabled: true}, "Unauthorized"},
		"bad url":         {Server{URL: "ftp://example.invalid/", Enabled: true}, "want http:// or https://"},
		"both":            {Server{Command: "x", URL: "http://127.0.0.1:1/", Enabled: true}, "both a command and a url"},
		"neither":         {Server{Enabled: true}, "neither a command nor a url"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, map[string]Server{"s": tc.cfg}, Options{StartTimeout: 5 * time.Second})
			_, err := c.Tools(context.Background(), "s")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestDisabledServer(t *testing.T) {
	cfg, started := stdioServer(t, "serve")
	cfg.Enabled = false
	on, _ := stdioServer(t, "serve")
	c := newClient(t, map[string]Server{"off": cfg, "on": on}, Options{})
	if got := c.Servers(); !slices.Equal(got, []string{"on"}) {
		t.Errorf("Servers = %v", got)
	}
	if _, err := c.Tools(context.Background(), "off"); err == nil {
		t.Error("a disabled server answered")
	}
	if _, err := os.Stat(started); err == nil {
		t.Error("a disabled server was started")
	}
}

// TestResultContent: parts other than text are named, structured output
// stands in when there is no text.
func TestResultContent(t *testing.T) {
	r := result(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a chart:"},
		&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 10)},
		&mcp.ResourceLink{Name: "report", URI: "file:///r.pdf"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x", Text: "inline"}},
	}}, 1000, time.Second)
	if want := "a chart:\n[picture: image/png, 10 bytes]\n[resource report: file:///r.pdf]\ninline"; r.Text != want {
		t.Errorf("text = %q", r.Text)
	}
	r = result(&mcp.CallToolResult{StructuredContent: map[string]any{"t": 15}}, 1000, 0)
	if r.Text != `{"t":15}` || r.Structured == nil {
		t.Errorf("structured: %+v", r)
	}
}

func TestTail(t *testing.T) {
	var tl tail
	for i := range 3000 {
		tl.Write([]byte("line " + strconv.Itoa(i) + "\n"))
	}
	got := strings.Split(tl.Tail(), "\n")
	if len(got) != tailLines+1 || got[0] != "…" || got[len(got)-1] != "line 2999" {
		t.Errorf("tail = %q", got)
	}
	var none *tail
	if none.Tail() != "" {
		t.Error("a nil tail is not empty")
	}
}

// config.MCPServer converts to Server, so the two cannot drift apart.
var _ = Server(config.MCPServer{})
