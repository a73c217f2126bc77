package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/mailbox"
	"github.com/orchard-llm/orchard/regfile"
)

// Client is the chat screen's engine when it runs over a server: it
// implements the TUI's Engine interface with orchard's own endpoints and
// the live event stream. When the stream is lost (the server restarts)
// it attaches again by itself (reconnect.go). Closing it detaches; the
// server, and a reply it is generating, go on.
type Client struct {
	addr   string
	base   string
	key    string
	origin string
	mine   bool // the chat's turn is this screen's (its calls are this screen's to run)
	hc     *http.Client

	events chan engine.Event
	box    *mailbox.Box[engine.Event]
	ctx    context.Context // ends at Close
	stop   context.CancelFunc
	done   chan struct{}
	once   sync.Once

	info    engine.ModelInfo
	maxFile int64 // the largest file the server takes with a message

	mu       sync.Mutex
	settings engine.Settings
	msgs     []engine.Message
	window   int       // the first of msgs the model sees
	down     error     // why the stream is lost; nil while attached
	gaveUp   bool      // it will not be attached again (down says why)
	line     *wireLine // the server's line as last told
	apiGen   int       // the running API reply's tokens so far
	apiTPS   float64   // and its speed
}

// transport returns the base URL and the HTTP transport for an address:
// "unix:/path", an absolute socket path, "host:port", ":port" or an
// http:// URL.
func transport(addr string) (string, *http.Transport, error) {
	tr := &http.Transport{MaxIdleConns: 4, IdleConnTimeout: time.Minute}
	switch {
	case strings.HasPrefix(addr, "unix:") || strings.HasPrefix(addr, "/"):
		path := strings.TrimPrefix(addr, "unix:")
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		return "http://orchard", tr, nil
	case strings.HasPrefix(addr, "http://"):
		return strings.TrimSuffix(addr, "/"), tr, nil
	case strings.HasPrefix(addr, "https://"):
		return "", nil, fmt.Errorf("server address %q: orchard serve speaks plain HTTP; reach a remote one through ssh -L", addr)
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", nil, fmt.Errorf("server address %q: want host:port, unix:/path/to/socket or http://host:port", addr)
	}
	return "http://" + addr, tr, nil
}

// Health is what GET /health says about a server.
type Health struct {
	Status    string `json:"status"`
	Model     string `json:"model"`
	BundleDir string `json:"bundle_dir"`
	BundleID  string `json:"bundle_id"`
}

// Probe asks a server for its health; it fails fast when nothing listens.
func Probe(ctx context.Context, addr, key string) (Health, error) {
	base, tr, err := transport(addr)
	if err != nil {
		return Health{}, err
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 3 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return Health{}, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Health{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Health{}, responseError(resp)
	}
	var h Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return Health{}, fmt.Errorf("server %s: /health: %w", addr, err)
	}
	return h, nil
}

// responseError turns an error response into an error with its message.
func responseError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e apiErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return fmt.Errorf("%s (HTTP %d)", e.Error.Message, resp.StatusCode)
	}
	return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
}

// Attach connects to a server's live events and returns the client once
// it has the model, settings and conversation; events follow: the
// Connection (with the context the conversation fills), the line, the
// reply in flight if there is one.
func Connect(ctx context.Context, addr, key string) (*Client, error) {
	base, tr, err := transport(addr)
	if err != nil {
		return nil, err
	}
	c := &Client{addr: addr, base: base, key: key, origin: newID("screen-"), hc: &http.Client{Transport: tr},
		events: make(chan engine.Event), box: mailbox.New(0, mergeScreenEvent), done: make(chan struct{})}
	c.ctx, c.stop = context.WithCancel(context.Background())
	st, first, err := c.dial(ctx)
	if err != nil {
		c.stop()
		tr.CloseIdleConnections()
		return nil, fmt.Errorf("attach to %s: %w", addr, err)
	}
	c.info = first.Info.info()
	c.info.Server = addr
	c.maxFile = first.Info.MaxFileBytes
	if c.maxFile <= 0 {
		c.maxFile = DefaultMaxMediaBytes
	}
	c.adopt(first, false)
	go c.run(st)
	go c.forward()
	return c, nil
}

