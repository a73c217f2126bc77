package engine

import (
	"slices"
	"sync"
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

	mu    sync.Mutex
	stats ConversationStats
}

// ConversationStats are the figures of the conversation cache.
type ConversationStats struct {
	Kept      int   // conversations kept besides the session's
	Bytes     int64 // cache bytes they hold
	Restores  int   // requests served by restoring a kept conversation
	Evictions int   // conversations dropped for the budget
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
	set        Settings
	committed  []int
	pending    int
	contOK     bool
	prevPrompt string
	unfed      []int
	turn       int
	cache      *CacheState // nil: nothing cached
	used       uint64
}

func (c *convState) bytes() int64 {
	n := int64(8 * len(c.committed))
	if c.cache != nil {
		n += c.cache.Bytes()
	}
	return n
}

// capture copies the session's conversation and cache.
func (s *Session) capture() (*convState, error) {
	c := &convState{msgs: slices.Clone(s.msgs), set: s.set, committed: slices.Clone(s.committed), pending: s.pending,
		contOK: s.contOK, prevPrompt: s.prevPrompt, unfed: slices.Clone(s.unfed), turn: s.turn}
	if len(s.committed) > 0 {
		cache, err := s.chain.Snapshot()
		if err != nil {
			return nil, err
		}
		c.cache = cache
	}
	return c, nil
}

// restoreState puts a captured conversation back into the session.
func (s *Session) restoreState(c *convState) error {
	if c.cache == nil {
		if err := s.chain.Reset(); err != nil {
			return err
		}
	} else if err := s.chain.Restore(c.cache); err != nil {
		return err
	}
	if err := s.SetSettings(c.set); err != nil {
		return err
	}
	s.msgs, s.committed, s.pending = slices.Clone(c.msgs), slices.Clone(c.committed), c.pending
	s.contOK, s.prevPrompt, s.unfed, s.turn = c.contOK, c.prevPrompt, slices.Clone(c.unfed), c.turn
	return nil
}

// reuse is how many prompt tokens a conversation would serve from its
// cache: all it holds when the request continues it exactly, else the
// common prefix with the request's fresh encoding.
func (c *convState) reuse(req Request, ids []int) int {
	history := req.Messages[:len(req.Messages)-1]
	if c.contOK && c.set.System == req.Settings.System && c.set.Thinking == req.Settings.Thinking && slices.Equal(c.msgs, history) {
		return len(c.committed)
	}
	return commonPrefix(ids, c.committed)
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
func (cs *conversations) switchTo(s *Session, req Request, ids []int) error {
	if !cs.foreign {
		home, err := s.capture()
		if err != nil {
			return err
		}
		cs.home, cs.foreign, cs.from = home, true, nil
	}
	live := &convState{msgs: s.msgs, set: s.set, committed: s.committed, contOK: s.contOK}
	best, bestN := (*convState)(nil), live.reuse(req, ids)
	for _, c := range append(slices.Clone(cs.kept), cs.home) {
		if n := c.reuse(req, ids); n > bestN {
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
		return err
	}
	cs.clock++
	best.used = cs.clock
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
	if f := cs.from; f != nil && slices.Equal(f.committed, s.committed) && slices.Equal(f.msgs, s.msgs) && f.pending == s.pending {
		return nil
	}
	if h := cs.home; h != nil && slices.Equal(h.committed, s.committed) && slices.Equal(h.msgs, s.msgs) && h.pending == s.pending {
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
	cs.kept = slices.DeleteFunc(cs.kept, func(k *convState) bool {
		return len(k.committed) <= len(c.committed) && slices.Equal(k.committed, c.committed[:len(k.committed)])
	})
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
		total -= cs.kept[0].bytes()
		if cs.kept[0] == cs.from {
			cs.from = nil
		}
		cs.kept = cs.kept[1:]
		cs.mu.Lock()
		cs.stats.Evictions++
		cs.mu.Unlock()
	}
	cs.mu.Lock()
	cs.stats.Kept, cs.stats.Bytes = len(cs.kept), total
	cs.mu.Unlock()
}

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

// view returns the chat's conversation and settings wherever they are.
func (cs *conversations) view(s *Session) ([]Message, Settings) {
	if cs.foreign {
		return slices.Clone(cs.home.msgs), cs.home.set
	}
	return s.Messages(), s.Settings()
}

func (cs *conversations) statsCopy() ConversationStats {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.stats
}

// chatOps are the commands that act on the chat's conversation; the rest
// (the store's list, delete, rename; marks) run wherever the session is.
func chatOp(op string) bool {
	switch op {
	case "list", "delete", "rename", "mark", "keep", "store":
		return false
	}
	return true
}
