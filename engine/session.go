package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/memledger"
	"github.com/orchard-llm/orchard/tokenizer"
	"github.com/orchard-llm/orchard/tools"
)

// Session owns one chain, the tokenizer and the conversation, and runs
// turns: it renders the template, reuses the longest prefix the cache
// holds, prefills the difference and decodes — with lossless prompt-lookup
// speculation where the bundle can verify — until a stop token, the token
// cap or the end of the context. Its methods run on one goroutine (the
// Engine's); only Cancel may be called from another.
type Session struct {
	b     *bundle.Bundle
	chain chain.Chain
	tok   *tokenizer.Tokenizer
	tmpl  *tokenizer.Template
	stops []int
	set   Settings
	caps  chain.Capabilities
	// decls are the running request's tool declarations (toolcalls.go).
	decls tools.Text
	// chatTools are the chat's own tools, chatDecls their rendering
	// (chattools.go).
	chatTools ChatTools
	chatDecls tools.Text

	// msgs is the whole conversation, the record: no context policy ever
	// takes a message out of it. The model sees msgs[window:] — the
	// context policy moves window on when the turns before it no longer
	// fit — and the cache holds what that renders.
	msgs []Message
	liveTail

	// base is what the last turn's prompt continued, for a Regenerate or
	// Edit of that turn; baseAt is the index of its user message.
	base   *tailState
	baseAt int
	// versions are the other versions of messages (see branch.go), by
	// the index of the message in msgs.
	versions map[int]*versionSet
	// historyID names the conversation in the history; "" until kept.
	historyID string
	// gen counts changes to the conversation, so the history keeps it
	// only when it changed.
	gen uint64

	speculation
	turn int

	sampler     *sampler
	samplerTurn int

	// Memory samples the ledgers; nil disables them.
	Memory func() (memledger.Memory, error)
	peak   Memory
	// Metrics receives one record per turn (metrics.jsonl); nil disables it.
	Metrics func(TurnMetrics) error
	mediaState

	cancel atomic.Bool
	// closing is set when the engine closes: a reply it cuts short is
	// interrupted, not stopped by the user.
	closing atomic.Bool
	// cancelHook, when set (by the Engine, per turn), also stops the turn:
	// it reads the engine's cancel counter, so a cancel issued as the turn
	// starts is never lost to the flag's reset.
	cancelHook func() bool
	now        func() time.Time
}

// liveTail is the state the next turn continues from, as the session
// holds it while it runs: tailState is the same captured (Session.tail)
// for a version, a turn's base or a checkpoint, and applyTail makes one
// live again. Every field here is in tailState, in another shape (IDs =
// committed then unfed, Fed = len(committed)) — but lastPrompt, which
// only the next turn's prompt lookup reads.
type liveTail struct {
	window int // the first message the model sees
	// cstate is what the model sees besides msgs[window:]: the summary,
	// pinned messages, elided attachments (compact.go).
	cstate    *contextState
	committed []int // tokens the cache holds (== chain.Position())
	pending   int   // first token not fed to the chain, −1 when none
	// Continuation: after a clean turn the cache holds the prompt plus the
	// reply's ids; the next prompt is those ids plus the rendering after the
	// reply, as long as the conversation still renders with prevPrompt first.
	contOK     bool
	prevPrompt string
	unfed      []int // reply tokens emitted but not fed (the last one at a cap)
	lastPrompt []int // the ids of the last turn's prompt, as fed
	// streamPending are the last reply's tokens whose text is incomplete
	// (a character's first bytes), kept for a continuation.
	streamPending []int
	// spans are the media spans of the session's tokens (committed, then
	// unfed), by position, as the turns that laid them out placed them.
	// The rows of those below len(committed) are in the cache.
	spans []spanRef
}

// speculation is the session's drafting: the drafter, the break-even
// policy over it, and the figures it keeps.
type speculation struct {
	// Drafter proposes tokens; PromptLookup by default. Tests swap it.
	Drafter Drafter
	policy  adaptive
	total   SpecStats // the whole session's speculation figures
	emitted int       // tokens generated in the session (paces the policy)
}

// mediaState is what the session keeps of attached files.
type mediaState struct {
	// Media encodes attached images and clips; nil when the bundle or the
	// front end takes none.
	Media *Encoders
	// encoded holds every attached file's soft rows (by sha256), for as
	// long as the conversation may need to prefill them again (the spans
	// of liveTail say where they stand).
	encoded map[string][][]uint16
}

// ErrCancelled is returned when a turn was stopped by Cancel.
var ErrCancelled = errors.New("cancelled")

// NewSession prepares a session over an open chain.
func NewSession(b *bundle.Bundle, ch chain.Chain, tok *tokenizer.Tokenizer, set Settings) (*Session, error) {
	tmpl, err := templateFor(b, tok)
	if err != nil {
		return nil, err
	}
	s := &Session{b: b, chain: ch, tok: tok, tmpl: tmpl, caps: ch.Capabilities(), liveTail: liveTail{pending: -1},
		Memory: memledger.Read, now: time.Now, set: DefaultSettings()}
	s.stops = stopSet(b, tmpl)
	if err := s.SetSettings(set); err != nil {
		return nil, err
	}
	s.Drafter = PromptLookup{MinN: s.set.NGramMin, MaxN: s.set.NGramMax}
	return s, nil
}

