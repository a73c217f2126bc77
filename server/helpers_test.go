package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

func TestMain(m *testing.M) { testbundle.Main(m) }

// slowChain paces decoding, so a test can act while a reply streams.
type slowChain struct {
	chain.Chain
	delay time.Duration
}

func (c slowChain) Decode(t int) (int, error) {
	time.Sleep(c.delay)
	return c.Chain.Decode(t)
}

func (c slowChain) Verify(t []int) ([]int, error) {
	time.Sleep(c.delay)
	return c.Chain.Verify(t)
}

// newSession opens a session on the tiny bundle; delay paces it.
func newSession(t testing.TB, b *bundle.Bundle, set engine.Settings, delay time.Duration) *engine.Session {
	t.Helper()
	c, err := chain.Open(b, reference.New(), chain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ch chain.Chain = c
	if delay > 0 {
		ch = slowChain{Chain: c, delay: delay}
	}
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.NewSession(b, ch, tok, set)
	if err != nil {
		t.Fatal(err)
	}
	s.Memory = nil
	if len(b.Encoders) > 0 {
		s.Media = engine.NewEncoders(b, reference.New(), coreml.CPUAndGPU)
	}
	return s
}

// testServer is a server over the tiny bundle, on 127.0.0.1:0 and a unix
// socket.
type testServer struct {
	*Server
	eng    *engine.Engine
	url    string
	sock   string
	store  *checkpoints.Store
	closed bool
}

type serverOpts struct {
	delay   time.Duration
	key     string
	queue   int
	grace   time.Duration
	metrics func(engine.TurnMetrics) error
	preset  string // "" is tiny
	family  string // "" is r1
	// maxMedia is the largest file a request may carry (0: the default).
	maxMedia int64
	history  bool // keep a conversation history
	guard    GuardOptions
	aliases  []string
	strict   bool // server.strict_sampling
	logger   *slog.Logger
	defaults *engine.Settings // the requests' defaults; nil: engine.DefaultSettings
	// dir is the folder of the socket and the checkpoints ("" a new
	// one), addr the TCP address ("" any port): a server restarted on
	// both finds its autosave and is reached where the first was.
	dir    string
	addr   string
	resume bool // load the autosave first, as serve --continue
	// replyCap caps a reply whose request sets none (MaxReplyTokens).
	replyCap int
	// Connection limits (0: the defaults).
	header, body, idle, send time.Duration
	maxConns                 int
	autosave                 time.Duration // 0: the default
	maxBuffered              int64         // bodies held at once (0: the default)
	script                   string        // a reference.Script's JSON the bundle plays (tools_test.go)
}

func startServer(t testing.TB, o serverOpts) *testServer {
	t.Helper()
	if o.preset == "" {
		o.preset = "tiny"
	}
	if o.family == "" {
		o.family = "r1"
	}
	b := testbundle.Preset(t, o.family, o.preset)
	sess := newSession(t, b, engine.DefaultSettings(), o.delay)
	if o.script != "" {
		sess = scriptedSession(t, b, o.script)
	}
	sess.Metrics = o.metrics
	caps := sess.Capabilities()
	info := engine.ModelInfo{Name: b.Name(), Family: string(b.Family), Context: caps.Context, VerifyWidths: caps.VerifyWidths,
		Logits: caps.Logits, Runtime: "reference", Media: sess.Media.Kinds()}
	eng := engine.Start(sess, info)
	dir := o.dir
	if dir == "" {
		dir = t.TempDir()
	}
	store, err := checkpoints.Open(filepath.Join(dir, "checkpoints"))
	if err != nil {
		t.Fatal(err)
	}
	eng.UseStore(store, 0)
	if o.history {
		hist, err := checkpoints.Open(filepath.Join(dir, "history"))
		if err != nil {
			t.Fatal(err)
		}
		eng.UseHistory(hist, engine.HistoryPolicy{KeepKV: 2, KVBudget: 1 << 30})
	}
	defaults := engine.DefaultSettings()
	if o.defaults != nil {
		defaults = *o.defaults
	}
	srv := New(Options{Engine: eng, BundleDir: b.Dir, BundleID: b.Identity.ID, Defaults: defaults,
		APIKey: o.key, QueueLimit: o.queue, ShutdownGrace: o.grace, MaxMediaBytes: o.maxMedia,
		Guard: o.guard, Aliases: o.aliases, StrictSampling: o.strict, Version: "v1.2.3-test", Logger: o.logger, MaxReplyTokens: o.replyCap,
		HeaderTimeout: o.header, BodyTimeout: o.body, IdleTimeout: o.idle, SendTimeout: o.send, MaxConns: o.maxConns,
		AutosaveEvery: o.autosave, MaxBufferedBytes: o.maxBuffered, MaxBytesPerToken: sess.MaxBytesPerToken()})
	if o.resume {
		for _, ev := range srv.command(engine.OpLoad, func(e Engine) error { return e.LoadCheckpoint(checkpoints.Autosave) }) {
			if f, ok := ev.(engine.Failed); ok {
				t.Fatalf("resume: %v", f.Err)
			}
		}
	}
	if o.addr == "" {
		o.addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	ul, err := ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	go srv.Serve(ul)
	ts := &testServer{Server: srv, eng: eng, url: "http://" + l.Addr().String(), sock: sock, store: store}
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

func (ts *testServer) stop(t testing.TB) {
	if ts.closed {
		return
	}
	ts.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	ts.eng.Close()
}

// engineReply is the reply of the engine alone: a fresh session, one
// turn per message, greedy.
func engineReply(t testing.TB, set engine.Settings, msgs ...string) []string {
	t.Helper()
	s := newSession(t, testbundle.Tiny(t, "r1"), set, 0)
	defer s.Close()
	var out []string
	for _, m := range msgs {
		var reply string
		if err := s.Send(m, func(ev engine.Event) {
			if f, ok := ev.(engine.Finished); ok {
				reply = f.Reply
			}
		}); err != nil {
			t.Fatal(err)
		}
		out = append(out, reply)
	}
	return out
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

// postChat posts a raw body to /v1/chat/completions, for what a client
// library would never send, and returns the answer and the API error it
// carries.
func postChat(t testing.TB, ts *testServer, body string) (*http.Response, apiErrorDetail) {
	t.Helper()
	return postChatWith(t, ts, body, nil)
}

// postChatWith is postChat with headers of its own.
func postChatWith(t testing.TB, ts *testServer, body string, header http.Header) (*http.Response, apiErrorDetail) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiErrorBody
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("HTTP %d: the answer is no API error: %v", resp.StatusCode, err)
	}
	return resp, e.Error
}

// jsonOf shows a value as JSON, for failure messages.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sendRefused sends a message that must not make it: the refusal the
// call returns (the client or the server said no at once), else the
// engine's Failed that follows.
func sendRefused(t *testing.T, c *Client, text string, media ...engine.MediaFile) error {
	t.Helper()
	if err := c.Send(text, media...); err != nil {
		return err
	}
	fl := until(t, c, func(ev engine.Event) bool { e, ok := ev.(engine.Failed); return ok && e.Op == engine.OpSend })
	return fl[len(fl)-1].(engine.Failed).Err
}
