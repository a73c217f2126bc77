package server

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/orchard-llm/orchard/engine"
)

// The JSON shapes of orchard's own endpoints and of the live event
// stream; the client (client.go) reads the same types back.

type wireMessage struct {
	Role        string `json:"role"`
	Content     string `json:"content"`
	Interrupted bool   `json:"interrupted,omitempty"` // a reply cut short
	Stopped     bool   `json:"stopped,omitempty"`     // by the user
	// Metrics are a reply's turn figures, as the finished event had them.
	Metrics *engine.TurnMetrics `json:"metrics,omitempty"`
	// Attachments are a user message's pictures and clips as encoded:
	// name, size, sha256, pixels or seconds, soft tokens, thumbnail.
	Attachments []engine.Attachment `json:"attachments,omitempty"`
	// Version is this message's place among its Versions (regenerated
	// replies, edited messages), from 0; none when it has no other.
	Version  int `json:"version,omitempty"`
	Versions int `json:"versions,omitempty"`
	// ToolCalls are a model message's calls, ToolResults a "tool"
	// message's results (the chat's tool loop): [{name, args}], [{name, value}].
	ToolCalls   json.RawMessage `json:"tool_calls,omitempty"`
	ToolResults json.RawMessage `json:"tool_results,omitempty"`
}

// wireHistory is a conversation of the history.
type wireHistory struct {
	ID         string    `json:"id"`
	Title      string    `json:"title"`
	Snippet    string    `json:"snippet,omitempty"`
	Updated    time.Time `json:"updated"`
	Turns      int       `json:"turns"`
	Tokens     int       `json:"tokens"`
	Bytes      int64     `json:"bytes"`
	KV         bool      `json:"kv"`
	Bundle     string    `json:"bundle"`
	Compatible bool      `json:"compatible"`
	Current    bool      `json:"current,omitempty"`
}

type wireSettings struct {
	System            string  `json:"system"`
	Thinking          bool    `json:"thinking"`
	MaxTokens         int     `json:"max_tokens"`
	Speculation       string  `json:"speculation"`
	DraftLength       int     `json:"draft_length"`
	NGramMin          int     `json:"ngram_min"`
	NGramMax          int     `json:"ngram_max"`
	Temperature       float64 `json:"temperature"`
	TopK              int     `json:"top_k"`
	TopP              float64 `json:"top_p"`
	MinP              float64 `json:"min_p"`
	RepetitionPenalty float64 `json:"repetition_penalty"`
	Seed              uint64  `json:"seed"`
	ContextFull       string  `json:"context_full"`
}

type wireLive struct {
	Generated      int     `json:"generated"`
	DecodeTokPerS  float64 `json:"decode_tok_per_s"`
	LastTokenMs    float64 `json:"last_token_ms"`
	ContextUsed    int     `json:"context_used"`
	ContextLimit   int     `json:"context_limit"`
	SpecState      string  `json:"spec_state"`
	AcceptanceRate float64 `json:"acceptance_rate"`
}

type wireInfo struct {
	Name         string   `json:"name"`
	Family       string   `json:"family"`
	ComputeUnits string   `json:"compute_units"`
	Context      int      `json:"context"`
	VerifyWidths []int    `json:"verify_widths"`
	Logits       bool     `json:"logits"`
	Runtime      string   `json:"runtime"`
	Notes        []string `json:"notes,omitempty"`
	Media        []string `json:"media,omitempty"`          // "image", "audio": what /image and /audio may send
	MaxFileBytes int64    `json:"max_file_bytes,omitempty"` // the largest file a message may carry
}

type wireCheckpoint struct {
	Name       string    `json:"name"`
	Created    time.Time `json:"created"`
	Turns      int       `json:"turns"`
	Tokens     int       `json:"tokens"`
	Bytes      int64     `json:"bytes"`
	Bundle     string    `json:"bundle"`
	BundleID   string    `json:"bundle_id"`
	Compatible bool      `json:"compatible"`
	Media      int       `json:"media,omitempty"`     // pictures and clips in the conversation
	Thumbnail  []byte    `json:"thumbnail,omitempty"` // the first picture's (PNG)
}

