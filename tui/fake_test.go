package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/orchard-llm/orchard/engine"
	mediapkg "github.com/orchard-llm/orchard/media"
)

// FakeOptions configure a FakeEngine.
type FakeOptions struct {
	Info     engine.ModelInfo // zero: a small r1 demo bundle
	Settings engine.Settings  // zero: engine.DefaultSettings()
	Messages []engine.Message // the conversation at start
	// TokenDelay paces the reply; 0 streams as fast as the consumer reads.
	TokenDelay time.Duration
	// Reply writes the reply to a message; nil uses built-in markdown.
	Reply func(prompt string, turn int, s engine.Settings) string
	// Now stamps checkpoints; nil uses time.Now.
	Now func() time.Time
}

// FakeEngine implements Engine with scripted replies, synthetic metrics
// and an in-memory checkpoint store, for the tests that drive the chat
// screen.
type FakeEngine struct {
	opts   FakeOptions
	events chan engine.Event
	quit   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	info     engine.ModelInfo
	settings engine.Settings
	msgs     []engine.Message
	ckpts    map[string]fakeCheckpoint
	versions map[int]*fakeVersions
	history  []*fakeHistory // newest first
	histID   string         // the conversation's entry in history, "" until kept
	changed  int            // changes since it was last kept; 0: unchanged
	histSeq  int
	cancel   chan struct{} // non-nil while a turn runs
	calls    []string
	closed   bool
	ctx      fakeContext // what the model sees besides the window (fake_context_test.go)
}

type fakeCheckpoint struct {
	Info     engine.CheckpointInfo
	Messages []engine.Message
	Settings engine.Settings // the settings saved with it; zero for none
}

// autosaveName is the reserved checkpoint name of the fake's autosave.
const autosaveName = "autosave"

// NewFakeEngine starts a fake engine.
func NewFakeEngine(o FakeOptions) *FakeEngine {
	if o.Info.Name == "" {
		o.Info = engine.ModelInfo{Name: "demo-r1-small", Family: "r1", ComputeUnits: "CPU", Context: 2048,
			VerifyWidths: []int{4}, Runtime: "reference", Media: []string{engine.MediaImage, engine.MediaAudio}}
	}
	if o.Settings == (engine.Settings{}) {
		o.Settings = engine.DefaultSettings()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	f := &FakeEngine{
		opts:     o,
		events:   make(chan engine.Event, 4096),
		quit:     make(chan struct{}),
		info:     o.Info,
		settings: o.Settings,
		msgs:     slices.Clone(o.Messages),
		ckpts:    map[string]fakeCheckpoint{},
		versions: map[int]*fakeVersions{},
	}
	return f
}

func (f *FakeEngine) record(call string) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
}

// Calls returns the methods called so far, with their arguments.
func (f *FakeEngine) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *FakeEngine) emit(ev engine.Event) {
	select {
	case f.events <- ev:
	case <-f.quit:
	}
}

func (f *FakeEngine) Events() <-chan engine.Event { return f.events }
func (f *FakeEngine) Info() engine.ModelInfo      { return f.info }

func (f *FakeEngine) Settings() engine.Settings {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.settings
}

func (f *FakeEngine) Messages() []engine.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.messagesLocked()
}

// Window is 0: the fake never moves the model's view on.
func (f *FakeEngine) Window() int { return 0 }

