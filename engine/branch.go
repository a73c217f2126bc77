package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/orchard-llm/orchard/checkpoints"
)

// Regenerating a reply or editing a message does not throw the old one
// away: the conversation is a tree, as in the llama.cpp and open-webui
// chats. The session holds one path through it (msgs); every other
// version of a message is a branch — that version and the turns that
// followed it — stored at the message's index, with the state that lets
// the next turn continue it token for token as if it had never been left.
//
// Switching versions is lazy: the cache keeps the longest prefix the new
// path shares with it (rewound, never re-prefilled eagerly) and the
// tokens past it wait in unfed, fed back by the next turn's prefill.

// tailState is what a turn's prompt continues, and what the session holds
// after a turn: the tokens logically in the cache and how the next turn
// may continue from them.
type tailState struct {
	IDs           []int  `json:"ids,omitempty"` // fed tokens, then the ones not fed yet
	Fed           int    `json:"fed"`           // how many of IDs had been fed to the chain
	Pending       int    `json:"pending"`       // the next token predicted, −1 when none
	ContOK        bool   `json:"continuation,omitempty"`
	PrevPrompt    string `json:"prevPrompt,omitempty"`
	StreamPending []int  `json:"streamPending,omitempty"`
	// Spans are the media spans of IDs, by position, as the turns that
	// laid them out placed them; states kept before orchard recorded them
	// have none, and the next turn then encodes afresh.
	Spans []spanRef `json:"spans,omitempty"`
	// Window is the first message IDs render (the model sees): the context
	// policy moves it on, the conversation keeps every message.
	Window int `json:"window,omitempty"`
	// Context is what the model sees besides the messages from Window:
	// the summary, pinned messages, elided attachments (compact.go).
	Context *contextState `json:"context,omitempty"`
}

// noTail continues nothing: the next turn encodes the conversation afresh
// and reuses the longest prefix the cache holds.
var noTail = tailState{Pending: -1}

// tail captures the session's state as the next turn would continue it.
func (s *Session) tail() tailState {
	ids := append(slices.Clone(s.committed), s.unfed...)
	return tailState{IDs: ids, Fed: len(s.committed), Pending: s.pending,
		ContOK: s.contOK && len(s.committed) == s.chain.Position(), PrevPrompt: s.prevPrompt,
		StreamPending: slices.Clone(s.streamPending), Spans: spansIn(s.spans, len(ids)), Window: s.window, Context: s.cstate}
}

// applyTail makes st the session's state. The cache keeps the longest
// prefix of st's fed tokens it holds (rewound, not re-prefilled); the rest
// waits in unfed for the next turn. It reports false when the chain could
// not rewind that far (a wrapped sliding ring) and was reset instead.
func (s *Session) applyTail(st tailState) (bool, error) {
	keep := min(commonPrefix(st.IDs, s.committed), st.Fed)
	// Equal ids are not equal rows where media sit: the cache keeps a
	// span only if it holds the same file's rows.
	refs := spansIn(st.Spans, len(st.IDs))
	keep = mediaPrefix(keep, s.spans, refs)
	kept := true
	if keep < s.chain.Position() {
		if keep >= s.chain.Capabilities().MinRewind {
			if err := s.chain.Rewind(keep); err != nil {
				return false, err
			}
		} else {
			if err := s.chain.Reset(); err != nil {
				return false, err
			}
			keep, kept = 0, false
		}
	}
	s.committed, s.unfed = slices.Clone(st.IDs[:keep]), slices.Clone(st.IDs[keep:])
	s.spans = refs
	s.chain.SetSoft(nil)
	s.pending, s.contOK, s.prevPrompt = st.Pending, st.ContOK, st.PrevPrompt
	s.streamPending = slices.Clone(st.StreamPending)
	s.window = min(max(st.Window, 0), len(s.msgs))
	s.cstate = st.Context.valid(len(s.msgs))
	return kept, nil
}

// began records a turn that started: the state its prompt continued
// (for a later Regenerate or Edit of it) and a change for the history.
func (s *Session) began(from tailState, userAt int) {
	s.base, s.baseAt = &from, userAt
	s.gen++
}