// wireEvent is one event of GET /orchard/v1/events. Type names the
// event; only the fields of that type are set. Request is set on the
// events of an API request (its completion id); the chat's have none.
type wireEvent struct {
	Type    string `json:"type"`
	Request string `json:"request,omitempty"`

	// started
	Turn         int                 `json:"turn,omitempty"`
	PromptTokens int                 `json:"prompt_tokens,omitempty"`
	ReusedTokens int                 `json:"reused_tokens,omitempty"`
	Versions     int                 `json:"versions,omitempty"`    // of the reply started
	User         string              `json:"user,omitempty"`        // the user's message (chat turns)
	Origin       string              `json:"origin,omitempty"`      // the attached screen that sent it
	Attachments  []engine.Attachment `json:"attachments,omitempty"` // the message's files as encoded
	// prefill
	Done  int `json:"done,omitempty"`
	Total int `json:"total,omitempty"`
	// delta
	Text      string    `json:"text,omitempty"`
	Tokens    []int     `json:"tokens,omitempty"`
	FromDraft []bool    `json:"from_draft,omitempty"`
	Live      *wireLive `json:"live,omitempty"`
	// finished, cancelled
	Reply   *string             `json:"reply,omitempty"`
	Metrics *engine.TurnMetrics `json:"metrics,omitempty"`
	// finished: the calls the reply waits results for (chattools.go)
	Calls json.RawMessage `json:"calls,omitempty"`
	// tools: the chat's tools declared, and their cost in context tokens
	ToolCount  int `json:"tool_count,omitempty"`
	ToolTokens int `json:"tool_tokens,omitempty"`
	// cancelled: while it waited in line; nothing of it is in the conversation
	Unstarted bool `json:"unstarted,omitempty"`
	// failed
	Op    engine.Op `json:"op,omitempty"`
	Error string    `json:"error,omitempty"`
	// settings (and state)
	Settings *wireSettings `json:"settings,omitempty"`
	// checkpoints (and history: the entry's id, title, the query and list)
	Name    string            `json:"name,omitempty"`
	List    *[]wireCheckpoint `json:"list,omitempty"`
	ID      string            `json:"id,omitempty"`
	Title   string            `json:"title,omitempty"`
	Query   string            `json:"query,omitempty"`
	History *[]wireHistory    `json:"history,omitempty"`
	// cleared, state, and the end of a chat turn: the conversation now
	Messages    *[]wireMessage `json:"messages,omitempty"`
	ContextUsed int            `json:"context_used,omitempty"`
	// with messages, and on started: the first message the model sees
	Window int `json:"window,omitempty"`
	// state: the model, and the chat turn in flight if any
	Info    *wireInfo  `json:"info,omitempty"`
	Current *wireEvent `json:"current,omitempty"`
	// request: an API request's life (queued, started, finished)
	Phase  string `json:"phase,omitempty"`
	API    string `json:"api,omitempty"`
	Client string `json:"client,omitempty"`
	// queue (and state): the line after a change (line.go)
	Line *wireLine `json:"line,omitempty"`
	// compacting: Phase, Done, Total; compacted: the compaction;
	// context: the window's breakdown after Op (context.go)
	Compacted *engine.Compacted   `json:"compacted,omitempty"`
	Context   *engine.ContextView `json:"context,omitempty"`
}

func toWireMessages(ms []engine.Message) *[]wireMessage {
	out := make([]wireMessage, 0, len(ms))
	for _, m := range ms {
		w := wireMessage{Role: m.Role, Content: m.Content, Interrupted: m.Interrupted, Stopped: m.Stopped, Metrics: m.Metrics,
			Attachments: m.Attachments, Version: m.Version, Versions: m.Versions}
		w.ToolCalls, w.ToolResults = m.ToolsJSON()
		out = append(out, w)
	}
	return &out
}

