package engine

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/engine/chain"
)

// conversations keeps the conversations of earlier requests, so a client
// that comes back after another one is served from a restore rather than
// a prefill. The session holds one conversation at a time: the chat's own
// ("home"), or a request's. While a request's is in the session, home is
// kept aside and comes back before any chat command. Everything but the
// figures runs on the engine goroutine.
type conversations struct {
	kept    []*convState // least recently used first
	home    *convState   // the chat's conversation, aside while a request's is in the session
	foreign bool         // a request's conversation is in the session
	from    *convState   // the kept conversation the session was restored from, if unchanged since
	max     int
	budget  int64
	clock   uint64

	// Conversations pushed out of memory go to disk while spillDir is
	// set, up to spillBudget bytes, least recently used first out.
	spillDir    string
	spillBudget int64
	spillMade   bool // the engine made spillDir (and removes it when empty)
	spilled     []*convState
	spillSeq    int

	mu    sync.Mutex
	stats ConversationStats
}

// ConversationStats are the figures of the conversation cache.
type ConversationStats struct {
	Kept      int   // conversations kept besides the session's
	Bytes     int64 // cache bytes they hold
	Restores  int   // requests served by restoring a kept conversation
	Evictions int   // conversations pushed out of memory for the budget
	OnDisk    int   // conversations kept on disk
	DiskBytes int64 // their cache bytes
}

// Default budget: a few conversations, as much cache as E4B's full
// context several times over.
const (
	defaultKeep      = 4
	defaultKeepBytes = 512 << 20
)

// convState is a conversation moved out of the session: what the next
// turn needs to continue it exactly as if it had never left.
type convState struct {
	msgs       []Message
	window     int
	cstate     *contextState
	set        Settings
	committed  []int
	pending    int
	contOK     bool
	prevPrompt string
	unfed      []int
	streamPend []int
	spans      []spanRef             // media spans the cache holds
	encoded    map[string][][]uint16 // their soft rows, should they be prefilled again
	turn       int
	// The chat's versions, the base of its last turn and its place in
	// the history (branch.go, history.go) go aside with it.
	versions  map[int]*versionSet
	base      *tailState
	baseAt    int
	historyID string
	gen       uint64
	cache     *chain.CacheState // nil: nothing cached, or on disk at path
	path      string            // the cache's file while it is on disk
	size      int64             // cache bytes, in memory or on disk
	used      uint64
}

func (c *convState) bytes() int64 { return int64(8*len(c.committed)) + c.size }

// capture copies the session's conversation and cache.
func (s *Session) capture() (*convState, error) {
	c := &convState{msgs: slices.Clone(s.msgs), window: s.window, cstate: s.cstate, set: s.set, committed: slices.Clone(s.committed), pending: s.pending,
		contOK: s.contOK, prevPrompt: s.prevPrompt, unfed: slices.Clone(s.unfed), streamPend: slices.Clone(s.streamPending), turn: s.turn,
		spans: slices.Clone(s.spans), encoded: s.encoded,
		versions: s.versions, base: s.base, baseAt: s.baseAt, historyID: s.historyID, gen: s.gen}
	if len(s.committed) > 0 {
		cache, err := s.chain.Snapshot()
		if err != nil {
			return nil, err
		}
		c.cache, c.size = cache, cache.Bytes()
	}
	return c, nil
}

// restoreState puts a captured conversation back into the session.
func (s *Session) restoreState(c *convState) error {
	if c.path != "" {
		cache, err := readSpilled(c.path)
		if err != nil {
			return err
		}
		if err := s.chain.Restore(cache); err != nil {
			return fmt.Errorf("kept conversation %s: %w", c.path, err)
		}
	} else if c.cache == nil {
		if err := s.chain.Reset(); err != nil {
			return err
		}
	} else if err := s.chain.Restore(c.cache); err != nil {
		return err
	}
	if err := s.applySettings(c.set); err != nil {
		return err
	}
	s.msgs, s.window, s.committed, s.pending = slices.Clone(c.msgs), c.window, slices.Clone(c.committed), c.pending
	s.cstate = c.cstate
	s.contOK, s.prevPrompt, s.unfed, s.turn = c.contOK, c.prevPrompt, slices.Clone(c.unfed), c.turn
	s.streamPending = slices.Clone(c.streamPend)
	s.spans, s.encoded = slices.Clone(c.spans), c.encoded
	s.versions, s.base, s.baseAt, s.historyID, s.gen = c.versions, c.base, c.baseAt, c.historyID, c.gen
	s.chain.SetSoft(nil)
	return nil
}

