package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
)

// sessionState is what a checkpoint keeps of the session beyond the
// conversation: the settings, and what lets the next turn continue from the
// cached reply exactly as an uninterrupted session would.
type sessionState struct {
	Settings   Settings `json:"settings"`
	ContOK     bool     `json:"continuation,omitempty"`
	PrevPrompt string   `json:"prevPrompt,omitempty"`
	Unfed      []int    `json:"unfed,omitempty"`
	// Interrupted lists the messages (by index) whose reply was cut short.
	Interrupted []int `json:"interrupted,omitempty"`
	// StreamPending are reply tokens whose text is not complete yet (the
	// first bytes of a character): a continuation decodes them with what
	// follows, so a character is never broken across a turn boundary.
	StreamPending []int `json:"streamPending,omitempty"`
	// Base is what the last turn's prompt continued (its user message at
	// BaseAt): a Regenerate or Edit after a restore is the same as before.
	Base   *tailState `json:"base,omitempty"`
	BaseAt int        `json:"baseAt,omitempty"`
	// Versions are the other versions of messages (branch.go).
	Versions []versionJSON `json:"versions,omitempty"`
	// HistoryID names the conversation in the history.
	HistoryID string `json:"historyID,omitempty"`
	// Title is the history entry's own title (historytitle.go).
	Title string `json:"title,omitempty"`
	// Spans are the media spans of the tokens (Tokens, then Unfed) by
	// position (the attachments travel with their messages): a loaded
	// conversation continues from the cached rows, and only a rebuild of
	// the cache encodes the files again. Older checkpoints list only the
	// spans the cache held; a turn then encodes its prompt afresh.
	Spans []spanRef `json:"spans,omitempty"`
	// Window is the first message the model sees; those before it are in
	// the conversation but out of the context (the drop-oldest policy).
	Window int `json:"window,omitempty"`
	// Context is what the model sees besides the messages from Window
	// (compact.go): the summary and the earlier ones, pins, elisions.
	Context *contextState `json:"context,omitempty"`
}

// Checkpoint captures the conversation, the committed tokens, the pending
// token and the chain's cache under a name.
func (s *Session) Checkpoint(name string, units coreml.ComputeUnits) (*checkpoints.Checkpoint, error) {
	cache, err := s.chain.Snapshot()
	if err != nil {
		return nil, err
	}
	if cache.Position != len(s.committed) {
		return nil, fmt.Errorf("checkpoint: the cache holds %d positions, the session %d tokens", cache.Position, len(s.committed))
	}
	state := sessionState{Settings: s.set, ContOK: s.contOK, PrevPrompt: s.prevPrompt, Unfed: s.unfed,
		StreamPending: s.streamPending, Base: s.base, BaseAt: s.baseAt, Versions: versionsToJSON(s.versions),
		HistoryID: s.historyID, Window: s.window, Context: s.cstate}
	for i, m := range s.msgs {
		if m.Interrupted {
			state.Interrupted = append(state.Interrupted, i)
		}
	}
	state.Spans = spansIn(s.spans, len(s.committed)+len(s.unfed))
	st, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	cp := &checkpoints.Checkpoint{
		Meta:         checkpoints.Meta{Name: name, ComputeUnits: units.String(), BundleName: s.b.Name(), Identity: s.b.Identity},
		Conversation: checkpoints.Conversation{System: s.set.System, Thinking: s.set.Thinking, Settings: st},
		Tokens:       slices.Clone(s.committed),
		Cache:        checkpoints.Cache{Family: cache.Family, Position: cache.Position},
	}
	for _, m := range s.msgs {
		cm := checkpoints.Message{Role: m.Role, Content: m.Content, Stopped: m.Stopped, Figures: toFigures(m.Metrics)}
		cm.Calls, cm.Responses = m.ToolsJSON()
		for _, a := range m.Attachments {
			cm.Media = append(cm.Media, checkpoints.Media(a))
		}
		cp.Conversation.Messages = append(cp.Conversation.Messages, cm)
	}
	for _, b := range cache.Buffers {
		cp.Cache.Buffers = append(cp.Cache.Buffers, checkpoints.Buffer(b))
	}
	if s.pending >= 0 {
		p := s.pending
		cp.Pending = &p
	}
	if s.b.R1 != nil {
		id, err := checkpoints.CoreLLMIdentityOf(s.b)
		if err != nil {
			return nil, err
		}
		cp.Meta.CoreLLM = &id
	}
	return cp, nil
}

