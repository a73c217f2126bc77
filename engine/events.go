package engine

import (
	"time"

	"github.com/orchard-llm/orchard/tools"
)

// Event is what the engine goroutine reports. Deltas may be coalesced when
// the consumer is slow; every other event is always delivered, in order.
type Event interface{ event() }

// Started: a turn began (the user message is in the conversation).
type Started struct {
	Turn         int // index of the user message in the conversation
	PromptTokens int // whole rendered conversation, reused tokens included
	ReusedTokens int // longest common prefix kept from the cache
	// Versions is how many versions the reply being started has, itself
	// the last of them (after Regenerate); 0 when it is the only one.
	Versions int
	// Attachments are the user message's files as encoded (chips).
	Attachments []Attachment
	// Window is the index of the first message the model sees in this
	// turn (Session.Window): the context policy may have moved it on.
	Window int
}

// PrefillProgress reports prompt tokens fed so far.
type PrefillProgress struct{ Done, Total int }

// Delta is newly generated text, sent as a *Delta: the engine hands out a
// token's event without allocating it (deltas come from a slab per 64
// tokens), and never changes one after sending it, so a consumer may keep
// it. Tokens and FromDraft are parallel: FromDraft[i] says whether token i
// was accepted from a speculative draft (the TUI can highlight them).
// Coalesced deltas concatenate into a new Delta. The slices are read-only
// views of the turn's record.
type Delta struct {
	Text      string
	Tokens    []int
	FromDraft []bool
	Live      Live // running figures after this delta
}

// After is prev followed by d, as a new Delta: neither is changed, since
// a Delta that was sent may be kept (or seen by several consumers).
func (d *Delta) After(prev *Delta) *Delta {
	return &Delta{
		Text:      prev.Text + d.Text,
		Tokens:    append(prev.Tokens[:len(prev.Tokens):len(prev.Tokens)], d.Tokens...),
		FromDraft: append(prev.FromDraft[:len(prev.FromDraft):len(prev.FromDraft)], d.FromDraft...),
		Live:      d.Live,
	}
}

// Live are the figures a status bar shows while a turn streams.
type Live struct {
	Generated      int
	DecodeTokPerS  float64 // over the decode phase so far
	LastTokenMs    float64
	ContextUsed    int
	ContextLimit   int
	SpecState      SpecState
	AcceptanceRate float64 // this turn, incl. the prediction token
}

// Finished: the turn ended normally (EOS, token cap, context full).
type Finished struct {
	Reply   string
	Metrics TurnMetrics
	// Stop is the stop string (Request.Stop) that ended the reply, if
	// one did (FinishReason "stop").
	Stop string
	// Messages is the conversation with the reply, Window its first
	// message the model sees: on Events, the chat's (an API request's
	// sink gets neither).
	Messages []Message
	Window   int
	// Calls are the well-formed tool calls in Reply, in order (a request's
	// reply; FinishReason "tool_calls" when the model stopped to wait for
	// their results). Reply holds them as the model wrote them.
	Calls []tools.Call
}

// Cancelled: the turn was stopped; the partial reply is kept in the
// conversation and the cache matches the committed tokens. Unstarted: it
// was cancelled while it waited its turn, before Started — nothing of it
// is in the conversation (a front end gives the message back, as after
// a refused send).
type Cancelled struct {
	Partial   string
	Metrics   TurnMetrics
	Unstarted bool
	// Messages and Window: the chat's conversation now (the partial reply
	// in it), as on Finished.
	Messages []Message
	Window   int
}

// Failed: the turn or command could not run; the conversation is as it
// was before it (a message, never a panic).
type Failed struct {
	Op  Op // the command that failed
	Err error
	// Messages and Window: for a turn (Op.Turn) on Events, the chat's
	// conversation as it is again; nil for other commands, which change
	// nothing.
	Messages []Message
	Window   int
}

// Notice is information for the user: context trimmed, speculation
// paused, a capability missing, a setting refused.
type Notice struct {
	Text string
}

// SettingsChanged reports the settings in force after a change.
type SettingsChanged struct{ Settings Settings }

// Checkpoints reports the result of a checkpoint operation and the list
// after it (every operation's, the autosave's too: a panel takes the list
// as it comes).
type Checkpoints struct {
	Op   Op // OpSave, OpLoad, OpDelete, OpRename, OpFork, OpList, OpAutosave
	Name string
	List []CheckpointInfo
}

// Cleared: the conversation was reset (/clear, a loaded checkpoint, a fork).
// It carries the settings in force after it: a checkpoint restores its own
// speculation, draft length, thinking and system prompt, and a front end
// shows these, not the ones it had.
type Cleared struct {
	Messages    []Message // the conversation now shown (empty after /clear)
	ContextUsed int       // positions the cache now holds (a loaded conversation's)
	Settings    Settings  // the settings in force now
	Window      int       // the first message of Messages the model sees (Session.Window)
}