// baseFor returns what the turn of the user message at index i continued;
// when that is not known (the turn was not the last, or came from an older
// checkpoint) the conversation is encoded afresh.
func (s *Session) baseFor(i int) tailState {
	if s.base != nil && s.baseAt == i {
		return *s.base
	}
	t := noTail
	t.Window = min(s.window, i) // the model saw no more than it sees now
	t.Context = s.cstate
	return t
}

// versionSet is the versions of one message; branches[cur] is nil, its
// version being the one in the session.
type versionSet struct {
	cur      int
	branches []*branch
}

// branch is a version of a message and everything that followed it.
type branch struct {
	msgs   []Message
	nested map[int]*versionSet // versions of later messages, by offset from the branch's index
	end    tailState           // the session's state at the end of this path
	base   *tailState          // what its last turn continued, at baseAt
	baseAt int
}

// versionCount is the number of versions of the message at index i (0 or
// 1 when it has no other).
func (s *Session) versionCount(i int) int {
	if set := s.versions[i]; set != nil {
		return len(set.branches)
	}
	return 0
}

// pack takes the path from index i out of the session into a branch.
func (s *Session) pack(i int) *branch {
	b := &branch{msgs: slices.Clone(s.msgs[i:]), end: s.tail(), base: s.base, baseAt: s.baseAt}
	for k, set := range s.versions {
		if k > i {
			if b.nested == nil {
				b.nested = map[int]*versionSet{}
			}
			b.nested[k-i] = set
			delete(s.versions, k)
		}
	}
	return b
}

// unpack puts a branch back at index i (the session holds msgs[:i]).
func (s *Session) unpack(i int, b *branch) (bool, error) {
	s.msgs = append(s.msgs[:i:i], b.msgs...)
	for k, set := range b.nested {
		if s.versions == nil {
			s.versions = map[int]*versionSet{}
		}
		s.versions[i+k] = set
	}
	s.base, s.baseAt = b.base, b.baseAt
	return s.applyTail(b.end)
}

// newVersion makes room for a new version of the message at index i: the
// session's path from i becomes a branch, and the new version (to come)
// the current one. It returns the index of the version that was current.
func (s *Session) newVersion(i int) int {
	if s.versions == nil {
		s.versions = map[int]*versionSet{}
	}
	set := s.versions[i]
	if set == nil {
		set = &versionSet{branches: []*branch{nil}}
		s.versions[i] = set
	}
	prev := set.cur
	set.branches[prev] = s.pack(i)
	set.branches = append(set.branches, nil)
	set.cur = len(set.branches) - 1
	s.msgs = s.msgs[:i]
	return prev
}

// dropVersion undoes newVersion after a turn that produced nothing: the
// version that was current comes back.
func (s *Session) dropVersion(i, prev int) error {
	set := s.versions[i]
	if set == nil || set.cur != len(set.branches)-1 {
		return nil
	}
	b := set.branches[prev]
	set.branches = set.branches[:len(set.branches)-1]
	set.branches[prev], set.cur = nil, prev
	if len(set.branches) == 1 {
		delete(s.versions, i)
	}
	s.msgs = s.msgs[:min(i, len(s.msgs))]
	for k := range s.versions {
		if k > i {
			delete(s.versions, k)
		}
	}
	_, err := s.unpack(i, b)
	return err
}

// contextUsed counts the conversation's tokens as a turn's figures do:
// those in the cache and those waiting to be fed back, but not a reply's
// last token, emitted at its cap and never fed (pending).
func (s *Session) contextUsed() int {
	n := len(s.committed) + len(s.unfed)
	if k := len(s.unfed); k > 0 && s.unfed[k-1] == s.pending {
		n--
	}
	return n
}

// lastUser is the index of the last user message, −1 when there is none.
func (s *Session) lastUser() int {
	for i := len(s.msgs) - 1; i >= 0; i-- {
		if s.msgs[i].Role == "user" {
			return i
		}
	}
	return -1
}

// replied reports whether the turn of the user message at i got a reply.
func (s *Session) replied(i int) bool { return len(s.msgs) > i+1 }

