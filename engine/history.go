package engine

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/checkpoints"
)

// The conversation history keeps every conversation without being asked:
// each is a checkpoint in a store of its own (<data>/history), written
// when the chat autosaves and whenever another conversation replaces it
// (/new, a load, a fork, resuming another). The text is always kept; the
// cache only for the most recent conversations, as many as
// HistoryPolicy.KeepKV within HistoryPolicy.KVBudget bytes. An older one
// is rewritten as text: its token ids move into the conversation state,
// so resuming it feeds them again (a prefill) and continues token for
// token as the original would have.

// HistoryStore is what the engine needs of the history's store; a
// checkpoints.Store of its own folder is one.
type HistoryStore interface {
	Save(cp *checkpoints.Checkpoint) error
	Load(name string, want bundle.Identity) (*checkpoints.Checkpoint, error)
	Show(name string) (*checkpoints.Checkpoint, error)
	List() ([]checkpoints.Info, error)
	Delete(name string) error
}

// HistoryPolicy bounds the caches the history keeps.
type HistoryPolicy struct {
	KeepKV   int   // the most recent conversations that keep their cache; 0 keeps none
	KVBudget int64 // bytes those may take on disk together
}

// ErrNoHistory is reported when the history is off or has no folder.
var ErrNoHistory = errors.New("the conversation history is off (history.enabled in the config) or has no data folder")

// UseHistory connects the history's store.
func (e *Engine) UseHistory(st HistoryStore, p HistoryPolicy) error {
	return e.do(OpHistory, func() {
		e.hmu.Lock()
		e.hist, e.histPolicy = st, p
		e.hmu.Unlock()
	})
}

// ListHistory reports the conversations whose text contains query (all
// of them for ""), newest first, as History{Op: OpList}. It runs beside
// the engine goroutine, so it never waits for a reply; requests made
// faster than they are answered are merged into the last.
func (e *Engine) ListHistory(query string) error {
	e.reads.ask(&query)
	return nil
}

// SearchHistory answers what ListHistory reports, to the caller: the
// conversations whose text holds query (all for ""), newest first. It
// reads the history's folder beside the engine goroutine, so a turn in
// flight does not hold it up; the server's GET answers with it.
func (e *Engine) SearchHistory(query string) ([]HistoryInfo, error) {
	return e.reads.list(e, query)
}

// ResumeHistory replaces the conversation with one from the history; the
// conversation it replaces is kept there first.
func (e *Engine) ResumeHistory(id string) error {
	return e.do(OpResume, func() {
		if err := e.resume(id); err != nil {
			e.emit(Failed{Op: OpResume, Err: err})
		}
		e.refreshHistory()
	})
}

// DeleteHistory removes a conversation from the history. The conversation
// on screen goes on; it is kept again once it changes.
func (e *Engine) DeleteHistory(id string) error {
	return e.do(OpHistoryDelete, func() {
		if e.hist == nil {
			e.emit(Failed{Op: OpHistory, Err: ErrNoHistory})
			return
		}
		if err := e.hist.Delete(id); err != nil {
			e.emit(Failed{Op: OpHistoryDelete, Err: err})
			return
		}
		if id == e.sess.historyID {
			e.sess.historyID, e.archivedGen = "", e.sess.gen
			e.refresh()
		}
		e.emit(History{Op: OpDelete, ID: id})
		e.refreshHistory()
	})
}