// reuse is how many prompt tokens a conversation would serve from its
// cache: all it holds when the request continues it exactly, else the
// common prefix with the request's fresh encoding.
// A media span whose file differs ends the common prefix: placeholder ids
// do not tell two pictures apart.
func (c *convState) reuse(req Request, ids []int, refs []spanRef) int {
	history := req.Messages[:max(len(req.Messages)-1, 0)]
	if !req.Raw && c.contOK && c.set.System == req.Settings.System && c.set.Thinking == req.Settings.Thinking && sameMessages(c.msgs, history) {
		return len(c.committed)
	}
	return mediaPrefix(commonPrefix(ids, c.committed), c.spans, refs)
}

func (cs *conversations) setBudget(n int, bytes int64) {
	cs.max, cs.budget = n, bytes
	cs.evict()
}

func (cs *conversations) limits() (int, int64) {
	if cs.max == 0 && cs.budget == 0 {
		return defaultKeep, defaultKeepBytes
	}
	return cs.max, cs.budget
}

// switchTo makes the session hold the conversation that serves req best:
// the one in it, a kept one, or the chat's. The session's is copied out
// only when another serves better.
func (cs *conversations) switchTo(s *Session, req Request, ids []int, refs []spanRef) error {
	if !cs.foreign {
		home, err := s.capture()
		if err != nil {
			return err
		}
		cs.home, cs.foreign, cs.from = home, true, nil
	}
	live := &convState{msgs: s.msgs, set: s.set, committed: s.committed, contOK: s.contOK, spans: s.spans}
	best, bestN := (*convState)(nil), live.reuse(req, ids, refs)
	for _, c := range append(append(slices.Clone(cs.kept), cs.spilled...), cs.home) {
		if n := c.reuse(req, ids, refs); n > bestN {
			best, bestN = c, n
		}
	}
	if best == nil {
		if bestN < len(s.committed) {
			// The request diverges from the session's conversation and
			// would rewind it: keep it for its client first.
			return cs.keepSession(s)
		}
		return nil
	}
	if err := cs.keepSession(s); err != nil {
		return err
	}
	if err := s.restoreState(best); err != nil {
		if best.path == "" {
			return err
		}
		// A spilled file that cannot be read is dropped; the request is
		// served by a prefill instead.
		cs.dropSpilled(best)
		return nil
	}
	cs.clock++
	best.used = cs.clock
	if best.path != "" { // most recently used on disk now
		cs.spilled = append(slices.DeleteFunc(cs.spilled, func(k *convState) bool { return k == best }), best)
	}
	cs.from = best
	if best == cs.home {
		cs.from = nil
	}
	cs.mu.Lock()
	cs.stats.Restores++
	cs.mu.Unlock()
	return nil
}

// keepSession keeps the request conversation in the session before it is
// replaced, unless it is still exactly the kept one it was restored from
// or the chat's own (home keeps that).
func (cs *conversations) keepSession(s *Session) error {
	if f := cs.from; f != nil && slices.Equal(f.committed, s.committed) && sameMessages(f.msgs, s.msgs) && f.pending == s.pending {
		return nil
	}
	if h := cs.home; h != nil && slices.Equal(h.committed, s.committed) && sameMessages(h.msgs, s.msgs) && h.pending == s.pending {
		return nil
	}
	live, err := s.capture()
	if err != nil {
		return err
	}
	cs.keep(live)
	return nil
}

// keep adds a conversation, dropping the kept ones it extends (restoring
// it and rewinding serves them as well) and then the least recently used
// beyond the budget.
func (cs *conversations) keep(c *convState) {
	if len(c.committed) == 0 {
		return
	}
	extends := func(k *convState) bool {
		return len(k.committed) <= len(c.committed) && slices.Equal(k.committed, c.committed[:len(k.committed)])
	}
	cs.kept = slices.DeleteFunc(cs.kept, extends)
	for _, k := range slices.Clone(cs.spilled) {
		if extends(k) {
			cs.dropSpilled(k)
		}
	}
	cs.clock++
	c.used = cs.clock
	cs.kept = append(cs.kept, c)
	cs.evict()
}

