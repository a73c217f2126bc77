package engine

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/orchard-llm/orchard/tokenizer"
)

// ContextView is the window as the model sees it, in tokens: what a
// /context bar draws. Parts are in prompt order: the pinned messages
// before the window, the summary, then the window's messages.
type ContextView struct {
	Context int           // positions the bundle holds
	Policy  ContextPolicy // what happens when a message does not fit
	Reserve int           // kept for the reply under compact (max_tokens, else a quarter)
	System  int           // the prompt's start: BOS and the system prompt's turn
	Parts   []ContextPart
	Used    int // all of it, the opening of the model's turn included
	Free    int // Context − Used
	Cached  int // of Used, the tokens the cache holds now
	Window  int // the first message of the conversation seen verbatim
	// Summary is the summary in force ("" none), Edited when the user
	// wrote it; Summaries counts the earlier ones (kept, not seen).
	Summary   string
	Edited    bool
	Summaries int
	Pinned    []int
	Sliding   SlidingView
}

// ContextPart is one message the model sees (or the summary).
type ContextPart struct {
	Kind   string // "pinned", "summary" or "message"
	Index  int    // the message's index in the conversation; −1 the summary
	Role   string
	Start  int // the position of its first token
	Tokens int // all its tokens: markup, text and soft tokens
	Media  []MediaCost
}

// MediaCost is one picture or clip of a message and its soft tokens (0
// when elided: the model sees Line instead).
type MediaCost struct {
	Name, Kind string
	Tokens     int
	Elided     bool
	Line       string
}

// SlidingView is what the sliding-window layers still see. They attend to
// the last Window positions only; on stateful3 (Ring) the cache keeps no
// more for them, so what is older is gone for those layers even where the
// full-attention layers still see it.
type SlidingView struct {
	Window int  // the sliding window (512 on the published bundles); 0 unknown
	Ring   bool // the cache is a ring of Window slots (stateful3)
	From   int  // the first position the sliding layers see at the next token
	Part   int  // index in Parts of the part holding From (−1: the system prompt)
}

// ContextView measures the window now.
func (s *Session) ContextView() (ContextView, error) {
	v := ContextView{Context: s.caps.Context, Policy: s.set.ContextPolicy, Reserve: s.replyReserve(), Window: s.window}
	if c := s.cstate; c != nil {
		v.Summary, v.Edited, v.Summaries, v.Pinned = c.Summary, c.Edited, len(c.Earlier), slices.Clone(c.Pinned)
	}
	// Which message each seen one is.
	type origin struct {
		kind  string
		index int
	}
	var from []origin
	if c := s.cstate; c != nil {
		for _, i := range c.Pinned {
			if i < s.window {
				from = append(from, origin{"pinned", i})
			}
		}
		if c.Summary != "" {
			from = append(from, origin{"summary", -1})
		}
	}
	for i := s.window; i < len(s.msgs); i++ {
		from = append(from, origin{"message", i})
	}
	seen := s.seen(s.msgs, s.window)
	full, err := s.nextPromptIDs()
	if err != nil {
		return v, err
	}
	v.Used, v.Free = len(full), s.caps.Context-len(full)
	v.Cached = min(commonPrefix(full, s.committed), s.chain.Position())
	// Each part's tokens: the growth of the prompt's prefixes.
	start, err := s.windowIDs(nil)
	if err != nil {
		return v, err
	}
	v.System = len(start)
	prev := len(start)
	for k := range seen {
		n, err := s.windowIDs(seen[:k+1])
		if err != nil {
			return v, err
		}
		p := ContextPart{Kind: from[k].kind, Index: from[k].index, Role: seen[k].Role, Start: prev, Tokens: len(n) - prev}
		prev = len(n)
		if i := p.Index; i >= 0 {
			for a, att := range s.msgs[i].Attachments {
				mc := MediaCost{Name: att.Name, Kind: att.Kind, Tokens: att.Tokens()}
				if c := s.cstate; c != nil {
					for _, e := range c.Elided {
						if e.Message == i && e.Attachment == a {
							mc.Tokens, mc.Elided, mc.Line = 0, true, e.Line
						}
					}
				}
				p.Media = append(p.Media, mc)
			}
		}
		v.Parts = append(v.Parts, p)
	}
	// A reply continued as generated can take other tokens than its text
	// encoded afresh: the difference is the last reply's.
	if k := len(v.Parts) - 1; k >= 0 {
		v.Parts[k].Tokens += v.Used - prev
	}
	v.Sliding = SlidingView{Window: s.b.Geometry.SlidingWindow, Ring: s.b.Family == "stateful3", Part: -1}
	if w := v.Sliding.Window; w > 0 {
		v.Sliding.From = max(0, v.Used-w)
		for i, p := range v.Parts {
			if p.Start <= v.Sliding.From {
				v.Sliding.Part = i
			}
		}
	}
	return v, nil
}

// windowIDs is the prompt of seen as a next turn begins it, encoded
// afresh (windowFrom).
func (s *Session) windowIDs(seen []Message) ([]int, error) { return s.windowFrom(seen, noTail) }

// nextPromptIDs is the prompt a next turn begins with: the conversation
// the model sees, continued from the cached reply's ids where the turn
// would (Session.encode).
func (s *Session) nextPromptIDs() ([]int, error) {
	return s.windowFrom(s.seen(s.msgs, s.window), s.tail())
}