// Send streams a reply on a goroutine.
func (f *FakeEngine) Send(text string, media ...engine.MediaFile) error {
	rec := "Send " + text
	for _, m := range media {
		rec += " +" + m.Kind + ":" + m.Path
	}
	f.record(rec)
	// As the engine, a file that does not decode refuses the message,
	// naming the file (a FileError).
	for _, m := range media {
		load := func(p string) error { _, err := mediapkg.LoadImage(p, mediapkg.DefaultOptions()); return err }
		if m.Kind == engine.MediaAudio {
			load = func(p string) error { _, err := mediapkg.LoadAudio(p, mediapkg.DefaultOptions()); return err }
		}
		if err := load(m.Path); err != nil {
			f.emit(engine.Failed{Op: "send", Err: &engine.FileError{Path: m.Path, Err: err}})
			return nil
		}
	}
	f.turn("send", func() (engine.Message, *engine.Branched, error) {
		user := engine.Message{Role: "user", Content: text}
		for _, m := range media {
			a := engine.Attachment{Kind: m.Kind, Name: filepath.Base(m.Path), Path: m.Path, SHA256: "fake", Spans: []int{16}}
			if st, err := os.Stat(m.Path); err == nil {
				a.Bytes = st.Size()
			}
			if m.Kind == engine.MediaAudio {
				a.Seconds = 1
			}
			user.Attachments = append(user.Attachments, a)
		}
		return user, nil, nil
	})
	return nil
}

// Regenerate replies to the last user message again; the old reply
// stays as another version.
func (f *FakeEngine) Regenerate() error {
	f.record("Regenerate")
	f.turn("regenerate", func() (engine.Message, *engine.Branched, error) {
		u := lastUser(f.msgs)
		if u < 0 { // after a tool loop, the whole model turn is regenerated
			return engine.Message{}, nil, errors.New("there is no reply to regenerate yet")
		}
		msg := f.msgs[u]
		msg.Version, msg.Versions = 0, 0
		if u+1 < len(f.msgs) {
			f.newVersion(u + 1)
		}
		f.msgs = f.msgs[:u]
		return msg, &engine.Branched{Op: "regenerate", Messages: append(f.messagesLocked(), f.shown(u, msg))}, nil
	})
	return nil
}

// Edit replaces the last user message; the old one stays as another
// version, with its reply.
func (f *FakeEngine) Edit(text string) error {
	f.record("Edit " + text)
	f.turn("edit", func() (engine.Message, *engine.Branched, error) {
		u := lastUser(f.msgs)
		if u < 0 {
			return engine.Message{}, nil, errors.New("there is no message to edit yet")
		}
		f.newVersion(u)
		msg := engine.Message{Role: "user", Content: text}
		return msg, &engine.Branched{Op: "edit", Messages: append(f.messagesLocked(), f.shown(u, msg))}, nil
	})
	return nil
}

// SelectVersion swaps in another version of a message.
func (f *FakeEngine) SelectVersion(index, version int) error {
	f.record(fmt.Sprintf("SelectVersion %d %d", index, version))
	f.mu.Lock()
	v := f.versions[index]
	if v == nil || version < 0 || version >= len(v.tails) || index >= len(f.msgs) || f.cancel != nil {
		f.mu.Unlock()
		f.emit(engine.Failed{Op: "version", Err: fmt.Errorf("message %d has no version %d", index+1, version+1)})
		return nil
	}
	if version != v.cur {
		v.tails[v.cur] = slices.Clone(f.msgs[index:])
		f.msgs = append(f.msgs[:index:index], v.tails[version]...)
		v.tails[version], v.cur = nil, version
	}
	br := engine.Branched{Op: "version", Messages: f.messagesLocked(), ContextUsed: countTokens(f.msgs)}
	f.mu.Unlock()
	f.emit(br)
	return nil
}

// fakeVersions are the versions of one message: the message and what
// followed it, for each but the current one (nil).
type fakeVersions struct {
	cur   int
	tails [][]engine.Message
}

// newVersion keeps msgs[i:] as a version and makes room for a new one;
// f.msgs is cut to i. The lock is held.
func (f *FakeEngine) newVersion(i int) {
	v := f.versions[i]
	if v == nil {
		v = &fakeVersions{tails: [][]engine.Message{nil}}
		f.versions[i] = v
	}
	v.tails[v.cur] = slices.Clone(f.msgs[i:])
	v.tails = append(v.tails, nil)
	v.cur = len(v.tails) - 1
	for k := range f.versions {
		if k > i {
			delete(f.versions, k)
		}
	}
	f.msgs = f.msgs[:i]
}