// adopt takes a server's state in — settings, conversation, the line, the
// chat turn in flight — and tells the screen; again: after a loss, when
// the screen's conversation is replaced by the server's.
func (c *Client) adopt(first wireEvent, again bool) {
	msgs := fromWireMessages(first.Messages)
	cur := first.Current
	if cur != nil && cur.User != "" { // a regenerate or an edit has its message in the state already
		msgs = append(msgs, engine.Message{Role: "user", Content: cur.User, Attachments: cur.Attachments})
	}
	set := first.Settings.settings()
	c.mu.Lock()
	c.settings, c.msgs, c.window, c.down = set, msgs, first.Window, nil
	c.line, c.apiGen, c.apiTPS = first.Line, 0, 0
	line := c.line.event(0, 0)
	c.mu.Unlock()
	c.box.Push(engine.Connection{Addr: c.addr, Reconnected: again, ContextUsed: first.ContextUsed})
	if again {
		c.box.Push(engine.Cleared{Messages: slices.Clone(msgs), ContextUsed: first.ContextUsed, Settings: set, Window: first.Window})
	}
	c.box.Push(line)
	if cur != nil {
		// A reply is being generated: show what came so far, then the
		// rest as it streams.
		c.box.Push(engine.Started{Turn: cur.Turn, PromptTokens: cur.PromptTokens, ReusedTokens: cur.ReusedTokens, Attachments: cur.Attachments})
		if cur.Text != "" {
			c.box.Push(&engine.Delta{Text: cur.Text, Live: cur.Live.live()})
		}
	}
}

func (c *Client) auth(r *http.Request) {
	if c.key != "" {
		r.Header.Set("Authorization", "Bearer "+c.key)
	}
}

// readSSE reads one event's data line(s) as a wireEvent.
func readSSE(rd *bufio.Reader) (wireEvent, error) {
	var data []byte
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			return wireEvent{}, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if len(data) == 0 {
				continue
			}
			var w wireEvent
			if err := json.Unmarshal(data, &w); err != nil {
				return wireEvent{}, fmt.Errorf("event stream: %w", err)
			}
			return w, nil
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimSpace(line[5:])...)
		}
	}
}

// read turns a stream into engine events until it ends, and says why.
func (c *Client) read(st *eventStream) error {
	for {
		w, err := readSSE(st.rd)
		if err != nil {
			return err
		}
		if w.Type == "queue" || w.Request != "" {
			c.lineEvent(w)
			continue
		}
		if w.Type == "request" || w.Type == "state" {
			continue // an API request's traffic, not the chat's
		}
		c.mu.Lock()
		if w.Messages != nil {
			c.msgs, c.window = fromWireMessages(w.Messages), w.Window
		}
		switch {
		case w.Type == "started":
			c.window = w.Window
			c.mine = w.Origin == c.origin
		case w.Type == "compacted":
			c.window = w.Window
		case w.Type == "context" && w.Context != nil:
			c.window = w.Context.Window
		}
		if (w.Type == "settings" || w.Type == "cleared") && w.Settings != nil {
			c.settings = w.Settings.settings()
		}
		var shown []engine.Message
		if w.Type == "started" && w.Origin != c.origin && w.User != "" {
			// Another screen (or a script) sent this message: show it.
			c.msgs = append(c.msgs, engine.Message{Role: "user", Content: w.User, Attachments: w.Attachments})
			shown = slices.Clone(c.msgs)
		}
		set, mine := c.settings, c.mine
		c.mu.Unlock()
		if shown != nil {
			c.box.Push(engine.Cleared{Messages: shown, ContextUsed: w.ReusedTokens, Settings: set, Window: w.Window})
		}
		if ev, ok := fromWire(w); ok {
			if f, ok := ev.(engine.Finished); ok && !mine {
				f.Calls = nil // another screen's turn: that screen runs its calls
				ev = f
			}
			c.box.Push(ev)
		}
	}
}

// lineEvent follows the line: a queue event replaces it, a delta of the
// API request that runs updates its figures; the screen gets the line.
func (c *Client) lineEvent(w wireEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case w.Type == "queue":
		if w.Line.apiRequest() != c.line.apiRequest() {
			c.apiGen, c.apiTPS = 0, 0
		}
		c.line = w.Line
	case w.Type == "delta" && w.Request != "" && w.Request == c.line.apiRequest() && w.Live != nil:
		c.apiGen, c.apiTPS = w.Live.Generated, w.Live.DecodeTokPerS
	default:
		return
	}
	c.box.Push(c.line.event(c.apiGen, c.apiTPS))
}

// mergeScreenEvent merges what a screen needs only the latest of:
// deltas (concatenated, as the engine does), the line, and the reports
// of a lost connection (keeping why it was lost while it retries).
func mergeScreenEvent(last *engine.Event, next engine.Event) bool {
	switch n := next.(type) {
	case engine.Line:
		if _, ok := (*last).(engine.Line); ok {
			*last = n
			return true
		}
	case engine.Connection:
		if l, ok := (*last).(engine.Connection); ok && l.Down && n.Down {
			if n.Retry > 0 {
				n.Err = l.Err
			}
			*last = n
			return true
		}
	}
	return engine.MergeDeltas(last, next)
}