func (e *Engine) resume(id string) error {
	s := e.sess
	if e.hist == nil {
		return ErrNoHistory
	}
	if id == s.historyID && id != "" {
		e.emit(History{Op: OpResume, ID: id, Title: titleOf(s.msgs)})
		return nil
	}
	cp, err := e.hist.Load(id, s.b.Identity)
	if err != nil {
		var ie *checkpoints.IdentityError
		if errors.As(err, &ie) {
			ie.Loaded = checkpoints.DescribeBundle(s.b.Name(), s.b.Identity)
		}
		return err
	}
	if err := e.keepReplaced(); err != nil {
		return err
	}
	if err := s.Restore(cp); err != nil {
		return err
	}
	s.historyID, e.archivedGen = id, s.gen
	e.refresh()
	e.emit(Cleared{Messages: s.Messages(), ContextUsed: s.contextUsed(), Settings: s.Settings(), Window: s.Window()})
	if len(cp.Tokens) == 0 && len(s.unfed) > 0 {
		e.emit(Notice{Text: fmt.Sprintf("its cache was not kept (history.keep_kv, history.kv_budget): the next message feeds its %s tokens again", thousands(len(s.unfed)))})
	}
	e.emit(History{Op: OpResume, ID: id, Title: entryTitle(cp)})
	return nil
}

// keepReplaced keeps the conversation that is about to be replaced and
// says so (History{Op: OpKept}) when it is in the history. When it cannot
// be kept, the caller must not replace it: the error (a *NotKeptError)
// says why in a sentence, and the conversation stays where it is.
func (e *Engine) keepReplaced() error {
	id, err := e.keep()
	if err != nil {
		return &NotKeptError{Err: err}
	}
	if id != "" {
		e.emit(History{Op: OpKept, ID: id, Title: titleOf(e.sess.msgs)})
	}
	return nil
}

// NotKeptError refuses to replace a conversation (/new, a load, a fork,
// resuming another) because the history could not keep it first: as git
// stash and SQLite do, nothing is thrown away when the copy failed.
type NotKeptError struct{ Err error }

func (e *NotKeptError) Unwrap() error { return e.Err }

// Error is one sentence: the cause as a person would name it, that the
// conversation is still there, and what to do.
func (e *NotKeptError) Error() string {
	const kept = "the conversation was kept on screen"
	switch {
	case errors.Is(e.Err, syscall.ENOSPC):
		return "the disk is full: " + kept + "; free space or /save elsewhere"
	case errors.Is(e.Err, syscall.EDQUOT):
		return "the disk quota is used up: " + kept + "; free space or /save elsewhere"
	case errors.Is(e.Err, syscall.EROFS):
		return "the history folder is on a read-only disk: " + kept + "; make it writable or /save elsewhere"
	case errors.Is(e.Err, fs.ErrPermission):
		return "orchard may not write to the history folder (permission denied): " + kept + "; fix its permissions or /save elsewhere"
	}
	return fmt.Sprintf("the history could not keep it (%v): %s; /save it elsewhere", e.Err, kept)
}

// keep writes the conversation into the history when it changed since it
// was last kept, then trims the caches the history holds to its policy.
// It returns the conversation's id in the history, "" when it is not
// there (no history, an empty conversation).
func (e *Engine) keep() (string, error) {
	s := e.sess
	if e.hist == nil || len(s.msgs) == 0 {
		return "", nil
	}
	if s.gen == e.archivedGen {
		return s.historyID, nil
	}
	if s.historyID == "" {
		s.historyID = newHistoryID(time.Now())
	}
	cp, err := s.Checkpoint(s.historyID, e.units)
	if err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	if p := e.histPolicy; p.KeepKV <= 0 || cp.Cache.Bytes() > p.KVBudget {
		if err := textOnly(cp); err != nil {
			return "", fmt.Errorf("history: %w", err)
		}
	}
	if err := e.carryTitle(cp); err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	if err := e.hist.Save(cp); err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	e.archivedGen = s.gen
	e.trimHistory()
	e.refresh() // the reader marks the entry of the conversation on screen
	e.refreshHistory()
	return s.historyID, nil
}