// Restore replaces the conversation and cache with a checkpoint's. The
// store has verified checksums and identity; the chain validates every
// buffer before touching anything, so a refused restore changes nothing.
func (s *Session) Restore(cp *checkpoints.Checkpoint) error {
	var st sessionState
	if len(cp.Conversation.Settings) > 0 {
		if err := json.Unmarshal(cp.Conversation.Settings, &st); err != nil {
			return fmt.Errorf("checkpoint %q: settings: %w", cp.Meta.Name, err)
		}
	} else {
		st.Settings = s.set
	}
	st.Settings.System, st.Settings.Thinking = cp.Conversation.System, cp.Conversation.Thinking
	if cp.Cache.Position != len(cp.Tokens) {
		return fmt.Errorf("checkpoint %q: %d tokens for a cache of %d positions", cp.Meta.Name, len(cp.Tokens), cp.Cache.Position)
	}
	cache := &chain.CacheState{Family: cp.Cache.Family, Position: cp.Cache.Position}
	for _, b := range cp.Cache.Buffers {
		cache.Buffers = append(cache.Buffers, chain.Buffer(b))
	}
	old := s.set
	if err := s.SetSettings(st.Settings); err != nil {
		// Settings the bundle refuses (say, sampling saved elsewhere) do
		// not block the conversation: keep the current ones.
		if err := s.SetSettings(old); err != nil {
			return err
		}
	}
	restore := func() error { return s.chain.Restore(cache) }
	if cache.Position == 0 {
		// Nothing cached (a history entry kept as text): its tokens, if
		// any, wait in Unfed and the next turn feeds them.
		restore = s.chain.Reset
	}
	if err := restore(); err != nil {
		s.SetSettings(old)
		return fmt.Errorf("checkpoint %q: %w", cp.Meta.Name, err)
	}
	s.msgs = s.msgs[:0]
	for _, m := range cp.Conversation.Messages {
		msg := Message{Role: m.Role, Content: m.Content, Interrupted: m.Stopped, Stopped: m.Stopped, Metrics: fromFigures(m.Figures)}
		if err := msg.SetToolsJSON(m.Calls, m.Responses); err != nil {
			return fmt.Errorf("checkpoint %q: %w", cp.Meta.Name, err)
		}
		for _, a := range m.Media {
			msg.Attachments = append(msg.Attachments, Attachment(a))
		}
		s.msgs = append(s.msgs, msg)
	}
	for _, i := range st.Interrupted {
		if i >= 0 && i < len(s.msgs) {
			s.msgs[i].Interrupted = true
		}
	}
	s.spans, s.encoded = st.Spans, nil
	s.chain.SetSoft(nil)
	s.committed = slices.Clone(cp.Tokens)
	s.pending = -1
	if cp.Pending != nil {
		s.pending = *cp.Pending
	}
	s.contOK, s.prevPrompt, s.unfed, s.streamPending = st.ContOK, st.PrevPrompt, st.Unfed, st.StreamPending
	s.base, s.baseAt = nil, 0
	if st.Base != nil && validTail(*st.Base) && st.BaseAt >= 0 && st.BaseAt < len(s.msgs) {
		s.base, s.baseAt = st.Base, st.BaseAt
	}
	s.window = min(max(st.Window, 0), len(s.msgs))
	s.cstate = st.Context.valid(len(s.msgs))
	s.versions = versionsFromJSON(st.Versions, len(s.msgs))
	s.historyID = st.HistoryID
	s.gen++
	s.policy = adaptive{}
	return nil
}