func (f *FakeEngine) shown(i int, m engine.Message) engine.Message {
	if v := f.versions[i]; v != nil && len(v.tails) > 1 {
		m.Version, m.Versions = v.cur, len(v.tails)
	}
	return m
}

// messagesLocked is the conversation with its version counts.
func (f *FakeEngine) messagesLocked() []engine.Message {
	out := slices.Clone(f.msgs)
	for i := range out {
		out[i] = f.shown(i, out[i])
	}
	return out
}

func lastUser(msgs []engine.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return i
		}
	}
	return -1
}

// turn starts a streamed reply; prepare (under the lock) arranges the
// conversation and returns the user message to reply to and the
// Branched event to send first, if any.
func (f *FakeEngine) turn(op engine.Op, prepare func() (engine.Message, *engine.Branched, error)) {
	f.mu.Lock()
	if f.cancel != nil || f.closed {
		f.mu.Unlock()
		f.emit(engine.Failed{Op: op, Err: errors.New("a reply is already being generated; wait or press esc")})
		return
	}
	u, br, err := prepare()
	if err != nil {
		f.mu.Unlock()
		f.emit(engine.Failed{Op: op, Err: err})
		return
	}
	f.changed++
	prevTokens := countTokens(f.msgs)
	f.msgs = append(f.msgs, u)
	turn := len(f.msgs) - 1
	versions := 0
	if v := f.versions[turn+1]; v != nil {
		versions = len(v.tails)
	}
	set := f.settings
	reply := f.reply(u.Content, turn, set)
	cancel := make(chan struct{})
	f.cancel = cancel
	prompt := countTokens(f.msgs) + 4
	f.mu.Unlock()

	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if br != nil {
			br.ContextUsed = prevTokens
			f.emit(*br)
		}
		f.stream(turn, reply, prompt, prevTokens, set, cancel, versions, u.Attachments)
	}()
}

func (f *FakeEngine) reply(prompt string, turn int, s engine.Settings) string {
	if f.opts.Reply != nil {
		return f.opts.Reply(prompt, turn, s)
	}
	return demoReply(prompt, turn, s)
}