// templateFor is the bundle's manifest template, else Gemma 4's.
func templateFor(b *bundle.Bundle, tok *tokenizer.Tokenizer) (*tokenizer.Template, error) {
	var p tokenizer.ManifestPrompt
	str := func(x *string) string {
		if x == nil {
			return ""
		}
		return *x
	}
	p.PromptPrefix, p.PromptSuffix = str(b.Template.PromptPrefix), str(b.Template.PromptSuffix)
	p.AssistantSuffix, p.PromptSuffixThinking = str(b.Template.AssistantSuffix), str(b.Template.PromptSuffixThinking)
	return tokenizer.NewManifestTemplate(tok, p)
}

// stopSet is config EOS ∪ manifest EOS ∪ the tokenizer's turn enders.
func stopSet(b *bundle.Bundle, tmpl *tokenizer.Template) []int {
	ids := slices.Clone(b.EOS)
	for _, id := range tmpl.StopIDs() {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Settings returns the settings in force.
func (s *Session) Settings() Settings { return s.set }

// SetSettings validates and applies settings (see CheckSettings): a
// setting the bundle cannot honour is refused with the reason, never
// silently ignored, and the settings in force stay as they were.
func (s *Session) SetSettings(n Settings) error {
	n, err := CheckSettings(s.info(), s.set, n)
	if err != nil {
		return err
	}
	if n.System != s.set.System || n.Thinking != s.set.Thinking {
		if err := s.checkSystemFits(n); err != nil {
			return err
		}
	}
	if s.Drafter != nil {
		if _, ok := s.Drafter.(PromptLookup); ok {
			s.Drafter = PromptLookup{MinN: n.NGramMin, MaxN: n.NGramMax}
		}
	}
	s.set = n
	return nil
}

// checkSystemFits refuses a system prompt that leaves no room in the
// context: with an empty message it would already fill it, so every turn
// would fail.
func (s *Session) checkSystemFits(n Settings) error {
	if n.System == "" {
		return nil
	}
	c := tokenizer.Conversation{System: n.System, Thinking: n.Thinking, Messages: []tokenizer.Message{{Role: tokenizer.RoleUser}}}
	ids, err := s.tmpl.Encode(c)
	if err != nil {
		return &SettingError{Setting: "system prompt", Value: fmt.Sprintf("of %s bytes", thousands(len(n.System))), Reason: err.Error()}
	}
	if ctx := s.caps.Context; ctx > 0 && len(ids) >= ctx {
		return &SettingError{Setting: "system prompt", Value: fmt.Sprintf("of %s tokens", thousands(len(ids))),
			Reason: fmt.Sprintf("the context holds %s, so no message would fit after it; shorten it", thousands(ctx))}
	}
	return nil
}

// info describes the bundle's capabilities for CheckSettings.
func (s *Session) info() ModelInfo {
	return ModelInfo{Name: s.b.Name(), Family: string(s.b.Family), Context: s.caps.Context,
		VerifyWidths: s.caps.VerifyWidths, Logits: s.caps.Logits}
}

// Messages returns a copy of the conversation, each message with its
// version counts.
func (s *Session) Messages() []Message { return withVersions(s.msgs, s.versions) }

// Window is the index in Messages of the first message the model sees:
// the context policy (drop-oldest) moves it on when the turns before it
// no longer fit; they stay in the conversation.
func (s *Session) Window() int { return s.window }

// withVersions is a copy of msgs with their version counts.
func withVersions(msgs []Message, versions map[int]*versionSet) []Message {
	out := slices.Clone(msgs)
	for i, set := range versions {
		if i < len(out) && len(set.branches) > 1 {
			out[i].Version, out[i].Versions = set.cur, len(set.branches)
		}
	}
	return out
}

// Committed returns a copy of the tokens the cache holds.
func (s *Session) Committed() []int { return slices.Clone(s.committed) }

// Capabilities of the chain.
func (s *Session) Capabilities() chain.Capabilities { return s.chain.Capabilities() }

// Cancel stops the running turn after the chain call in flight.
func (s *Session) Cancel() { s.cancel.Store(true) }

// stopRequested reports whether the running turn should stop.
func (s *Session) stopRequested() bool {
	return s.cancel.Load() || s.cancelHook != nil && s.cancelHook()
}

// Clear forgets the conversation and the cache.
func (s *Session) Clear() error {
	s.msgs, s.window, s.committed, s.pending, s.contOK, s.unfed, s.streamPending = nil, 0, nil, -1, false, nil, nil
	s.cstate = nil
	s.base, s.versions, s.historyID = nil, nil, ""
	s.gen++
	s.spans, s.encoded = nil, nil
	s.chain.SetSoft(nil)
	s.policy = adaptive{}
	return s.chain.Reset()
}

// conversation renders msgs with the session's system prompt.
func (s *Session) conversation(msgs []Message) tokenizer.Conversation {
	return tokenizer.Conversation{System: s.set.System, Thinking: s.set.Thinking, Tools: s.decls, Messages: templateMessages(msgs)}
}

// LastPrompt returns the ids of the last turn's prompt as fed to the chain.
func (s *Session) LastPrompt() []int { return slices.Clone(s.lastPrompt) }

// Close releases the chain and the encoders.
func (s *Session) Close() error {
	s.Media.Close()
	return s.chain.Close()
}

// CanThink reports whether the template can ask for the model's thinking
// (Settings.Thinking): Gemma 4's think token, or a manifest's thinking
// suffix.
func (s *Session) CanThink() bool {
	_, err := s.tmpl.Encode(tokenizer.Conversation{Thinking: true, Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "?"}}})
	return err == nil
}

// PromptIDs renders a one-message conversation with the session's system
// prompt, as a first turn would feed it.
func (s *Session) PromptIDs(text string) ([]int, error) {
	return s.tmpl.Encode(s.conversation([]Message{{Role: "user", Content: text}}))
}