func fromWireMessages(ms *[]wireMessage) []engine.Message {
	if ms == nil {
		return nil
	}
	out := make([]engine.Message, 0, len(*ms))
	for _, m := range *ms {
		em := engine.Message{Role: m.Role, Content: m.Content, Interrupted: m.Interrupted, Stopped: m.Stopped, Metrics: m.Metrics,
			Attachments: m.Attachments, Version: m.Version, Versions: m.Versions}
		_ = em.SetToolsJSON(m.ToolCalls, m.ToolResults) // the server wrote them; a stream that garbles them shows the text alone
		out = append(out, em)
	}
	return out
}

func toWireSettings(s engine.Settings) *wireSettings {
	return &wireSettings{System: s.System, Thinking: s.Thinking, MaxTokens: s.MaxTokens, Speculation: string(s.Speculation),
		DraftLength: s.DraftLen, NGramMin: s.NGramMin, NGramMax: s.NGramMax, Temperature: s.Sampling.Temperature,
		TopK: s.Sampling.TopK, TopP: s.Sampling.TopP, MinP: s.Sampling.MinP, RepetitionPenalty: s.Sampling.RepetitionPenalty,
		Seed: s.Sampling.Seed, ContextFull: string(s.ContextPolicy)}
}

func (w *wireSettings) settings() engine.Settings {
	return engine.Settings{System: w.System, Thinking: w.Thinking, MaxTokens: w.MaxTokens, Speculation: engine.SpecMode(w.Speculation),
		DraftLen: w.DraftLength, NGramMin: w.NGramMin, NGramMax: w.NGramMax, ContextPolicy: engine.ContextPolicy(w.ContextFull),
		Sampling: engine.Sampling{Temperature: w.Temperature, TopK: w.TopK, TopP: w.TopP, MinP: w.MinP,
			RepetitionPenalty: w.RepetitionPenalty, Seed: w.Seed}}
}

func toWireLive(l engine.Live) *wireLive {
	return &wireLive{Generated: l.Generated, DecodeTokPerS: l.DecodeTokPerS, LastTokenMs: l.LastTokenMs, ContextUsed: l.ContextUsed,
		ContextLimit: l.ContextLimit, SpecState: string(l.SpecState), AcceptanceRate: l.AcceptanceRate}
}

func (w *wireLive) live() engine.Live {
	if w == nil {
		return engine.Live{}
	}
	return engine.Live{Generated: w.Generated, DecodeTokPerS: w.DecodeTokPerS, LastTokenMs: w.LastTokenMs, ContextUsed: w.ContextUsed,
		ContextLimit: w.ContextLimit, SpecState: engine.SpecState(w.SpecState), AcceptanceRate: w.AcceptanceRate}
}

func toWireInfo(i engine.ModelInfo) *wireInfo {
	return &wireInfo{Name: i.Name, Family: i.Family, ComputeUnits: i.ComputeUnits, Context: i.Context, VerifyWidths: i.VerifyWidths,
		Logits: i.Logits, Runtime: i.Runtime, Notes: i.Notes, Media: i.Media}
}

func (w *wireInfo) info() engine.ModelInfo {
	return engine.ModelInfo{Name: w.Name, Family: w.Family, ComputeUnits: w.ComputeUnits, Context: w.Context, VerifyWidths: w.VerifyWidths,
		Logits: w.Logits, Runtime: w.Runtime, Notes: w.Notes, Media: w.Media}
}

func toWireList(l []engine.CheckpointInfo) *[]wireCheckpoint {
	out := make([]wireCheckpoint, 0, len(l))
	for _, c := range l {
		out = append(out, wireCheckpoint{Name: c.Name, Created: c.Created, Turns: c.Turns, Tokens: c.Tokens, Bytes: c.Bytes,
			Bundle: c.Bundle, BundleID: c.BundleID, Compatible: c.Compatible, Media: c.Media, Thumbnail: c.Thumbnail})
	}
	return &out
}