// stream emits the turn: prefill progress, deltas in verify-round
// groups (drafted tokens then the model's own), and the end.
func (f *FakeEngine) stream(turn int, reply string, prompt, reused int, set engine.Settings, cancel chan struct{}, versions int, atts []engine.Attachment) {
	f.emit(engine.Started{Turn: turn, PromptTokens: prompt, ReusedTokens: reused, Versions: versions, Attachments: atts})
	f.emit(engine.PrefillProgress{Done: (prompt - reused) / 2, Total: prompt - reused})
	f.emit(engine.PrefillProgress{Done: prompt - reused, Total: prompt - reused})

	toks := splitTokens(reply)
	spec := len(f.info.VerifyWidths) > 0 && set.Speculation != engine.SpecModeOff
	state := engine.SpecOff
	if spec {
		state = engine.SpecOn
		if set.Speculation == engine.SpecModeAuto {
			state = engine.SpecAdaptive
		}
	}
	var (
		done       strings.Builder
		perToken   []float64
		drafted    int
		accepted   int
		rounds     int
		draftRound int
	)
	finish := func(reason string) engine.TurnMetrics {
		m := fakeMetrics(prompt, reused, perToken, reason, f.info.Context)
		m.Spec = engine.SpecStats{Enabled: spec, State: state, Rounds: rounds, Drafted: drafted, Accepted: accepted,
			FallbackRounds: rounds - draftRound}
		if drafted > 0 {
			m.Spec.AcceptanceRate = float64(accepted) / float64(drafted)
			m.Spec.PLDRate = m.Spec.AcceptanceRate * 0.9
		}
		if draftRound > 0 {
			m.Spec.MeanAccepted = float64(accepted) / float64(draftRound)
		}
		return m
	}
	for i := 0; i < len(toks); {
		// A round: with speculation, every other round commits two
		// accepted draft tokens and the model's own token.
		n := 1
		if spec && rounds%2 == 1 {
			n = 3
		}
		n = min(n, len(toks)-i)
		d := engine.Delta{}
		for j := range n {
			d.Text += toks[i+j]
			d.Tokens = append(d.Tokens, 1000+i+j)
			d.FromDraft = append(d.FromDraft, j < n-1)
			perToken = append(perToken, 18+float64((i+j)*7%11))
		}
		rounds++
		if n > 1 {
			draftRound++
			drafted += n + 1
			accepted += n
		}
		i += n
		done.WriteString(d.Text)
		rate := 0.0
		if drafted > 0 {
			rate = float64(accepted) / float64(drafted)
		}
		d.Live = engine.Live{Generated: i, DecodeTokPerS: 1000 / mean(perToken), LastTokenMs: perToken[len(perToken)-1],
			ContextUsed: prompt + i, ContextLimit: f.info.Context, SpecState: state, AcceptanceRate: rate}
		f.emit(&d)
		if f.opts.TokenDelay > 0 {
			select {
			case <-time.After(f.opts.TokenDelay * time.Duration(n)):
			case <-cancel:
			case <-f.quit:
				return
			}
		}
		select {
		case <-cancel:
			m := finish("cancelled")
			f.endTurn(done.String(), m, true)
			f.emit(engine.Cancelled{Partial: done.String(), Metrics: m})
			return
		default:
		}
	}
	m := finish("eos")
	f.endTurn(done.String(), m, false)
	f.emit(engine.Finished{Reply: done.String(), Metrics: m})
}

// endTurn adds the reply as the engine does: with its turn's figures,
// and marked stopped when the user stopped it.
func (f *FakeEngine) endTurn(reply string, m engine.TurnMetrics, stopped bool) {
	f.mu.Lock()
	f.changed++
	f.msgs = append(f.msgs, engine.Message{Role: "model", Content: reply, Interrupted: stopped, Stopped: stopped, Metrics: m.Kept()})
	f.cancel = nil
	f.mu.Unlock()
}

func (f *FakeEngine) Cancel() error {
	f.record("Cancel")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancel != nil {
		select {
		case <-f.cancel:
		default:
			close(f.cancel)
		}
	}
	return nil
}

// SetSettings judges s by the engine's own rules (engine.CheckSettings).
func (f *FakeEngine) SetSettings(s engine.Settings) error {
	f.record("SetSettings")
	f.mu.Lock()
	cur := f.settings
	f.mu.Unlock()
	s, err := engine.CheckSettings(f.info, cur, s)
	if err != nil {
		f.emit(engine.Failed{Op: "settings", Err: err})
		return nil
	}
	f.mu.Lock()
	f.settings = s
	f.mu.Unlock()
	f.emit(engine.SettingsChanged{Settings: s})
	return nil
}

func (f *FakeEngine) Clear() error {
	f.record("Clear")
	f.mu.Lock()
	kept := f.keepLocked()
	f.msgs, f.versions, f.histID = nil, map[int]*fakeVersions{}, ""
	f.ctx = fakeContext{}
	set := f.settings
	f.mu.Unlock()
	if kept != nil {
		f.emit(*kept)
	}
	f.emit(engine.Cleared{Settings: set})
	f.emit(f.historyList(""))
	return nil
}

func (f *FakeEngine) SaveCheckpoint(name string) error {
	f.record("SaveCheckpoint " + name)
	if err := f.save(name); err != nil {
		f.emit(engine.Failed{Op: "save", Err: err})
		return nil
	}
	f.emit(engine.Checkpoints{Op: "save", Name: name, List: f.list()})
	return nil
}