// trimHistory keeps the cache of the most recent conversations within the
// policy; older ones are rewritten as text. The history is best effort: a
// conversation that cannot be rewritten keeps its cache until next time.
func (e *Engine) trimHistory() {
	infos, err := e.hist.List()
	if err != nil {
		return
	}
	p := e.histPolicy
	kept, used := 0, int64(0)
	for _, in := range infos {
		if in.Problem != "" || in.Tokens == 0 {
			continue
		}
		if kept < p.KeepKV && used+in.Bytes <= p.KVBudget {
			kept++
			used += in.Bytes
			continue
		}
		cp, err := e.hist.Show(in.Name)
		if err != nil || textOnly(cp) != nil {
			continue
		}
		e.hist.Save(cp)
	}
}

// textOnly turns a checkpoint into one without a cache: its committed ids
// join the ids the next turn feeds (Unfed), so it resumes token for token.
// An r1 cache keeps its k/v files, with no rows, as corellm-chat's layout
// asks.
func textOnly(cp *checkpoints.Checkpoint) error {
	var st sessionState
	if len(cp.Conversation.Settings) > 0 {
		if err := json.Unmarshal(cp.Conversation.Settings, &st); err != nil {
			return fmt.Errorf("checkpoint %q: settings: %w", cp.Meta.Name, err)
		}
	}
	st.Unfed = append(slices.Clone(cp.Tokens), st.Unfed...)
	// Spans keep their positions: they are the same tokens, now all unfed.
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	cp.Conversation.Settings = raw
	cp.Tokens = nil
	cp.Cache.Position = 0
	if cp.Cache.Family != bundle.R1 {
		cp.Cache.Buffers = nil
		return nil
	}
	for i := range cp.Cache.Buffers {
		b := &cp.Cache.Buffers[i]
		b.Shape = []int{0, b.Shape[len(b.Shape)-1]}
		b.Data = nil
	}
	return nil
}