// toFigures is the checkpoint form of a reply's figures (TurnMetrics.Kept).
func toFigures(m *TurnMetrics) *checkpoints.Figures {
	if m == nil {
		return nil
	}
	sp := m.Spec
	return &checkpoints.Figures{PromptTokens: m.PromptTokens, ReusedTokens: m.ReusedTokens, GeneratedTokens: m.GeneratedTokens,
		FinishReason: m.FinishReason, TTFTSeconds: m.TTFTSeconds, PrefillSeconds: m.PrefillSeconds,
		PrefillTokPerSec: m.PrefillTokPerSec, DecodeTokPerSec: m.DecodeTokPerSec, PerTokenMinMs: m.PerTokenMinMs,
		PerTokenMedianMs: m.PerTokenMedianMs, PerTokenMaxMs: m.PerTokenMaxMs, PerTokenMeanMs: m.PerTokenMeanMs,
		ContextUsed: m.ContextUsed, ContextLimit: m.ContextLimit, DroppedTurns: m.DroppedTurns,
		SeamCopiedBytesPerToken: m.SeamCopiedBytesPerToken, SeamMetered: m.SeamMetered,
		Spec: checkpoints.SpecFigures{Enabled: sp.Enabled, State: string(sp.State), Rounds: sp.Rounds, Drafted: sp.Drafted,
			Accepted: sp.Accepted, FallbackRounds: sp.FallbackRounds, AcceptanceRate: sp.AcceptanceRate, PLDRate: sp.PLDRate,
			MeanAccepted: sp.MeanAccepted}}
}

// fromFigures is toFigures undone.
func fromFigures(f *checkpoints.Figures) *TurnMetrics {
	if f == nil {
		return nil
	}
	sp := f.Spec
	return &TurnMetrics{PromptTokens: f.PromptTokens, ReusedTokens: f.ReusedTokens, GeneratedTokens: f.GeneratedTokens,
		FinishReason: f.FinishReason, TTFTSeconds: f.TTFTSeconds, PrefillSeconds: f.PrefillSeconds,
		PrefillTokPerSec: f.PrefillTokPerSec, DecodeTokPerSec: f.DecodeTokPerSec, PerTokenMinMs: f.PerTokenMinMs,
		PerTokenMedianMs: f.PerTokenMedianMs, PerTokenMaxMs: f.PerTokenMaxMs, PerTokenMeanMs: f.PerTokenMeanMs,
		ContextUsed: f.ContextUsed, ContextLimit: f.ContextLimit, DroppedTurns: f.DroppedTurns,
		SeamCopiedBytesPerToken: f.SeamCopiedBytesPerToken, SeamMetered: f.SeamMetered,
		Spec: SpecStats{Enabled: sp.Enabled, State: SpecState(sp.State), Rounds: sp.Rounds, Drafted: sp.Drafted,
			Accepted: sp.Accepted, FallbackRounds: sp.FallbackRounds, AcceptanceRate: sp.AcceptanceRate, PLDRate: sp.PLDRate,
			MeanAccepted: sp.MeanAccepted}}
}

// CheckpointStore is what the engine needs of the checkpoint store.
type CheckpointStore interface {
	Save(cp *checkpoints.Checkpoint) error
	SaveAutosave(cp *checkpoints.Checkpoint) error
	Load(name string, want bundle.Identity) (*checkpoints.Checkpoint, error)
	List() ([]checkpoints.Info, error)
	Delete(name string) error
	Rename(oldName, newName string) error
}

// UseStore connects a checkpoint store; units are recorded in checkpoints.
func (e *Engine) UseStore(st CheckpointStore, units coreml.ComputeUnits) error {
	return e.do(OpStore, func() { e.store, e.units = st, units })
}

func (e *Engine) withStore(op Op, name string, fn func(CheckpointStore) error) error {
	return e.do(op, func() {
		if e.store == nil {
			e.emit(Failed{Op: op, Err: errors.New("checkpoints are not available (no data folder)")})
			return
		}
		if err := fn(e.store); err != nil {
			e.emit(Failed{Op: op, Err: err})
			return
		}
		e.emitList(op, name)
	})
}

