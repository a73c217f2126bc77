package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/media"
)

// The cost before you send: the rule above the input says what the
// message will take of the context (its text, the turn's markup, each
// file's soft tokens) and what it leaves for the reply, as the user
// types. Pricing runs in a tea.Cmd, never in Update: in-process the
// engine's Estimator counts incrementally (a key on a 50 KB message
// costs a fraction of a millisecond); over a server each price is a
// round trip, asked after a pause in the typing.

// coster prices a message against the conversation: server.Client asks
// its server; an in-process engine's Estimator is wrapped.
type coster interface {
	Cost(text string, media ...engine.MediaCost) (engine.Cost, error)
}

type estimatorCoster struct{ x *engine.Estimator }

func (e estimatorCoster) Cost(text string, m ...engine.MediaCost) (engine.Cost, error) {
	return e.x.Cost(text, m...), nil
}

// costerOf finds how eng prices a message; nil: it cannot, and the
// input shows no cost.
func costerOf(eng Engine) coster {
	if c, ok := eng.(coster); ok {
		return c
	}
	if s, ok := eng.(interface {
		Estimator() (*engine.Estimator, error)
	}); ok {
		if x, err := s.Estimator(); err == nil {
			return estimatorCoster{x}
		}
	}
	return nil
}

// costPause is how long the typing must pause before a screen over a
// server asks for a price.
const costPause = 150 * time.Millisecond

// pictureTokens is a picture's soft tokens before this bundle encoded
// one: the published vision encoder's 16×16 grid. Once a picture is in
// the conversation its own count is used.
const pictureTokens = 256

// costState is the price of the message being written.
type costState struct {
	src    coster
	remote bool
	seq    int    // bumped by every change of the message or its files
	key    string // what seq priced
	cost   engine.Cost
	have   bool
	guess  bool           // a picture's tokens are foretold, not known
	clips  map[string]int // a clip's soft tokens by path, once decoded
}

type (
	costTickMsg struct{ seq int }
	costMsg     struct {
		seq   int
		cost  engine.Cost
		err   error
		clips map[string]int
		guess bool
	}
)

// priceCmd prices the message when it changed since it was priced.
func (m *Model) priceCmd() tea.Cmd {
	if m.cost.src == nil {
		return nil
	}
	v := m.input.Value()
	var key strings.Builder
	key.WriteString(v)
	for _, f := range m.attached {
		key.WriteString("\x00" + f.Path)
	}
	// What it is priced against: the conversation and the reply reserve.
	set := m.turn.settings
	fmt.Fprintf(&key, "\x00%d\x00%d\x00%s", m.conv.Changes(), set.MaxTokens, set.ContextPolicy)
	if key.Len() == len(m.cost.key) && key.String() == m.cost.key {
		return nil
	}
	m.cost.key = key.String()
	m.cost.seq++
	if strings.TrimSpace(v) == "" && len(m.attached) == 0 || strings.HasPrefix(strings.TrimSpace(v), "/") {
		m.cost.have = false // nothing to price, or a command
		m.input.SetNote("")
		return nil
	}
	if m.cost.remote {
		seq := m.cost.seq
		return tea.Tick(costPause, func(time.Time) tea.Msg { return costTickMsg{seq} })
	}
	return m.costCmd()
}

// costCmd prices the message now, off Update.
func (m *Model) costCmd() tea.Cmd {
	seq, src, text := m.cost.seq, m.cost.src, m.input.Text()
	files := append([]engine.MediaFile(nil), m.attached...)
	known := m.cost.clips
	pic, guess := m.pictureCost()
	return func() tea.Msg {
		var costs []engine.MediaCost
		clips := map[string]int{}
		for _, f := range files {
			mc := engine.MediaCost{Name: filepath.Base(f.Path), Kind: f.Kind, Tokens: pic}
			if f.Kind == engine.MediaAudio {
				n, ok := known[f.Path]
				if !ok {
					n = clipTokens(f.Path)
					clips[f.Path] = n
				}
				mc.Tokens = n
			}
			costs = append(costs, mc)
		}
		c, err := src.Cost(text, costs...)
		return costMsg{seq: seq, cost: c, err: err, clips: clips, guess: guess && hasKind(files, engine.MediaImage)}
	}
}

func hasKind(files []engine.MediaFile, kind string) bool {
	for _, f := range files {
		if f.Kind == kind {
			return true
		}
	}
	return false
}

// clipTokens is a clip's soft tokens as the engine will lay it out: its
// 30 s segments' rows. 0 when it cannot be read (sending says why).
func clipTokens(path string) int {
	a, err := media.LoadAudio(path, media.DefaultOptions())
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range a.Split() {
		n += media.SoftTokens(len(s.Samples))
	}
	return n
}

// pictureCost is a picture's soft tokens: the last one encoded in this
// conversation, else foretold (guess).
func (m *Model) pictureCost() (tokens int, guess bool) {
	for i := m.conv.Len() - 1; i >= 0; i-- {
		for _, a := range m.conv.Attachments(i) {
			if a.Kind == engine.MediaImage && a.Tokens() > 0 {
				return a.Tokens(), false
			}
		}
	}
	return pictureTokens, true
}