// forward hands events to the screen, blocking only itself.
func (c *Client) forward() {
	defer close(c.events)
	defer close(c.done)
	for {
		evs, open := c.box.Take()
		for _, ev := range evs {
			c.events <- ev
		}
		if !open {
			return
		}
		if len(evs) == 0 {
			<-c.box.Wake()
		}
	}
}

// call sends a command: nil when the server took it (its results come
// on the event stream), else the refusal.
func (c *Client) call(op engine.Op, method, path string, body any) error {
	return c.callWithin(30*time.Second, op, method, path, body)
}

// callWithin is call with a deadline: a message carrying files may take
// a while to reach the server through a slow tunnel.
func (c *Client) callWithin(limit time.Duration, op engine.Op, method, path string, body any) error {
	if err := c.refusal(); err != nil {
		return err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	c.auth(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "respond-async")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("the server at %s: %w", c.addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return responseError(resp)
	}
	io.Copy(io.Discard, resp.Body)
	return nil
}

// Events delivers the chat's events; closed when the stream ends.
func (c *Client) Events() <-chan engine.Event { return c.events }

// Info describes the served model; Attached names the server.
func (c *Client) Info() engine.ModelInfo { return c.info }

func (c *Client) Settings() engine.Settings {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.settings
}

func (c *Client) Messages() []engine.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.msgs)
}

// Window is the first of Messages the model sees, as the server last
// said.
func (c *Client) Window() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.window
}

// Send sends a chat message. Attached files are read here and their bytes
// sent with it: the screen may run on another machine than the server
// (through ssh -L), whose encoders see only what it is sent. The chips
// come back with the turn's events, as in-process.
func (c *Client) Send(text string, media ...engine.MediaFile) error {
	files := make([]wireMedia, 0, len(media))
	var size int64
	for _, f := range media {
		data := f.Data
		if data == nil {
			var err error
			if data, err = regfile.ReadFile(f.Path, c.maxFile); err != nil {
				return attachError(f, err)
			}
		}
		name := f.Name
		if name == "" {
			name = filepath.Base(f.Path)
		}
		files = append(files, wireMedia{Kind: f.Kind, Name: name, Data: data})
		size += int64(len(data))
	}
	// 30 s, and time for the files at 256 KiB/s.
	limit := 30*time.Second + time.Duration(size/(256<<10))*time.Second
	return c.callWithin(limit, engine.OpSend, http.MethodPost, "/orchard/v1/session/messages", map[string]any{"text": text, "origin": c.origin, "media": files})
}

// attachError says why a file could not be sent.
func attachError(f engine.MediaFile, err error) error {
	if errors.Is(err, regfile.ErrTooLarge) {
		return fmt.Errorf("cannot send %s: it %s by the server: %w", f.Path, regfile.Reason(err), regfile.ErrTooLarge)
	}
	return fmt.Errorf("cannot send %s: %s", f.Path, regfile.Reason(err))
}

func (c *Client) Cancel() error {
	return c.call(engine.OpCancel, http.MethodPost, "/orchard/v1/session/cancel", nil)
}

func (c *Client) SetSettings(s engine.Settings) error {
	return c.call(engine.OpSettings, http.MethodPut, "/orchard/v1/settings", toWireSettings(s))
}

func (c *Client) Clear() error {
	return c.call(engine.OpClear, http.MethodPost, "/orchard/v1/session/clear", nil)
}

func (c *Client) SaveCheckpoint(name string) error {
	return c.call(engine.OpSave, http.MethodPost, "/orchard/v1/checkpoints", map[string]string{"name": name})
}

func (c *Client) LoadCheckpoint(name string) error {
	return c.call(engine.OpLoad, http.MethodPost, "/orchard/v1/checkpoints/"+url.PathEscape(name)+"/load", nil)
}

func (c *Client) ForkCheckpoint(name string) error {
	return c.call(engine.OpFork, http.MethodPost, "/orchard/v1/checkpoints/"+url.PathEscape(name)+"/fork", nil)
}

func (c *Client) DeleteCheckpoint(name string) error {
	return c.call(engine.OpDelete, http.MethodDelete, "/orchard/v1/checkpoints/"+url.PathEscape(name), nil)
}