func (cs *conversations) evict() {
	n, budget := cs.limits()
	slices.SortFunc(cs.kept, func(a, b *convState) int { return int(a.used) - int(b.used) })
	var total int64
	for _, c := range cs.kept {
		total += c.bytes()
	}
	for len(cs.kept) > 0 && (len(cs.kept) > n || total > budget) {
		c := cs.kept[0]
		total -= c.bytes()
		cs.kept = cs.kept[1:]
		if cs.spill(c) != nil && c == cs.from {
			cs.from = nil
		}
		cs.mu.Lock()
		cs.stats.Evictions++
		cs.mu.Unlock()
	}
	var disk int64
	for len(cs.spilled) > 0 {
		disk = 0
		for _, c := range cs.spilled {
			disk += c.size
		}
		if disk <= cs.spillBudget {
			break
		}
		cs.dropSpilled(cs.spilled[0])
	}
	cs.mu.Lock()
	cs.stats.Kept, cs.stats.Bytes = len(cs.kept), total
	cs.stats.OnDisk, cs.stats.DiskBytes = len(cs.spilled), disk
	cs.mu.Unlock()
}

// spill writes a conversation's cache to disk and keeps it there; an
// error (no spill folder, a full disk) drops it.
func (cs *conversations) spill(c *convState) error {
	if cs.spillDir == "" || c.cache == nil || c.size > cs.spillBudget {
		return os.ErrInvalid
	}
	cs.spillSeq++
	path := filepath.Join(cs.spillDir, fmt.Sprintf("conversation-%d.gob", cs.spillSeq))
	err := atomicfile.WriteFunc(path, func(w io.Writer) error { return gob.NewEncoder(w).Encode(c.cache) })
	if err != nil {
		return err
	}
	// The rows of its files stay with the encoders (by sha256) and come
	// with every request that resends the conversation: none in memory here.
	c.cache, c.path, c.encoded = nil, path, nil
	cs.spilled = append(cs.spilled, c) // used order: it was the least recently used in memory
	return nil
}

func (cs *conversations) dropSpilled(c *convState) {
	os.Remove(c.path)
	cs.spilled = slices.DeleteFunc(cs.spilled, func(k *convState) bool { return k == c })
	if c == cs.from {
		cs.from = nil
	}
}

func readSpilled(path string) (*chain.CacheState, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kept conversation: %w", err)
	}
	defer f.Close()
	var cache chain.CacheState
	if err := gob.NewDecoder(f).Decode(&cache); err != nil {
		return nil, fmt.Errorf("kept conversation %s: %w", path, err)
	}
	return &cache, nil
}

// setSpill points the disk tier at dir with a byte budget; "" turns it
// off. The folder is the caller's: the engine writes its own files there
// (SpillFiles) and removes only those. A missing folder is made (0700)
// and removed again when the tier closes, if nothing else is in it; an
// existing one is never changed or removed.
func (cs *conversations) setSpill(dir string, bytes int64) error {
	cs.closeSpill()
	if dir == "" || bytes <= 0 {
		return nil
	}
	switch err := os.Mkdir(dir, 0o700); {
	case err == nil:
		cs.spillMade = true
	case errors.Is(err, fs.ErrExist):
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("conversation folder %s: not a folder", dir)
		}
	default:
		return fmt.Errorf("conversation folder %s: %w", dir, err)
	}
	cs.spillDir, cs.spillBudget = dir, bytes
	return nil
}

// closeSpill removes the files the disk tier wrote, and its folder if
// the tier made it and nothing else is in it; the tier is off after.
func (cs *conversations) closeSpill() {
	for _, c := range cs.spilled {
		os.Remove(c.path)
	}
	if cs.spillMade {
		os.Remove(cs.spillDir) // not RemoveAll: a file someone put there stays, and so does the folder
	}
	cs.spilled, cs.spillDir, cs.spillBudget, cs.spillMade = nil, "", 0, false
}

// SpillFiles are the names (filepath.Match patterns) of the files the
// engine writes in a spill folder: the caches and atomicfile's temporary
// file beside one being written. A cleaner of a dead process's folder
// removes these and nothing else.
func SpillFiles() []string { return []string{"conversation-*.gob", ".conversation-*.gob.tmp*"} }

// toHome brings the chat's conversation back into the session, keeping
// the request's that was in it.
func (cs *conversations) toHome(s *Session) error {
	if !cs.foreign {
		return nil
	}
	if err := cs.keepSession(s); err != nil {
		return err
	}
	if err := s.restoreState(cs.home); err != nil {
		return err
	}
	cs.home, cs.foreign, cs.from = nil, false, nil
	return nil
}

// view returns the chat's conversation, its window and settings wherever
// they are.
func (cs *conversations) view(s *Session) ([]Message, int, Settings) {
	if cs.foreign {
		return withVersions(cs.home.msgs, cs.home.versions), cs.home.window, cs.home.set
	}
	return s.Messages(), s.Window(), s.Settings()
}

func (cs *conversations) statsCopy() ConversationStats {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.stats
}