// Regenerate replaces the last reply with a new one. The old reply stays
// as another version (SelectVersion shows it again) and the cache is
// rewound to the end of its prompt, so only the prompt's last token is fed
// again: greedy decoding gives the same reply, sampling another draw. When
// the last message is the user's (its turn failed), it is sent again.
func (s *Session) Regenerate(emit func(Event)) error {
	u := s.lastUser()
	if u < 0 || u < len(s.msgs)-2 {
		err := errors.New("there is no reply to regenerate yet")
		emit(Failed{Op: OpRegenerate, Err: err})
		return err
	}
	from := s.baseFor(u)
	msg := s.msgs[u]
	msg.Version, msg.Versions = 0, 0
	prev := -1
	if s.replied(u) {
		prev = s.newVersion(u + 1)
	}
	s.msgs = s.msgs[:u]
	s.gen++
	emit(Branched{Op: OpRegenerate, Messages: append(s.Messages(), s.shown(u, msg)), ContextUsed: s.contextUsed(), Window: s.window})
	err := s.toolTurn(emit, func(emit func(Event)) error { return s.send(turnReq{msg: &msg, from: from, op: OpRegenerate}, emit) })
	if err != nil && !errors.Is(err, ErrCancelled) && !s.replied(u) {
		// Nothing came of it: the conversation is as it was.
		if len(s.msgs) == u {
			s.msgs = append(s.msgs, msg)
		}
		if prev >= 0 {
			if derr := s.dropVersion(u+1, prev); derr != nil {
				return errors.Join(err, derr)
			}
		}
		emit(Branched{Op: OpRegenerate, Messages: s.Messages(), ContextUsed: s.contextUsed(), Window: s.window})
	}
	return err
}

// Edit replaces the last user message with text and sends it: the cache
// is rewound to before the message, and the message with the turns that
// followed it stays as another version.
func (s *Session) Edit(text string, emit func(Event)) error {
	u := s.lastUser()
	if u < 0 {
		err := errors.New("there is no message to edit yet")
		emit(Failed{Op: OpEdit, Err: err})
		return err
	}
	from := s.baseFor(u)
	// The edited message keeps the files the old one carried.
	msg := Message{Role: "user", Content: text, Attachments: s.msgs[u].Attachments}
	prev := s.newVersion(u)
	s.gen++
	emit(Branched{Op: OpEdit, Messages: append(s.Messages(), s.shown(u, msg)), ContextUsed: s.contextUsed(), Window: s.window})
	err := s.toolTurn(emit, func(emit func(Event)) error { return s.send(turnReq{msg: &msg, from: from, op: OpEdit}, emit) })
	if err != nil && !errors.Is(err, ErrCancelled) && !s.replied(u) {
		if derr := s.dropVersion(u, prev); derr != nil {
			return errors.Join(err, derr)
		}
		emit(Branched{Op: OpEdit, Messages: s.Messages(), ContextUsed: s.contextUsed(), Window: s.window})
	}
	return err
}

// shown is msg as Messages would show it at index i.
func (s *Session) shown(i int, msg Message) Message {
	if set := s.versions[i]; set != nil && len(set.branches) > 1 {
		msg.Version, msg.Versions = set.cur, len(set.branches)
	}
	return msg
}

// SelectVersion shows another version of the message at index: that
// version and the turns that followed it replace the path from index.
// The cache keeps what the two paths share; the rest is fed back by the
// next turn.
func (s *Session) SelectVersion(index, version int, emit func(Event)) error {
	set := s.versions[index]
	switch {
	case set == nil || index >= len(s.msgs):
		return fmt.Errorf("message %d has no other version", index+1)
	case version < 0 || version >= len(set.branches):
		return fmt.Errorf("message %d has %d versions, not %d", index+1, len(set.branches), version+1)
	}
	if version != set.cur {
		b := set.branches[version]
		set.branches[set.cur] = s.pack(index)
		set.branches[version], set.cur = nil, version
		s.msgs = s.msgs[:index]
		kept, err := s.unpack(index, b)
		if err != nil {
			return err
		}
		s.gen++
		if !kept {
			emit(Notice{Text: "the cache could not go back that far (its sliding window has moved on); the next message prefills the conversation again"})
		}
	}
	emit(Branched{Op: OpVersion, Messages: s.Messages(), ContextUsed: s.contextUsed(), Window: s.window})
	return nil
}