// onCost takes a price in: the newest only.
func (m *Model) onCost(msg costMsg) {
	for p, n := range msg.clips {
		if m.cost.clips == nil {
			m.cost.clips = map[string]int{}
		}
		m.cost.clips[p] = n
	}
	if msg.seq != m.cost.seq {
		return
	}
	// A price refused (a text too long for the server to count, the
	// link down) shows none: sending says why.
	m.cost.cost, m.cost.have, m.cost.guess = msg.cost, msg.err == nil, msg.guess
	m.input.SetNote(m.costNote())
	if m.cost.have && !m.cost.cost.Fits && !m.ctx.have {
		// Whether it could fit alone needs the system prompt's share.
		m.call(engine.OpContext, func(e Engine) error { return e.ContextView() })
	}
}

// costNote is the price as the rule above the input says it.
func (m *Model) costNote() string {
	if !m.cost.have {
		return ""
	}
	c := m.cost.cost
	parts := []string{fmt.Sprintf("text %s", commas(c.Text)), fmt.Sprintf("template %s", commas(c.Template))}
	for _, f := range c.Media {
		parts = append(parts, fmt.Sprintf("%s %s", f.Name, commas(f.Tokens)))
	}
	approx := ""
	if m.cost.guess {
		approx = "≈"
	}
	s := fmt.Sprintf("%s%s tokens (%s) · %s left for the reply", approx, commas(c.Total), strings.Join(parts, " + "), commas(max(c.Left, 0)))
	if !c.Fits {
		s = "⚠ " + s + " · " + m.overflowWord()
	}
	return s
}

// overflowWord says what sending a message that does not fit will do.
func (m *Model) overflowWord() string {
	c := m.cost.cost
	switch {
	case m.cannotFitAlone():
		return "too long even alone"
	case m.turn.settings.ContextPolicy == engine.ContextCompact:
		return "sending compacts first"
	case m.turn.settings.ContextPolicy == engine.ContextDropOldest:
		return "sending drops the oldest turns"
	}
	return fmt.Sprintf("needs %s more: enter asks what to do", commas(c.Reserve-c.Left))
}

// cannotFitAlone: with the system prompt alone before it, the message
// and the reply reserve still overflow the context.
func (m *Model) cannotFitAlone() bool {
	c := m.cost.cost
	return c.Total+c.Reserve+m.ctx.view.System > c.Context
}

// checkFits is asked before a message is sent: when its price says it
// cannot fit with the reply reserve and the policy will not make room,
// it asks what to do with the choices that apply, and the message stays
// in the input. It reports whether the message may go.
func (m *Model) checkFits() (tea.Cmd, bool) {
	if !m.cost.have || m.cost.cost.Fits {
		return nil, true
	}
	alone := m.cannotFitAlone()
	if !alone && m.turn.settings.ContextPolicy != engine.ContextStop {
		return nil, true // the policy makes room
	}
	c := m.cost.cost
	var opts []choice
	if !alone {
		opts = append(opts,
			choice{"c", "compact first", func(m *Model) tea.Cmd { return m.cmdCompact("") }},
			choice{"d", "drop the oldest turns (policy drop-oldest) and send", func(m *Model) tea.Cmd {
				policy := m.setPolicy(engine.ContextDropOldest)
				m.cost.have = false // the policy now makes room: send it
				return tea.Batch(policy, m.submit())
			}})
	}
	if big := m.largestAttached(); big >= 0 {
		name := filepath.Base(m.attached[big].Path)
		opts = append(opts, choice{"x", "detach " + name, func(m *Model) tea.Cmd { return m.cmdDetach(quoteName(name)) }})
	}
	if !alone {
		opts = append(opts, choice{"n", "start over (/new)", func(m *Model) tea.Cmd { return m.cmdNew("") }})
	}
	if len(opts) == 0 {
		// Nothing would make room: it is refused here as the engine would
		// refuse it (kept in the input, not as a draft; esc clears it).
		m.refused = m.input.Value()
		return m.errorToast(fmt.Sprintf("The message was not sent: it takes %s tokens, and with the reply's %s it cannot fit the %s-token context even alone. Shorten it.",
			commas(c.Total), commas(c.Reserve), commas(c.Context))), false
	}
	prompt := fmt.Sprintf("This message takes %s tokens and leaves %s for the reply, which needs %s.", commas(c.Total), commas(max(c.Left, 0)), commas(c.Reserve))
	if alone {
		prompt = fmt.Sprintf("This message takes %s tokens: with the reply's %s it cannot fit the %s-token context even alone.", commas(c.Total), commas(c.Reserve), commas(c.Context))
	}
	m.askChoice(prompt, opts)
	return nil, false
}

// largestAttached is the queued file with the most soft tokens, -1 none.
func (m *Model) largestAttached() int {
	best, most := -1, -1
	for i, f := range m.attached {
		for _, c := range m.cost.cost.Media {
			if c.Name == filepath.Base(f.Path) && c.Tokens > most {
				best, most = i, c.Tokens
			}
		}
	}
	return best
}