func (f *FakeEngine) save(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	f.mu.Lock()
	msgs := slices.Clone(f.msgs)
	cp := fakeCheckpoint{Messages: msgs, Settings: f.settings, Info: engine.CheckpointInfo{
		Name: name, Created: f.opts.Now(), Turns: len(msgs) / 2, Tokens: countTokens(msgs),
		Bytes: int64(countTokens(msgs)) * 36 * 1024, Bundle: f.info.Name, BundleID: "fake-" + f.info.Name, Compatible: true,
	}}
	f.ckpts[name] = cp
	f.mu.Unlock()
	return nil
}

func (f *FakeEngine) LoadCheckpoint(name string) error { f.restore("load", name); return nil }
func (f *FakeEngine) ForkCheckpoint(name string) error { f.restore("fork", name); return nil }

func (f *FakeEngine) restore(op engine.Op, name string) {
	f.record(string(op) + " " + name)
	f.mu.Lock()
	cp, ok := f.ckpts[name]
	busy := f.cancel != nil
	f.mu.Unlock()
	switch {
	case busy:
		f.emit(engine.Failed{Op: op, Err: errors.New("a reply is being generated; stop it with esc first")})
		return
	case !ok:
		f.emit(engine.Failed{Op: op, Err: fmt.Errorf("there is no checkpoint %q", name)})
		return
	case cp.Info.Bundle != f.info.Name:
		f.emit(engine.Failed{Op: op, Err: fmt.Errorf("checkpoint %q was made with %s, not %s; open that bundle to load it", name, cp.Info.Bundle, f.info.Name)})
		return
	}
	f.mu.Lock()
	f.keepLocked()
	f.msgs, f.versions, f.histID = slices.Clone(cp.Messages), map[int]*fakeVersions{}, ""
	if cp.Settings != (engine.Settings{}) {
		f.settings = cp.Settings // as the engine: a checkpoint restores its settings
	}
	set := f.settings
	f.mu.Unlock()
	f.emit(engine.Cleared{Messages: slices.Clone(cp.Messages), ContextUsed: countTokens(cp.Messages), Settings: set})
	f.emit(engine.Checkpoints{Op: op, Name: name, List: f.list()})
}

func (f *FakeEngine) DeleteCheckpoint(name string) error {
	f.record("DeleteCheckpoint " + name)
	f.mu.Lock()
	_, ok := f.ckpts[name]
	delete(f.ckpts, name)
	f.mu.Unlock()
	if !ok {
		f.emit(engine.Failed{Op: "delete", Err: fmt.Errorf("there is no checkpoint %q", name)})
		return nil
	}
	f.emit(engine.Checkpoints{Op: "delete", Name: name, List: f.list()})
	return nil
}

func (f *FakeEngine) RenameCheckpoint(old, new string) error {
	f.record("RenameCheckpoint " + old + " " + new)
	if err := checkName(new); err != nil {
		f.emit(engine.Failed{Op: "rename", Err: err})
		return nil
	}
	f.mu.Lock()
	cp, ok := f.ckpts[old]
	_, taken := f.ckpts[new]
	if ok && !taken {
		delete(f.ckpts, old)
		cp.Info.Name = new
		f.ckpts[new] = cp
	}
	f.mu.Unlock()
	switch {
	case !ok:
		f.emit(engine.Failed{Op: "rename", Err: fmt.Errorf("there is no checkpoint %q", old)})
		return nil
	case taken:
		f.emit(engine.Failed{Op: "rename", Err: fmt.Errorf("a checkpoint named %q already exists", new)})
		return nil
	}
	f.emit(engine.Checkpoints{Op: "rename", Name: new, List: f.list()})
	return nil
}

func (f *FakeEngine) ListCheckpoints() error {
	f.record("ListCheckpoints")
	f.emit(engine.Checkpoints{Op: "list", List: f.list()})
	return nil
}