// Checkpoint form of the versions: a tree of plain values.

type versionJSON struct {
	Index    int           `json:"index"`
	Current  int           `json:"current"`
	Branches []*branchJSON `json:"branches"` // the current one is null
}

type branchJSON struct {
	Messages []messageJSON `json:"messages"`
	Nested   []versionJSON `json:"nested,omitempty"` // indexes relative to the branch
	End      tailState     `json:"end"`
	Base     *tailState    `json:"base,omitempty"`
	BaseAt   int           `json:"baseAt,omitempty"`
}

type messageJSON struct {
	Role        string               `json:"role"`
	Content     string               `json:"content"`
	Interrupted bool                 `json:"interrupted,omitempty"`
	Stopped     bool                 `json:"stopped,omitempty"`
	Figures     *checkpoints.Figures `json:"figures,omitempty"`
	Attachments []Attachment         `json:"attachments,omitempty"`
	Calls       json.RawMessage      `json:"calls,omitempty"`
	Responses   json.RawMessage      `json:"responses,omitempty"`
}

func versionsToJSON(sets map[int]*versionSet) []versionJSON {
	idx := make([]int, 0, len(sets))
	for i := range sets {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var out []versionJSON
	for _, i := range idx {
		set := sets[i]
		v := versionJSON{Index: i, Current: set.cur}
		for _, b := range set.branches {
			if b == nil {
				v.Branches = append(v.Branches, nil)
				continue
			}
			bj := &branchJSON{Nested: versionsToJSON(b.nested), End: b.end, Base: b.base, BaseAt: b.baseAt}
			for _, m := range b.msgs {
				mj := messageJSON{Role: m.Role, Content: m.Content, Interrupted: m.Interrupted,
					Stopped: m.Stopped, Figures: toFigures(m.Metrics), Attachments: m.Attachments}
				mj.Calls, mj.Responses = m.ToolsJSON()
				bj.Messages = append(bj.Messages, mj)
			}
			v.Branches = append(v.Branches, bj)
		}
		out = append(out, v)
	}
	return out
}

// versionsFromJSON rebuilds the versions of a conversation of n messages;
// a set that does not fit (an index past the end, no current version) is
// left out rather than trusted.
func versionsFromJSON(vs []versionJSON, n int) map[int]*versionSet {
	var out map[int]*versionSet
	for _, v := range vs {
		if v.Index < 0 || v.Index >= n || v.Current < 0 || v.Current >= len(v.Branches) || len(v.Branches) < 2 {
			continue
		}
		set := &versionSet{cur: v.Current}
		ok := true
		for j, bj := range v.Branches {
			if (j == v.Current) != (bj == nil) || bj != nil && len(bj.Messages) == 0 {
				ok = false
				break
			}
			if bj == nil {
				set.branches = append(set.branches, nil)
				continue
			}
			b := &branch{end: bj.End, base: bj.Base, baseAt: bj.BaseAt}
			for _, m := range bj.Messages {
				msg := Message{Role: m.Role, Content: m.Content, Interrupted: m.Interrupted || m.Stopped,
					Stopped: m.Stopped, Metrics: fromFigures(m.Figures), Attachments: m.Attachments}
				if msg.SetToolsJSON(m.Calls, m.Responses) != nil {
					ok = false
					break
				}
				b.msgs = append(b.msgs, msg)
			}
			b.nested = versionsFromJSON(bj.Nested, len(b.msgs))
			if !validTail(b.end) || b.base != nil && !validTail(*b.base) {
				ok = false
				break
			}
			set.branches = append(set.branches, b)
		}
		if !ok {
			continue
		}
		if out == nil {
			out = map[int]*versionSet{}
		}
		out[v.Index] = set
	}
	return out
}

func validTail(t tailState) bool { return t.Fed >= 0 && t.Fed <= len(t.IDs) }