// Branched: the conversation took another path without a turn of its
// own — a reply taken back for Regenerate, a message for Edit, another
// version selected (SelectVersion) or put back after a failed turn. Messages
// is the conversation now (with its version counts); a regenerated or
// edited turn's events follow.
type Branched struct {
	Op          Op // OpRegenerate, OpEdit, OpVersion
	Messages    []Message
	ContextUsed int // tokens of the conversation in the cache (or waiting to be fed back)
	Window      int // the first message of Messages the model sees (Session.Window)
}

// History reports the conversation history. OpList carries the
// entries that match Query, newest first; OpKept says the conversation
// that was on screen went into the history (ID, Title) as another
// replaced it; OpResume, OpDelete and OpRename (Title the new one)
// report what happened to ID.
type History struct {
	Op    Op
	ID    string
	Title string
	Query string
	List  []HistoryInfo
}

// HistoryInfo is one conversation of the history.
type HistoryInfo struct {
	ID      string
	Title   string // its own (RenameHistory) or the first message, on one line; told apart from the others (DistinctTitles)
	Snippet string // with a query: the text around its first match
	Updated time.Time
	Turns   int
	Tokens  int   // tokens of its kept cache; 0 when only the text is kept
	Bytes   int64 // on disk
	// KV says its cache is kept: it resumes without a prefill.
	KV         bool
	Bundle     string
	Compatible bool // made with the bundle now loaded
	Current    bool // the conversation on screen
}

func (Started) event()         {}
func (PrefillProgress) event() {}
func (*Delta) event()          {}
func (Finished) event()        {}
func (Cancelled) event()       {}
func (Failed) event()          {}
func (Notice) event()          {}
func (SettingsChanged) event() {}
func (Checkpoints) event()     {}
func (Cleared) event()         {}
func (Branched) event()        {}
func (History) event()         {}

// Message is one turn of the conversation as the user sees it.
type Message struct {
	Role    string // "user" or "model"; "system" in an API request's conversation
	Content string
	// Interrupted marks a reply cut short before its end: stopped by the
	// user, or by the engine closing (a dropped connection) mid-reply.
	Interrupted bool
	// Stopped marks a reply the user stopped (Interrupted is set too).
	Stopped bool
	// Metrics are the figures of the turn that made a reply (without the
	// per-token list and the memory sample); they travel with it through
	// checkpoints, the history and versions. Nil for a user message, and
	// for a reply from a checkpoint written before orchard kept them.
	Metrics *TurnMetrics
	// Version is this message's place among Versions, the versions it
	// has (regenerated replies, edited messages, each with the turns that
	// followed it); Versions is 0 when it has no other.
	Version, Versions int
	// Attachments are the images and clips of a user message (media.go).
	Attachments []Attachment
	// Calls are the functions a model message calls, written after its
	// Content; Responses are a "tool" message's results for the calls
	// before it. Calls, results and the model's text after them make one
	// model turn (toolcalls.go).
	Calls     []tools.Call
	Responses []tools.Response
}

// CheckpointInfo is one saved conversation in the store.
type CheckpointInfo struct {
	Name       string
	Created    time.Time
	Turns      int
	Tokens     int
	Bytes      int64
	Bundle     string // bundle name it was made with
	BundleID   string
	Compatible bool   // made for the bundle now loaded
	Media      int    // images and clips in the conversation
	Thumbnail  []byte // the first image's (PNG)
}

// SpecState is the speculation state a user sees.
type SpecState string

const (
	SpecOff         SpecState = "off"         // disabled by the user or impossible for the bundle
	SpecOn          SpecState = "on"          // drafting every round it can
	SpecAdaptive    SpecState = "adaptive"    // on, watched by the break-even policy
	SpecPaused      SpecState = "paused"      // the adaptive policy stopped drafting; will probe again
	SpecUnsupported SpecState = "unsupported" // the bundle cannot verify
)

// TurnMetrics are the figures of one turn; JSON names follow the okayuji
// metrics.jsonl records so existing analysis scripts keep working.
type TurnMetrics struct {
	PromptTokens     int       `json:"promptTokens"`
	ReusedTokens     int       `json:"reusedTokens"`
	GeneratedTokens  int       `json:"generatedTokens"`
	FinishReason     string    `json:"finishReason"` // eos, cap, contextFull, cancelled, error
	TTFTSeconds      float64   `json:"ttftSeconds"`
	PrefillSeconds   float64   `json:"prefillSeconds"`
	PrefillTokPerSec float64   `json:"prefillTokPerSec"`
	DecodeTokPerSec  float64   `json:"decodeTokPerSec"`
	PerTokenMillis   []float64 `json:"perTokenMillis,omitempty"`
	PerTokenMinMs    float64   `json:"perTokenMinMs"`
	PerTokenMedianMs float64   `json:"perTokenMedianMs"`
	PerTokenMaxMs    float64   `json:"perTokenMaxMs"`
	PerTokenMeanMs   float64   `json:"perTokenMeanMs"`
	ContextUsed      int       `json:"contextUsed"`
	ContextLimit     int       `json:"contextLength"`
	DroppedTurns     int       `json:"droppedTurns,omitempty"` // messages the model stopped seeing this turn (drop-oldest)
	// SeamCopiedBytesPerToken is what the runtime really copied across the
	// seam while decoding, per generated token, from its own meter
	// (SeamMetered false: the runtime keeps none).
	SeamCopiedBytesPerToken float64   `json:"seamCopiedBytesPerToken"`
	SeamMetered             bool      `json:"seamMetered"`
	Spec                    SpecStats `json:"spec"`
	Memory                  Memory    `json:"memory"`
}