// Autosave saves under the reserved name and reports it as op
// "autosave", which the interface does not announce.
func (f *FakeEngine) Autosave() error {
	f.record("Autosave")
	f.mu.Lock()
	f.keepLocked()
	f.mu.Unlock()
	if err := f.save(autosaveName); err != nil {
		f.emit(engine.Failed{Op: "autosave", Err: err})
		return nil
	}
	f.emit(engine.Checkpoints{Op: "autosave", Name: autosaveName, List: f.list()})
	return nil
}

// Close stops the streams and closes the event channel.
func (f *FakeEngine) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.mu.Unlock()
	close(f.quit)
	f.wg.Wait()
	close(f.events)
	return nil
}

func (f *FakeEngine) list() []engine.CheckpointInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]engine.CheckpointInfo, 0, len(f.ckpts))
	for _, cp := range f.ckpts {
		info := cp.Info
		info.Compatible = info.Bundle == f.info.Name
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// AddCheckpoint puts a checkpoint in the store as if saved earlier
// (tests use it for foreign-bundle checkpoints); set, if given, are the
// settings saved with it.
func (f *FakeEngine) AddCheckpoint(info engine.CheckpointInfo, msgs []engine.Message, set ...engine.Settings) {
	cp := fakeCheckpoint{Info: info, Messages: slices.Clone(msgs)}
	if len(set) > 0 {
		cp.Settings = set[0]
	}
	f.mu.Lock()
	f.ckpts[info.Name] = cp
	f.mu.Unlock()
}

func checkName(name string) error {
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%q cannot be a checkpoint name: use letters, digits, - and _", name)
	}
	return nil
}

// splitTokens cuts text into word-sized pieces, spaces attached to the
// word before, standing in for tokens.
func splitTokens(s string) []string {
	var toks []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\n' {
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\n') {
				j++
			}
			toks = append(toks, s[start:j])
			start = j
			i = j - 1
		}
	}
	if start < len(s) {
		toks = append(toks, s[start:])
	}
	return toks
}

func countTokens(msgs []engine.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(splitTokens(m.Content)) + 4
	}
	return n
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}

func fakeMetrics(prompt, reused int, perToken []float64, reason string, ctx int) engine.TurnMetrics {
	sorted := slices.Clone(perToken)
	slices.Sort(sorted)
	m := engine.TurnMetrics{
		PromptTokens: prompt, ReusedTokens: reused, GeneratedTokens: len(perToken), FinishReason: reason,
		TTFTSeconds: 0.05 + 0.0004*float64(prompt-reused), PrefillSeconds: 0.0004 * float64(prompt-reused),
		PerTokenMillis: perToken, ContextUsed: prompt + len(perToken), ContextLimit: ctx,
		Memory: engine.Memory{FootprintBytes: 412 << 20, FootprintPeakBytes: 431 << 20, ModelBytes: 1900 << 20,
			ModelPeakBytes: 1900 << 20, AvailableBytes: 9800 << 20, AvailableLowBytes: 9100 << 20},
	}
	if m.PrefillSeconds > 0 {
		m.PrefillTokPerSec = float64(prompt-reused) / m.PrefillSeconds
	}
	if len(sorted) > 0 {
		m.PerTokenMinMs, m.PerTokenMaxMs = sorted[0], sorted[len(sorted)-1]
		m.PerTokenMedianMs = sorted[len(sorted)/2]
		m.PerTokenMeanMs = mean(sorted)
		m.DecodeTokPerSec = 1000 / m.PerTokenMeanMs
	}
	return m
}