func fromWireList(l *[]wireCheckpoint) []engine.CheckpointInfo {
	if l == nil {
		return nil
	}
	out := make([]engine.CheckpointInfo, 0, len(*l))
	for _, c := range *l {
		out = append(out, engine.CheckpointInfo{Name: c.Name, Created: c.Created, Turns: c.Turns, Tokens: c.Tokens, Bytes: c.Bytes,
			Bundle: c.Bundle, BundleID: c.BundleID, Compatible: c.Compatible, Media: c.Media, Thumbnail: c.Thumbnail})
	}
	return out
}

func toWireHistory(l []engine.HistoryInfo) *[]wireHistory {
	out := make([]wireHistory, 0, len(l))
	for _, h := range l {
		out = append(out, wireHistory(h))
	}
	return &out
}

func fromWireHistory(l *[]wireHistory) []engine.HistoryInfo {
	if l == nil {
		return nil
	}
	out := make([]engine.HistoryInfo, 0, len(*l))
	for _, h := range *l {
		out = append(out, engine.HistoryInfo(h))
	}
	return out
}

// toWire converts an engine event; ok is false for events the stream
// does not carry (markers).
func toWire(ev engine.Event) (wireEvent, bool) {
	switch e := ev.(type) {
	case engine.Started:
		return wireEvent{Type: "started", Turn: e.Turn, PromptTokens: e.PromptTokens, ReusedTokens: e.ReusedTokens, Attachments: e.Attachments, Versions: e.Versions,
			Window: e.Window}, true
	case engine.PrefillProgress:
		return wireEvent{Type: "prefill", Done: e.Done, Total: e.Total}, true
	case *engine.Delta:
		return wireEvent{Type: "delta", Text: e.Text, Tokens: e.Tokens, FromDraft: e.FromDraft, Live: toWireLive(e.Live)}, true
	case engine.Finished:
		m := e.Metrics
		calls, _ := engine.Message{Calls: e.Calls}.ToolsJSON()
		return wireEvent{Type: "finished", Reply: &e.Reply, Metrics: &m, Calls: calls}, true
	case engine.Cancelled:
		m := e.Metrics
		return wireEvent{Type: "cancelled", Reply: &e.Partial, Metrics: &m, Unstarted: e.Unstarted}, true
	case engine.Failed:
		msg := "failed"
		if e.Err != nil {
			msg = e.Err.Error()
		}
		return wireEvent{Type: "failed", Op: e.Op, Error: msg}, true
	case engine.Notice:
		return wireEvent{Type: "notice", Text: e.Text}, true
	case engine.SettingsChanged:
		return wireEvent{Type: "settings", Settings: toWireSettings(e.Settings)}, true
	case engine.Checkpoints:
		return wireEvent{Type: "checkpoints", Op: e.Op, Name: e.Name, List: toWireList(e.List)}, true
	case engine.Cleared:
		return wireEvent{Type: "cleared", Messages: toWireMessages(e.Messages), ContextUsed: e.ContextUsed, Settings: toWireSettings(e.Settings),
			Window: e.Window}, true
	case engine.Branched:
		return wireEvent{Type: "branched", Op: e.Op, Messages: toWireMessages(e.Messages), ContextUsed: e.ContextUsed, Window: e.Window}, true
	case engine.ToolsChanged:
		return wireEvent{Type: "tools", ToolCount: e.Count, ToolTokens: e.Tokens}, true
	case engine.History:
		w := wireEvent{Type: "history", Op: e.Op, ID: e.ID, Title: e.Title, Query: e.Query}
		if e.Op == engine.OpList {
			w.History = toWireHistory(e.List)
		}
		return w, true
	case engine.Compacting:
		return wireEvent{Type: "compacting", Phase: e.Phase, Done: e.Done, Total: e.Total}, true
	case engine.Compacted:
		return wireEvent{Type: "compacted", Compacted: &e, Window: e.Window, ContextUsed: e.ContextUsed}, true
	case engine.ContextReport:
		return wireEvent{Type: "context", Op: e.Op, Context: &e.View}, true
	}
	return wireEvent{}, false
}