// Kept is what a reply keeps of its turn's metrics (Message.Metrics): all
// but the per-token list and the memory sample (what a checkpoint
// stores).
func (m TurnMetrics) Kept() *TurnMetrics {
	m.PerTokenMillis, m.Memory = nil, Memory{}
	sp := m.Spec
	m.Spec = SpecStats{Enabled: sp.Enabled, State: sp.State, Rounds: sp.Rounds, Drafted: sp.Drafted, Accepted: sp.Accepted,
		FallbackRounds: sp.FallbackRounds, AcceptanceRate: sp.AcceptanceRate, PLDRate: sp.PLDRate, MeanAccepted: sp.MeanAccepted}
	return &m
}

// SpecStats are the speculation figures under both published definitions.
type SpecStats struct {
	Enabled        bool      `json:"specEnabled"`
	State          SpecState `json:"specState"`
	Rounds         int       `json:"specRounds"`
	Drafted        int       `json:"specDrafted"`        // Σ drafted incl. the prediction token
	Accepted       int       `json:"specAccepted"`       // Σ accepted incl. the prediction token
	FallbackRounds int       `json:"specFallbackRounds"` // rounds with no draft (plain decode)
	// AcceptanceRate = Accepted/Drafted (corellm-chat's "draft acceptance").
	AcceptanceRate float64 `json:"specAcceptanceRate"`
	// PLDRate = Σ(accepted−1)/Σ copied, excluding the prediction token.
	PLDRate float64 `json:"pldAcceptRate"`
	// MeanAccepted is the mean number of tokens a verify round commits.
	MeanAccepted float64 `json:"meanAcceptedPerVerify"`

	pldCopied, pldAccepted int // Σ copied drafts and Σ(accepted−1), for PLDRate
}

// finish computes the rates from the counts.
func (s *SpecStats) finish() {
	s.AcceptanceRate, s.PLDRate, s.MeanAccepted = 0, 0, 0
	if s.Drafted > 0 {
		s.AcceptanceRate = float64(s.Accepted) / float64(s.Drafted)
	}
	if s.pldCopied > 0 {
		s.PLDRate = float64(s.pldAccepted) / float64(s.pldCopied)
	}
	if s.Rounds > 0 {
		s.MeanAccepted = float64(s.Accepted) / float64(s.Rounds)
	}
}

// add accumulates another turn's counts.
func (s *SpecStats) add(o SpecStats) {
	s.Enabled = s.Enabled || o.Enabled
	s.State = o.State
	s.Rounds += o.Rounds
	s.Drafted += o.Drafted
	s.Accepted += o.Accepted
	s.FallbackRounds += o.FallbackRounds
	s.pldCopied += o.pldCopied
	s.pldAccepted += o.pldAccepted
	s.finish()
}

// Memory is one sample of the three ledgers, each with its peak.
type Memory struct {
	FootprintBytes     uint64 `json:"footprintBytes"`     // the process (phys_footprint / RSS)
	FootprintPeakBytes uint64 `json:"peakFootprintBytes"` // peak of the above
	ModelBytes         uint64 `json:"modelBytes"`         // held outside it: mapped sidecars, wired Core ML weights
	ModelPeakBytes     uint64 `json:"peakModelBytes"`
	AvailableBytes     uint64 `json:"availableMemoryBytes"` // the machine's available memory
	AvailableLowBytes  uint64 `json:"lowestAvailableBytes"`
}

// ModelInfo is the static description the model header shows.
type ModelInfo struct {
	Name         string
	Family       string
	ComputeUnits string
	Context      int
	VerifyWidths []int // empty: the bundle cannot speculate
	Logits       bool  // sampling possible
	Runtime      string
	Notes        []string
	Media        []string // kinds of attachments the bundle takes: "image", "audio"
	Server       string   // the server's address when the chat runs over orchard serve (server.Client); "" in-process
	// Thinking: the bundle's template can ask for the model's thinking
	// (Start fills it in).
	Thinking bool
	// Tools: the bundle can call tools (Gemma 4's tool tokens and turns;
	// Start fills it in).
	Tools bool
}