// demoReply is the built-in reply: markdown that exercises the
// renderer (a heading, a list, code, a table) and repeats part of the
// prompt, the kind of text prompt-lookup drafts well.
func demoReply(prompt string, turn int, s engine.Settings) string {
	var b strings.Builder
	if s.Thinking {
		fmt.Fprintf(&b, "%sthought\nThe user wrote %q. I will answer briefly and show some markdown.%s", thinkOpen, prompt, thinkClose)
	}
	switch turn / 2 % 3 {
	case 0:
		fmt.Fprintf(&b, "You asked: *%s*\n\nHere is what orchard shows while a reply streams:\n\n- live **tok/s** and per-token latency\n- draft acceptance for the turn and the session\n- the three memory ledgers\n\nThe weights of this demo are not a real model, so this reply is scripted.", prompt)
	case 1:
		fmt.Fprintf(&b, "## Code\n\nA small Go function:\n\n```go\nfunc greet(name string) string {\n\treturn \"hello, \" + name\n}\n```\n\nYou said %q, and that is repeated here: %s.", prompt, prompt)
	default:
		fmt.Fprintf(&b, "| figure | meaning |\n|---|---|\n| TTFT | time to the first token |\n| accepted | share of drafted tokens kept |\n\nThat answers %q.", prompt)
	}
	return b.String()
}

// fakeHistory is a conversation of the fake's history.
type fakeHistory struct {
	info  engine.HistoryInfo
	msgs  []engine.Message
	title string // its own title (RenameHistory), "" for its first message
}

// keepLocked puts the conversation into the history when it changed and
// returns the "kept" event to send, nil when it is not in the history.
// The lock is held.
func (f *FakeEngine) keepLocked() *engine.History {
	if len(f.msgs) == 0 {
		return nil
	}
	title := ""
	if u := slices.IndexFunc(f.msgs, func(m engine.Message) bool { return m.Role == "user" }); u >= 0 {
		title = strings.Join(strings.Fields(f.msgs[u].Content), " ")
	}
	if f.changed > 0 || f.histID == "" {
		if f.histID == "" {
			f.histSeq++
			f.histID = fmt.Sprintf("%s-%d", f.opts.Now().UTC().Format("20060102-150405"), f.histSeq)
		}
		own := ""
		if i := slices.IndexFunc(f.history, func(h *fakeHistory) bool { return h.info.ID == f.histID }); i >= 0 {
			own = f.history[i].title // a title of its own stays
		}
		f.history = slices.DeleteFunc(f.history, func(h *fakeHistory) bool { return h.info.ID == f.histID })
		h := &fakeHistory{title: own, msgs: slices.Clone(f.msgs), info: engine.HistoryInfo{ID: f.histID, Title: title,
			Updated: f.opts.Now(), Turns: countUser(f.msgs), Tokens: countTokens(f.msgs), Bytes: int64(countTokens(f.msgs)) * 36 * 1024,
			KV: true, Bundle: f.info.Name, Compatible: true}}
		f.history = append([]*fakeHistory{h}, f.history...)
		f.changed = 0
	}
	return &engine.History{Op: "kept", ID: f.histID, Title: title}
}

func countUser(msgs []engine.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "user" {
			n++
		}
	}
	return n
}

// historyList is the list event for query.
func (f *FakeEngine) historyList(query string) engine.History {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := engine.History{Op: "list", Query: query, List: []engine.HistoryInfo{}}
	q := strings.ToLower(strings.TrimSpace(query))
	// Titles are told apart over the whole list, as the engine's.
	all := make([]engine.HistoryInfo, len(f.history))
	for i, h := range f.history {
		all[i] = h.info
		if h.title != "" {
			all[i].Title = h.title
		}
	}
	engine.DistinctTitles(all)
	for i, h := range f.history {
		in := all[i]
		in.Current = in.ID == f.histID
		if q != "" {
			found := false
			for _, m := range h.msgs {
				if i := strings.Index(strings.ToLower(m.Content), q); i >= 0 {
					in.Snippet, found = strings.Join(strings.Fields(m.Content[max(0, i-20):min(len(m.Content), i+len(q)+40)]), " "), true
					break
				}
			}
			if !found {
				continue
			}
		}
		ev.List = append(ev.List, in)
	}
	return ev
}