// newHistoryID names a conversation by when it was first kept.
func newHistoryID(now time.Time) string {
	var b [3]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// titleOf is a conversation's first user message on one line.
func titleOf(msgs []Message) string {
	for _, m := range msgs {
		if m.Role == "user" {
			return oneLine(m.Content, 80)
		}
	}
	return ""
}

// oneLine collapses white space and cuts s to at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// historyReader lists and searches the history on a goroutine of its own.
// A request names the query (nil: the last one again); requests that
// arrive while one is answered are merged, and the answer is for the last.
type historyReader struct {
	mu     sync.Mutex
	listMu sync.Mutex // one list at a time: texts is its cache
	query  string
	wanted bool
	kick   chan struct{}
	quit   chan struct{}
	wg     sync.WaitGroup
	texts  map[string]historyText // by id, while its Created stays
}

// historyText is what a search reads of a conversation.
type historyText struct {
	created time.Time
	title   string
	msgs    []string
}

func (r *historyReader) start(e *Engine) {
	r.kick, r.quit, r.texts = make(chan struct{}, 1), make(chan struct{}), map[string]historyText{}
	r.wg.Add(1)
	go r.run(e)
}

func (r *historyReader) stop() {
	close(r.quit)
	r.wg.Wait()
}

func (r *historyReader) ask(query *string) {
	r.mu.Lock()
	if query != nil {
		r.query = *query
	}
	r.wanted = true
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *historyReader) run(e *Engine) {
	defer r.wg.Done()
	for {
		select {
		case <-r.kick:
		case <-r.quit:
			return
		}
		r.mu.Lock()
		q, wanted := r.query, r.wanted
		r.wanted = false
		r.mu.Unlock()
		if !wanted {
			continue
		}
		list, err := r.list(e, q)
		if err != nil {
			e.emit(Failed{Op: OpHistory, Err: err})
			continue
		}
		e.emit(History{Op: OpList, Query: q, List: list})
	}
}

// list reads the history: every entry, or those whose text holds query.
func (r *historyReader) list(e *Engine, query string) ([]HistoryInfo, error) {
	r.listMu.Lock()
	defer r.listMu.Unlock()
	e.hmu.Lock()
	st, cur := e.hist, e.histID
	e.hmu.Unlock()
	if st == nil {
		return nil, ErrNoHistory
	}
	infos, err := st.List()
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	q := strings.TrimSpace(query)
	out := []HistoryInfo{}
	seen := map[string]bool{}
	titles := r.titles(e, st, infos, cur)
	for _, in := range infos {
		if in.Problem != "" {
			continue
		}
		seen[in.Name] = true
		txt, ok := r.text(st, in)
		if !ok {
			continue
		}
		h := HistoryInfo{ID: in.Name, Title: titles[in.Name], Updated: in.Created, Turns: in.Turns, Tokens: in.Tokens,
			Bytes: in.Bytes, KV: in.Tokens > 0, Bundle: in.Bundle, Compatible: in.BundleID == e.sess.b.Identity.ID,
			Current: in.Name == cur}
		if q != "" {
			if h.Snippet, ok = search(txt.msgs, q); !ok {
				continue
			}
		}
		out = append(out, h)
	}
	for id := range r.texts {
		if !seen[id] {
			delete(r.texts, id)
		}
	}
	// The conversation on screen, when it has not been kept yet.
	if cur == "" || !seen[cur] {
		if msgs := e.Messages(); len(msgs) > 0 {
			var texts []string
			for _, m := range msgs {
				texts = append(texts, m.Content)
			}
			h := HistoryInfo{ID: cur, Title: titles[cur], Updated: time.Now(), Turns: countUser(msgs), KV: true,
				Bundle: e.sess.b.Name(), Compatible: true, Current: true}
			snippet, ok := search(texts, q)
			if q == "" || ok {
				h.Snippet = snippet
				out = append([]HistoryInfo{h}, out...)
			}
		}
	}
	return out, nil
}

// text returns what a search reads of an entry, from orchard.json (cached
// while the entry is unchanged).
func (r *historyReader) text(st HistoryStore, in checkpoints.Info) (historyText, bool) {
	if t, ok := r.texts[in.Name]; ok && t.created.Equal(in.Created) {
		return t, true
	}
	cp, err := st.Show(in.Name)
	if err != nil {
		return historyText{}, false
	}
	t := historyText{created: in.Created, title: entryTitle(cp)}
	for _, m := range cp.Conversation.Messages {
		t.msgs = append(t.msgs, m.Content)
	}
	r.texts[in.Name] = t
	return t, true
}

func countUser(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "user" {
			n++
		}
	}
	return n
}

// search finds query in texts, ignoring case, and returns the words
// around its first match on one line.
func search(texts []string, query string) (string, bool) {
	if query == "" {
		return "", false
	}
	for _, t := range texts {
		at, n := indexFold(t, query)
		if at < 0 {
			continue
		}
		start := at
		for k := 0; k < 30 && start > 0; k++ {
			_, size := utf8.DecodeLastRuneInString(t[:start])
			start -= size
		}
		end := at + n
		for k := 0; k < 50 && end < len(t); k++ {
			_, size := utf8.DecodeRuneInString(t[end:])
			end += size
		}
		s := strings.Join(strings.Fields(t[start:end]), " ")
		if start > 0 {
			s = "…" + s
		}
		if end < len(t) {
			s += "…"
		}
		return s, true
	}
	return "", false
}

// indexFold finds query in s ignoring case (simple folding); it returns
// the byte offset and length of the match in s, or −1.
func indexFold(s, query string) (int, int) {
	q := []rune(query)
	for i := range s {
		j, k := i, 0
		for k < len(q) && j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if unicode.ToLower(r) != unicode.ToLower(q[k]) {
				break
			}
			j += size
			k++
		}
		if k == len(q) {
			return i, j - i
		}
	}
	return -1, 0
}

// refreshHistory has the reader list the history again (for the last
// query) after a change, when there is a history.
func (e *Engine) refreshHistory() {
	if e.hist != nil {
		e.reads.ask(nil)
	}
}