func (c *Client) RenameCheckpoint(oldName, newName string) error {
	return c.call(engine.OpRename, http.MethodPost, "/orchard/v1/checkpoints/"+url.PathEscape(oldName)+"/rename", map[string]string{"name": newName})
}

func (c *Client) ListCheckpoints() error {
	return c.call(engine.OpList, http.MethodGet, "/orchard/v1/checkpoints", nil)
}

func (c *Client) Autosave() error {
	return c.call(engine.OpAutosave, http.MethodPost, "/orchard/v1/session/autosave", nil)
}

// Regenerate asks for a new reply to the last message (Branched and the
// turn's events follow on the stream).
func (c *Client) Regenerate() error {
	return c.call(engine.OpRegenerate, http.MethodPost, "/orchard/v1/session/regenerate", map[string]string{"origin": c.origin})
}

// Edit replaces the last user message and sends it again.
func (c *Client) Edit(text string) error {
	return c.call(engine.OpEdit, http.MethodPost, "/orchard/v1/session/edit", map[string]string{"text": text, "origin": c.origin})
}

// SelectVersion shows another version of message index.
func (c *Client) SelectVersion(index, version int) error {
	return c.call(engine.OpVersion, http.MethodPost, "/orchard/v1/session/version", map[string]int{"index": index, "version": version})
}

// ListHistory asks for the history (the list arrives as an event).
func (c *Client) ListHistory(query string) error {
	return c.call(engine.OpHistory, http.MethodGet, "/orchard/v1/history?q="+url.QueryEscape(query), nil)
}

// ResumeHistory brings a conversation of the history back on the server.
func (c *Client) ResumeHistory(id string) error {
	return c.call(engine.OpResume, http.MethodPost, "/orchard/v1/history/"+url.PathEscape(id)+"/resume", nil)
}

// DeleteHistory removes a conversation from the server's history.
func (c *Client) DeleteHistory(id string) error {
	return c.call(engine.OpHistoryDelete, http.MethodDelete, "/orchard/v1/history/"+url.PathEscape(id), nil)
}

// RenameHistory titles a conversation of the server's history ("" for
// the one on screen).
func (c *Client) RenameHistory(id, title string) error {
	return c.call(engine.OpHistoryRename, http.MethodPost, "/orchard/v1/history/rename", map[string]string{"id": id, "title": title})
}

// Close detaches: the event stream ends; the server goes on.
func (c *Client) Close() error {
	c.once.Do(func() {
		c.stop()
		// Drain what the screen did not read, so forward can finish.
		go func() {
			for range c.events {
			}
		}()
		<-c.done
		c.hc.CloseIdleConnections()
	})
	return nil
}

// Compact has the model summarise the oldest turns it sees.
func (c *Client) Compact() error {
	return c.call(engine.OpCompact, http.MethodPost, "/orchard/v1/session/compact", nil)
}

// Pin keeps message index verbatim through compactions (or no longer).
func (c *Client) Pin(index int, pinned bool) error {
	return c.call(engine.OpPin, http.MethodPost, "/orchard/v1/session/pin", map[string]any{"index": index, "pinned": pinned})
}

// SetSummary replaces the summary in force with the user's text.
func (c *Client) SetSummary(text string) error {
	return c.call(engine.OpSummary, http.MethodPost, "/orchard/v1/session/summary", map[string]string{"text": text})
}

// ElideMedia has the model see an attachment as one line.
func (c *Client) ElideMedia(index, att int, caption string) error {
	return c.call(engine.OpElide, http.MethodPost, "/orchard/v1/session/elide",
		map[string]any{"index": index, "attachment": att, "caption": caption})
}

// ContextView asks for the window's breakdown (a ContextReport follows).
func (c *Client) ContextView() error {
	return c.call(engine.OpContext, http.MethodGet, "/orchard/v1/session/context", nil)
}

// Cost prices a message against the server's conversation: the server's
// Estimator answers (the screen may not have the bundle's tokenizer), so
// each call is a round trip; the chat screen asks after a pause in the
// typing, not per key.
func (c *Client) Cost(text string, media ...engine.MediaCost) (engine.Cost, error) {
	var out engine.Cost
	if err := c.refusal(); err != nil {
		return out, err
	}
	b, err := json.Marshal(costRequest{Text: text, Media: media})
	if err != nil {
		return out, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/orchard/v1/session/cost", bytes.NewReader(b))
	if err != nil {
		return out, err
	}
	c.auth(req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return out, fmt.Errorf("the server at %s: %w", c.addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return out, responseError(resp)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("the server's cost: %w", err)
	}
	return out, nil
}