// ListHistory lists the conversations kept.
func (f *FakeEngine) ListHistory(query string) error {
	f.record("ListHistory " + query)
	f.emit(f.historyList(query))
	return nil
}

// ResumeHistory brings a kept conversation back, keeping the one on
// screen first.
func (f *FakeEngine) ResumeHistory(id string) error {
	f.record("ResumeHistory " + id)
	f.mu.Lock()
	i := slices.IndexFunc(f.history, func(h *fakeHistory) bool { return h.info.ID == id })
	busy := f.cancel != nil
	if i < 0 || busy {
		f.mu.Unlock()
		err := fmt.Errorf("there is no conversation %q in the history", id)
		if busy {
			err = errors.New("a reply is being generated; stop it with esc first")
		}
		f.emit(engine.Failed{Op: "resume", Err: err})
		return nil
	}
	h := f.history[i]
	kept := f.keepLocked()
	f.msgs, f.versions, f.histID, f.changed = slices.Clone(h.msgs), map[int]*fakeVersions{}, id, 0
	msgs, set := f.messagesLocked(), f.settings
	f.mu.Unlock()
	if kept != nil && kept.ID != id {
		f.emit(*kept)
	}
	f.emit(engine.Cleared{Messages: msgs, ContextUsed: countTokens(msgs), Settings: set})
	f.emit(engine.History{Op: "resume", ID: id, Title: orDefault(h.title, h.info.Title)})
	f.emit(f.historyList(""))
	return nil
}

// DeleteHistory forgets a kept conversation.
func (f *FakeEngine) DeleteHistory(id string) error {
	f.record("DeleteHistory " + id)
	f.mu.Lock()
	n := len(f.history)
	f.history = slices.DeleteFunc(f.history, func(h *fakeHistory) bool { return h.info.ID == id })
	gone := len(f.history) < n
	if id == f.histID {
		f.histID, f.changed = "", 0
	}
	f.mu.Unlock()
	if !gone {
		f.emit(engine.Failed{Op: "history-delete", Err: fmt.Errorf("there is no conversation %q in the history", id)})
		return nil
	}
	f.emit(engine.History{Op: "delete", ID: id})
	f.emit(f.historyList(""))
	return nil
}

// RenameHistory gives a kept conversation a title of its own; id "" is
// the conversation on screen, kept first.
func (f *FakeEngine) RenameHistory(id, title string) error {
	f.record("RenameHistory " + id + " " + title)
	title = strings.Join(strings.Fields(title), " ")
	f.mu.Lock()
	if id == "" || id == f.histID {
		if f.keepLocked() == nil {
			f.mu.Unlock()
			f.emit(engine.Failed{Op: "history-rename", Err: errors.New("there is nothing to name yet: the conversation is empty")})
			return nil
		}
		id = f.histID
	}
	i := slices.IndexFunc(f.history, func(h *fakeHistory) bool { return h.info.ID == id })
	if i < 0 {
		f.mu.Unlock()
		f.emit(engine.Failed{Op: "history-rename", Err: fmt.Errorf("there is no conversation %q in the history", id)})
		return nil
	}
	h := f.history[i]
	h.title = title
	shown := orDefault(title, h.info.Title)
	f.mu.Unlock()
	f.emit(engine.History{Op: "rename", ID: id, Title: shown})
	f.emit(f.historyList(""))
	return nil
}

// AddHistory puts a conversation into the history as if kept earlier
// (tests and previews).
func (f *FakeEngine) AddHistory(info engine.HistoryInfo, msgs []engine.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.history = append(f.history, &fakeHistory{info: info, msgs: slices.Clone(msgs)})
	slices.SortStableFunc(f.history, func(a, b *fakeHistory) int { return b.info.Updated.Compare(a.info.Updated) })
}