// windowFrom is the prompt of seen with an empty user message, less that
// message's markup (which a template may lay out around the system prompt
// too, so only an empty turn's own count is taken off the end): any
// template renders it, even one that needs a user message last.
func (s *Session) windowFrom(seen []Message, from tailState) ([]int, error) {
	ids, _, err := s.encode(append(slices.Clone(seen), Message{Role: "user"}), from, false)
	if err != nil {
		return nil, err
	}
	turn, err := s.userTurnTokens()
	if err != nil {
		return nil, err
	}
	return ids[:max(len(ids)-turn, 0)], nil
}

// userTurnTokens is an empty user message's markup (with the opening of
// the model's turn after it).
func (s *Session) userTurnTokens() (int, error) {
	ids, err := s.tmpl.Encode(tokenizer.Conversation{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser}}})
	if err != nil {
		return 0, err
	}
	n := len(ids)
	if bos, ok := s.tok.BOS(); ok && n > 0 && ids[0] == bos {
		n--
	}
	return n, nil
}

// Cost is what a message would cost before it is sent, and what it would
// leave for the reply.
type Cost struct {
	Text     int         // the text's tokens
	Template int         // the turn's markup around it (and each span's)
	Media    []MediaCost // each picture's or clip's soft tokens
	Total    int         // all of the message
	Used     int         // the conversation before it (the window as seen)
	Context  int
	Left     int  // for the reply: Context − Used − Total
	Reserve  int  // what the policy keeps for the reply
	Fits     bool // Left ≥ Reserve (else, under compact, sending compacts first)
}

// Estimator prices a message as the user types it: safe on any goroutine,
// and incremental (tokenizer.Counter), so a 50 KB input costs a fraction
// of a millisecond per key. Engine.Estimator makes one; Used follows the
// engine's conversation.
type Estimator struct {
	tmpl    *tokenizer.Template
	counter *tokenizer.Counter
	ctx     int
	used    *atomic.Int64
	reserve *atomic.Int64

	mu       sync.Mutex
	overhead int            // a user turn's markup around its text
	trims    bool           // the template trims the text's spaces
	spans    map[[2]int]int // (kind, rows) → the span's tokens besides its rows
}

// newEstimator prices messages for this session's template; used and
// reserve give the conversation's figures when Cost asks.
func (s *Session) newEstimator(used, reserve *atomic.Int64) (*Estimator, error) {
	x := &Estimator{tmpl: s.tmpl, counter: s.tok.NewCounter(), ctx: s.caps.Context, used: used, reserve: reserve,
		spans: map[[2]int]int{}}
	turn, err := s.userTurnTokens()
	if err != nil {
		return nil, err
	}
	x.overhead = turn
	// Gemma 4's template trims a message's text, a manifest's does not.
	user := func(text string) int {
		ids, _ := s.tmpl.Encode(tokenizer.Conversation{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: text}}})
		return len(ids)
	}
	x.trims = user("x") == user(" x \n")
	return x, nil
}

// Cost prices a message of text with media (their soft tokens as
// encoded, or as media.SoftTokens and the vision grid foretell).
func (x *Estimator) Cost(text string, media ...MediaCost) Cost {
	if x.trims {
		text = strings.TrimSpace(text)
	}
	c := Cost{Text: x.counter.Count(text), Template: x.overhead, Context: x.ctx,
		Used: int(x.used.Load()), Reserve: int(x.reserve.Load())}
	for _, m := range media {
		c.Template += x.spanMarkup(m, text != "")
		c.Media = append(c.Media, m)
		c.Total += m.Tokens
	}
	c.Total += c.Text + c.Template
	c.Left = c.Context - c.Used - c.Total
	c.Fits = c.Left >= c.Reserve
	return c
}

// spanMarkup is the tokens a media span adds besides its rows (its
// opening and closing tokens, the line breaks around them).
func (x *Estimator) spanMarkup(m MediaCost, text bool) int {
	kinds := map[string]int{MediaImage: 1, MediaAudio: 2}
	k, ok := kinds[m.Kind]
	if !ok || m.Tokens <= 0 {
		return 0
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	content := ""
	if text {
		content, k = "x", k+2 // a separator may stand between the files and the text
	}
	key := [2]int{k, m.Tokens}
	if n, ok := x.spans[key]; ok {
		return n
	}
	msg := func(media []tokenizer.Media) int {
		ids, err := x.tmpl.Encode(tokenizer.Conversation{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: content, Media: media}}})
		if err != nil {
			return 0
		}
		return len(ids)
	}
	n := msg([]tokenizer.Media{{Kind: tokenizer.MediaKind(m.Kind), Rows: m.Tokens}}) - msg(nil) - m.Tokens
	x.spans[key] = max(n, 0)
	return x.spans[key]
}

// contextFigures are the conversation's figures an Estimator reads from
// any goroutine, kept by the engine goroutine after each command.
type contextFigures struct {
	used, reserve atomic.Int64
	measured      bool
	gen           uint64 // the conversation's, and the system prompt, when used was measured
	system        string
	thinking      bool
	once          sync.Once
	est           *Estimator
	err           error
}

// update measures the chat's window (not a request's conversation).
func (f *contextFigures) update(s *Session) {
	f.reserve.Store(int64(s.replyReserve()))
	if f.measured && f.gen == s.gen && f.system == s.set.System && f.thinking == s.set.Thinking {
		return
	}
	f.measured, f.gen, f.system, f.thinking = true, s.gen, s.set.System, s.set.Thinking
	if ids, err := s.nextPromptIDs(); err == nil {
		f.used.Store(int64(len(ids)))
	}
}