// fromWire converts a stream event back; ok is false for the types the
// chat screen has no event for (state, request).
func fromWire(w wireEvent) (engine.Event, bool) {
	switch w.Type {
	case "started":
		return engine.Started{Turn: w.Turn, PromptTokens: w.PromptTokens, ReusedTokens: w.ReusedTokens, Attachments: w.Attachments, Versions: w.Versions,
			Window: w.Window}, true
	case "prefill":
		return engine.PrefillProgress{Done: w.Done, Total: w.Total}, true
	case "delta":
		return &engine.Delta{Text: w.Text, Tokens: w.Tokens, FromDraft: w.FromDraft, Live: w.Live.live()}, true
	case "finished", "cancelled":
		var reply string
		if w.Reply != nil {
			reply = *w.Reply
		}
		var m engine.TurnMetrics
		if w.Metrics != nil {
			m = *w.Metrics
		}
		msgs := fromWireMessages(w.Messages)
		if w.Type == "finished" {
			var asked engine.Message
			_ = asked.SetToolsJSON(w.Calls, nil) // the server wrote them; garbled, the reply asks for none
			return engine.Finished{Reply: reply, Metrics: m, Messages: msgs, Window: w.Window, Calls: asked.Calls}, true
		}
		return engine.Cancelled{Partial: reply, Metrics: m, Unstarted: w.Unstarted, Messages: msgs, Window: w.Window}, true
	case "failed":
		return engine.Failed{Op: w.Op, Err: errors.New(w.Error), Messages: fromWireMessages(w.Messages), Window: w.Window}, true
	case "notice":
		return engine.Notice{Text: w.Text}, true
	case "tools":
		return engine.ToolsChanged{Count: w.ToolCount, Tokens: w.ToolTokens}, true
	case "settings":
		if w.Settings == nil {
			return nil, false
		}
		return engine.SettingsChanged{Settings: w.Settings.settings()}, true
	case "checkpoints":
		return engine.Checkpoints{Op: w.Op, Name: w.Name, List: fromWireList(w.List)}, true
	case "branched":
		return engine.Branched{Op: w.Op, Messages: fromWireMessages(w.Messages), ContextUsed: w.ContextUsed, Window: w.Window}, true
	case "history":
		return engine.History{Op: w.Op, ID: w.ID, Title: w.Title, Query: w.Query, List: fromWireHistory(w.History)}, true
	case "cleared":
		c := engine.Cleared{Messages: fromWireMessages(w.Messages), ContextUsed: w.ContextUsed, Window: w.Window}
		if w.Settings != nil {
			c.Settings = w.Settings.settings()
		}
		return c, true
	case "compacting":
		return engine.Compacting{Phase: w.Phase, Done: w.Done, Total: w.Total}, true
	case "compacted":
		if w.Compacted == nil {
			return nil, false
		}
		return *w.Compacted, true
	case "context":
		if w.Context == nil {
			return nil, false
		}
		return engine.ContextReport{Op: w.Op, View: *w.Context}, true
	}
	return nil, false
}

// mergeWireDelta merges consecutive stream deltas of the same source.
func mergeWireDelta(last *wireEvent, next wireEvent) bool {
	if next.Type != "delta" || last.Type != "delta" || last.Request != next.Request {
		return false
	}
	last.Text += next.Text
	last.Tokens = append(last.Tokens[:len(last.Tokens):len(last.Tokens)], next.Tokens...)
	last.FromDraft = append(last.FromDraft[:len(last.FromDraft):len(last.FromDraft)], next.FromDraft...)
	last.Live = next.Live
	return true
}