// emitList reports an operation's success with the store's list.
func (e *Engine) emitList(op Op, name string) {
	infos, err := e.store.List()
	if err != nil {
		e.emit(Failed{Op: OpList, Err: err})
		return
	}
	ev := Checkpoints{Op: op, Name: name}
	for _, in := range infos {
		ev.List = append(ev.List, CheckpointInfo{Name: in.Name, Created: in.Created, Turns: in.Turns, Tokens: in.Tokens,
			Bytes: in.Bytes, Bundle: in.Bundle, BundleID: in.BundleID, Compatible: in.BundleID == e.sess.b.Identity.ID,
			Media: in.Media, Thumbnail: in.Thumbnail})
	}
	e.emit(ev)
}

// SaveCheckpoint saves the conversation under name.
func (e *Engine) SaveCheckpoint(name string) error {
	return e.withStore(OpSave, name, func(st CheckpointStore) error {
		cp, err := e.sess.Checkpoint(name, e.units)
		if err != nil {
			return err
		}
		return st.Save(cp)
	})
}

// Autosave saves the conversation under the reserved autosave name; an
// empty conversation is not saved.
func (e *Engine) Autosave() error {
	return e.do(OpAutosave, func() {
		if _, err := e.keep(); err != nil {
			e.emit(Failed{Op: OpHistory, Err: err})
		}
		if e.store == nil || len(e.sess.msgs) == 0 {
			return
		}
		cp, err := e.sess.Checkpoint(checkpoints.Autosave, e.units)
		if err == nil {
			err = e.store.SaveAutosave(cp)
		}
		if err != nil {
			e.emit(Failed{Op: OpAutosave, Err: err})
			return
		}
		e.emitList(OpAutosave, checkpoints.Autosave)
	})
}

// LoadCheckpoint replaces the conversation with a saved one. A checkpoint
// of another bundle, a corrupt or a newer one is refused and nothing changes.
func (e *Engine) LoadCheckpoint(name string) error { return e.load(OpLoad, name) }

// ForkCheckpoint starts a new conversation from a saved one (the saved
// checkpoint stays as it is; save the fork under a new name).
func (e *Engine) ForkCheckpoint(name string) error { return e.load(OpFork, name) }

func (e *Engine) load(op Op, name string) error {
	return e.withStore(op, name, func(st CheckpointStore) error {
		cp, err := st.Load(name, e.sess.b.Identity)
		if err != nil {
			var ie *checkpoints.IdentityError
			if errors.As(err, &ie) {
				ie.Loaded = checkpoints.DescribeBundle(e.sess.b.Name(), e.sess.b.Identity)
			}
			return err
		}
		if err := e.keepReplaced(); err != nil {
			return err
		}
		if err := e.sess.Restore(cp); err != nil {
			return err
		}
		if name != checkpoints.Autosave || op == OpFork {
			// A named checkpoint or a fork goes on as a new conversation
			// of the history; the autosave (--continue) as the one it was.
			e.sess.historyID = ""
		}
		e.archivedGen = e.sess.gen
		e.refresh()
		e.emit(Cleared{Messages: e.sess.Messages(), ContextUsed: e.sess.contextUsed(), Settings: e.sess.Settings(), Window: e.sess.Window()})
		e.refreshHistory()
		return nil
	})
}

// DeleteCheckpoint removes a saved checkpoint.
func (e *Engine) DeleteCheckpoint(name string) error {
	return e.withStore(OpDelete, name, func(st CheckpointStore) error { return st.Delete(name) })
}

// RenameCheckpoint renames a saved checkpoint; it never overwrites.
func (e *Engine) RenameCheckpoint(oldName, newName string) error {
	return e.withStore(OpRename, newName, func(st CheckpointStore) error { return st.Rename(oldName, newName) })
}

// ListCheckpoints reports the store's checkpoints.
func (e *Engine) ListCheckpoints() error {
	return e.withStore(OpList, "", func(CheckpointStore) error { return nil })
}
