package tui

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/internal/testmedia"
	"github.com/orchard-llm/orchard/tokenizer"
)

// contextScript: "Qn" is answered "An ok.", a summarisation prompt "Summary."
const contextScript = `{"replies":[{"match":"^Summarise the conversation","reply":"Summary of the apples."},{"match":"^Q","reply":"A ok."}]}`

// realEngine is the engine on the tiny-long r1 bundle playing
// contextScript: the real Estimator, compaction and context view.
func realEngine(t testing.TB, set engine.Settings) *engine.Engine {
	t.Helper()
	b := testbundle.Preset(t, "r1", "tiny-long")
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := chain.Open(b, chaintest.Scripted(t, b, contextScript), chain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.NewSession(b, c, tok, set)
	if err != nil {
		t.Fatal(err)
	}
	s.Memory = nil
	caps := s.Capabilities()
	eng := engine.Start(s, engine.ModelInfo{Name: b.Name(), Family: string(b.Family), Context: caps.Context,
		VerifyWidths: caps.VerifyWidths, Logits: caps.Logits, Runtime: "reference", Media: []string{engine.MediaImage, engine.MediaAudio}})
	t.Cleanup(func() { eng.Close() })
	return eng
}

// twoTurns sends two scripted questions and waits for their replies.
func twoTurns(t testing.TB, m *Model, eng Engine) {
	t.Helper()
	for _, q := range []string{"Q1 apples", "Q2 pears"} {
		typeText(m, q)
		m.Update(press("enter"))
		pump(t, m, eng, func() bool { return !m.replying() })
	}
}

// price runs the pricing the last update asked for, as the program
// would, and hands the price to m.
func price(t testing.TB, m *Model) {
	t.Helper()
	m.cost.key = "" // price what is there now
	cmd := m.priceCmd()
	if cmd == nil {
		t.Fatal("nothing to price")
	}
	m.Update(cmd())
}

func smallSettings() engine.Settings {
	set := engine.DefaultSettings()
	set.MaxTokens = 16
	return set
}

var costRE = regexp.MustCompile(`(≈?)([\d,]+) tokens \(text ([\d,]+) \+ template ([\d,]+)(.*?)\) · ([\d,]+) left for the reply`)

// TestCostShownBeforeSending: the rule above the input prices the message
// as it is typed — its text, the template, each picture's and clip's soft
// tokens — and what it leaves for the reply; each key reprices it.
func TestCostShownBeforeSending(t *testing.T) {
	eng := realEngine(t, smallSettings())
	m := newTestModel(t, eng, 160, 30, Options{})
	if m.cost.src == nil {
		t.Fatal("the in-process engine gives no estimator")
	}
	typeText(m, "hello")
	price(t, m)
	got := costRE.FindStringSubmatch(plain(m))
	if got == nil {
		t.Fatalf("no cost above the input:\n%s", plain(m))
	}
	text1 := got[3]
	typeText(m, " there, how do apples grow")
	price(t, m)
	got2 := costRE.FindStringSubmatch(plain(m))
	if got2 == nil || got2[3] == text1 || got2[2] == got[2] {
		t.Fatalf("the cost did not follow the typing: %q then %q", got, got2)
	}
	est, _ := eng.Estimator()
	want := est.Cost("hello there, how do apples grow")
	if got2[3] != commas(want.Text) || got2[6] != commas(want.Left) {
		t.Fatalf("shown %q, the estimator says text %d, left %d", got2[0], want.Text, want.Left)
	}

	// A picture and a clip: their soft tokens are in the price.
	dir := t.TempDir()
	pic, wav := filepath.Join(dir, "apple.png"), filepath.Join(dir, "hi.wav")
	writeTestPNG(t, pic)
	if err := os.WriteFile(wav, testmedia.WAV(1, 440), 0o600); err != nil {
		t.Fatal(err)
	}
	m.attached = []engine.MediaFile{{Kind: engine.MediaImage, Path: pic}, {Kind: engine.MediaAudio, Path: wav}}
	price(t, m)
	got3 := costRE.FindStringSubmatch(plain(m))
	if got3 == nil || got3[1] != "≈" || !strings.Contains(got3[5], "apple.png 256") || !strings.Contains(got3[5], "hi.wav 25") {
		t.Fatalf("the files are not priced (a picture ≈256, a 1 s clip 25): %q\n%s", got3, plain(m))
	}
}

// TestMessageThatCannotFitIsFlagged: under stop, a message that leaves
// less than the reply reserve is flagged on the rule and, on enter, asks
// what to do instead of being sent; the choices that apply are offered.
func TestMessageThatCannotFitIsFlagged(t *testing.T) {
	set := smallSettings()
	set.ContextPolicy = engine.ContextStop
	eng := realEngine(t, set)
	m := newTestModel(t, eng, 160, 30, Options{})
	for i := range 3 {
		typeText(m, "Q"+strings.Repeat(" apples", 60)+string(rune('a'+i)))
		m.cost.have = false
		m.Update(press("enter"))
		pump(t, m, eng, func() bool { return !m.replying() })
	}
	typeText(m, "Q"+strings.Repeat(" pears", 120))
	price(t, m)
	if !m.cost.have || m.cost.cost.Fits {
		t.Fatalf("the message fits: %+v", m.cost.cost)
	}
	pump(t, m, eng, func() bool { return m.ctx.have }) // the system prompt's share, asked for
	if s := plain(m); !strings.Contains(s, "⚠") || !strings.Contains(s, "enter asks what to do") {
		t.Fatalf("not flagged:\n%s", s)
	}
	calls := len(eng.Messages())
	m.Update(press("enter"))
	if !m.asking() {
		t.Fatalf("enter sent it without asking:\n%s", plain(m))
	}
	s := strings.Join(strings.Fields(plain(m)), " ")
	for _, c := range []string{"c compact first", "d drop the oldest", "n start over"} {
		if !strings.Contains(s, c) {
			t.Errorf("choice %q not offered:\n%s", c, s)
		}
	}
	if strings.Contains(s, "x detach") {
		t.Errorf("detach offered without a file:\n%s", s)
	}
	m.Update(press("z")) // any other key leaves it
	if m.asking() || m.input.Value() == "" || len(eng.Messages()) != calls {
		t.Fatalf("another key did something: asking %v, input %q", m.asking(), m.input.Value())
	}
	// d: the policy becomes drop-oldest and the message goes.
	m.Update(press("enter"))
	m.Update(press("d"))
	pump(t, m, eng, func() bool { return m.turn.settings.ContextPolicy == engine.ContextDropOldest && !m.replying() })
	if n := len(eng.Messages()); n != calls+2 {
		t.Fatalf("after d the conversation has %d messages, want %d", n, calls+2)
	}
}

// TestContextSwitchesPolicyLive: /context shows the window as a bar with
// its parts and the policy; d switches the policy in the session.
func TestContextSwitchesPolicyLive(t *testing.T) {
	eng := realEngine(t, smallSettings())
	m := newTestModel(t, eng, 120, 40, Options{})
	typeText(m, "Q1 apples")
	m.Update(press("enter"))
	pump(t, m, eng, func() bool { return !m.replying() })
	typeText(m, "/context")
	m.Update(press("enter"))
	pump(t, m, eng, func() bool { return m.ctx.have && len(m.ctx.view.Parts) == 2 })
	s := plain(m)
	for _, w := range []string{"Context", "system prompt", "message 1 (you)", "message 2 (model)", "reply reserve", glyphSystem, glyphUser, "[compact]"} {
		if !strings.Contains(s, w) {
			t.Errorf("the context view lacks %q:\n%s", w, s)
		}
	}
	m.Update(press("d"))
	pump(t, m, eng, func() bool { return m.turn.settings.ContextPolicy == engine.ContextDropOldest })
	if got := eng.Settings().ContextPolicy; got != engine.ContextDropOldest {
		t.Fatalf("the engine's policy is %q", got)
	}
	if s := plain(m); !strings.Contains(s, "[drop-oldest]") {
		t.Fatalf("the view does not show the new policy:\n%s", s)
	}
	m.Update(press("esc"))
	if m.focused() != focusInput {
		t.Fatal("esc did not close the context view")
	}
}

// TestCompactShowsFoldedSummary: /compact runs the model's summary
// (progress on the status bar), the rule moves, and the summary is a
// folded block under it that unfolds and is edited (SetSummary).
func TestCompactShowsFoldedSummary(t *testing.T) {
	eng := realEngine(t, smallSettings())
	m := newTestModel(t, eng, 140, 40, Options{})
	twoTurns(t, m, eng)
	typeText(m, "/compact")
	m.Update(press("enter"))
	if !strings.Contains(plain(m), "compacting…") {
		t.Fatalf("no progress shown:\n%s", plain(m))
	}
	pump(t, m, eng, func() bool { return m.conv.Summary() != "" && m.turn.compacting == "" && m.ctx.have })
	if m.conv.Summary() != "Summary of the apples." {
		t.Fatalf("summary %q", m.conv.Summary())
	}
	s := plain(m)
	if !strings.Contains(s, windowRuleText) || !strings.Contains(s, "▸ the model's summary") || strings.Contains(s, "Summary of the apples.") {
		t.Fatalf("the summary is not a folded block under the rule:\n%s", s)
	}
	if w := eng.Window(); m.conv.window != w || w == 0 {
		t.Fatalf("the rule is above message %d, the engine's window is %d", m.conv.window, w)
	}
	m.runCommand("/summary")
	if !strings.Contains(plain(m), "Summary of the apples.") {
		t.Fatalf("/summary did not unfold it:\n%s", plain(m))
	}
	m.runCommand("/summary edit")
	if m.input.Value() != "/summary Summary of the apples." {
		t.Fatalf("/summary edit put %q in the input", m.input.Value())
	}
	m.input.SetValue("/summary Apples and pears, briefly.")
	m.Update(press("enter"))
	pump(t, m, eng, func() bool { return m.ctx.view.Edited })
	if m.ctx.view.Summary != "Apples and pears, briefly." || !strings.Contains(plain(m), "your summary") {
		t.Fatalf("the edit did not reach the engine: %q\n%s", m.ctx.view.Summary, plain(m))
	}
}

// TestPinMarksTheMessage: /pin pins the last message (the engine keeps it
// verbatim) and marks it; again unpins it.
func TestPinMarksTheMessage(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	typeText(m, "Q1 apples")
	m.Update(press("enter"))
	pump(t, m, f, func() bool { return !m.replying() })
	m.runCommand("/pin 1")
	pump(t, m, f, func() bool { return m.conv.Pinned(0) })
	if s := plain(m); !strings.Contains(s, "📌 pinned") {
		t.Fatalf("no mark:\n%s", s)
	}
	m.runCommand("/pin 1")
	pump(t, m, f, func() bool { return !m.conv.Pinned(0) })
	if s := plain(m); strings.Contains(s, "📌 pinned") {
		t.Fatalf("the mark stayed:\n%s", s)
	}
	if cmd := m.cmdPin("9"); cmd == nil || !strings.Contains(m.toast.Last(), "/pin takes a message number") {
		t.Fatalf("a message that does not exist: %q", m.toast.Last())
	}
}

// TestPinWithTheEngine: the real engine keeps the pin through /compact.
func TestPinWithTheEngine(t *testing.T) {
	eng := realEngine(t, smallSettings())
	m := newTestModel(t, eng, 140, 40, Options{})
	twoTurns(t, m, eng)
	m.runCommand("/pin 1")
	pump(t, m, eng, func() bool { return m.conv.Pinned(0) })
	m.runCommand("/compact")
	pump(t, m, eng, func() bool { return m.conv.Summary() != "" && m.ctx.have && m.ctx.view.Summary != "" })
	if p := m.ctx.view.Parts[0]; p.Kind != "pinned" || p.Index != 0 {
		t.Fatalf("the pinned message is not seen first after compaction: %+v", m.ctx.view.Parts)
	}
	if !strings.Contains(plain(m), "📌 pinned") {
		t.Fatalf("no mark:\n%s", plain(m))
	}
}

// TestElideReplacesPicture: /elide has the model see the oldest picture
// as one line; the message shows it and the context view counts it 0.
func TestElideReplacesPicture(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 140, 40, Options{})
	_, pic, _ := pictureAndClip(t)
	m.runCommand("/image " + pic)
	checkAttachments(m)
	typeText(m, "what is it?")
	m.Update(press("enter"))
	pump(t, m, f, func() bool { return !m.replying() })
	m.runCommand("/elide 1 a red apple")
	pump(t, m, f, func() bool { return m.ctx.have })
	if s := plain(m); !strings.Contains(s, "the model sees [picture apple.png: a red apple]") {
		t.Fatalf("no line shown for the picture:\n%s", s)
	}
	if got := f.Calls(); got[len(got)-1] != string(engine.OpElide) {
		t.Fatalf("calls %v", got)
	}
	m.runCommand("/elide")
	if !strings.Contains(m.toast.Last(), "No picture or clip left") {
		t.Fatalf("a second /elide: %q", m.toast.Last())
	}
}

var _ tea.Model = (*Model)(nil)

// TestContextViewSlidingRing: on stateful3 the view says what the
// sliding layers' ring still holds, and where that starts.
func TestContextViewSlidingRing(t *testing.T) {
	p := newContextPanel(newStyles(true, true))
	p.SetSize(120, 40)
	v := engine.ContextView{Context: 2048, Reserve: 512, System: 20, Used: 900, Free: 1148, Cached: 880,
		Parts: []engine.ContextPart{
			{Kind: "message", Index: 0, Role: "user", Start: 20, Tokens: 300, Media: []engine.MediaCost{{Name: "a.png", Kind: engine.MediaImage, Tokens: 256}}},
			{Kind: "message", Index: 1, Role: "model", Start: 320, Tokens: 580}},
		Sliding: engine.SlidingView{Window: 512, Ring: true, From: 388, Part: 1}}
	p.Show(ctxState{view: v, have: true}, engine.ContextCompact)
	s := xansi.Strip(p.View())
	for _, w := range []string{"still hold (a ring of 512) the last 512 positions: from 388, in message 2", "a.png 256", "900 of 2,048 tokens"} {
		if !strings.Contains(s, w) {
			t.Errorf("the view lacks %q:\n%s", w, s)
		}
	}
	bar := p.Bar(100)
	if n := len([]rune(bar)); n != 100 {
		t.Fatalf("the bar is %d cells, want 100: %q", n, bar)
	}
	// Each part in proportion: the picture's 256 of 2,048 is 12–13 cells.
	if n := strings.Count(bar, glyphMedia); n < 12 || n > 13 {
		t.Fatalf("the picture takes %d cells of 100: %q", n, bar)
	}
}

// TestConversationShownAnewAsksForItsContext: a conversation loaded,
// resumed or shown again over a server whose window has moved on may
// carry a summary and pins: the screen asks for the window's breakdown,
// so the folded summary and the marks are there.
func TestConversationShownAnewAsksForItsContext(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	msgs := []engine.Message{{Role: "user", Content: "Q1"}, {Role: "model", Content: "A1"}, {Role: "user", Content: "Q2"}, {Role: "model", Content: "A2"}}
	send(m, engine.Cleared{Messages: msgs})
	if slices.Contains(f.Calls(), string(engine.OpContext)) {
		t.Fatal("asked for the context of a conversation the model sees whole")
	}
	send(m, engine.Cleared{Messages: msgs, Window: 2})
	if !slices.Contains(f.Calls(), string(engine.OpContext)) {
		t.Fatalf("did not ask for the context: %v", f.Calls())
	}
}

// remotePricer is an engine over a server as the screen sees it: each
// price is a round trip (server.Client.Cost), counted.
type remotePricer struct {
	*FakeEngine
	calls atomic.Int32
}

func (r *remotePricer) Info() engine.ModelInfo {
	i := r.FakeEngine.Info()
	i.Server = "unix:/tmp/orchard.sock"
	return i
}

func (r *remotePricer) Cost(text string, media ...engine.MediaCost) (engine.Cost, error) {
	r.calls.Add(1)
	c := engine.Cost{Text: len(strings.Fields(text)), Template: 4, Context: 2048, Used: 100, Reserve: 512}
	c.Total = c.Text + c.Template
	c.Left = c.Context - c.Used - c.Total
	c.Fits = c.Left >= c.Reserve
	return c, nil
}

// TestRemoteCostWaitsForAPause: over a server the screen asks for a
// price once the typing pauses, not per key; a pause that a later key
// overtook asks nothing.
func TestRemoteCostWaitsForAPause(t *testing.T) {
	r := &remotePricer{FakeEngine: testFake(t, FakeOptions{})}
	m := newTestModel(t, r, 120, 40, Options{})
	if !m.cost.remote || m.cost.src == nil {
		t.Fatalf("an engine over a server with Cost is not priced remotely: %+v", m.cost)
	}
	typeText(m, "how do")
	first := m.cost.seq
	typeText(m, " apples grow")
	if _, cmd := m.Update(costTickMsg{seq: first}); cmd != nil || r.calls.Load() != 0 {
		t.Fatalf("a pause overtaken by more keys asked for a price (%d calls)", r.calls.Load())
	}
	_, cmd := m.Update(costTickMsg{seq: m.cost.seq})
	if cmd == nil {
		t.Fatal("the last pause asked nothing")
	}
	m.Update(cmd())
	if r.calls.Load() != 1 || !strings.Contains(plain(m), "8 tokens (text 4 + template 4)") {
		t.Fatalf("%d calls; screen:\n%s", r.calls.Load(), plain(m))
	}
}

// TestMessageTooLongEvenAlone: a message that cannot fit even with the
// system prompt alone is refused before it is sent, whatever the policy,
// and treated as the engine's refusal (kept in the input, esc clears it).
func TestMessageTooLongEvenAlone(t *testing.T) {
	r := &remotePricer{FakeEngine: testFake(t, FakeOptions{})}
	m := newTestModel(t, r, 120, 40, Options{})
	m.input.SetValue(strings.Repeat("pear ", 1800))
	m.priceCmd() // as the Update that changed the input would
	_, cmd := m.Update(costTickMsg{seq: m.cost.seq})
	m.Update(cmd())
	if !strings.Contains(plain(m), "too long even alone") {
		t.Fatalf("not flagged:\n%s", plain(m))
	}
	m.Update(press("enter"))
	if m.asking() || !strings.Contains(m.toast.Last(), "The message was not sent") || slices.ContainsFunc(r.Calls(), func(c string) bool { return strings.HasPrefix(c, "Send") }) {
		t.Fatalf("asking %v, toast %q, calls %v", m.asking(), m.toast.Last(), r.Calls())
	}
	if m.refused == "" || m.input.Value() == "" {
		t.Fatal("the message is not kept as refused")
	}
}

// TestEscStopsCompaction: esc while compacting cancels it; the engine's
// Cancelled{Unstarted} says the conversation is as it was.
func TestEscStopsCompaction(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	m.turn.compacting = "compacting… reading 40%"
	m.Update(press("esc"))
	if !slices.Contains(f.Calls(), "Cancel") {
		t.Fatalf("esc did not cancel the compaction: %v", f.Calls())
	}
	send(m, engine.Cancelled{Unstarted: true})
	if m.turn.compacting != "" || !strings.Contains(m.toast.Last(), "Compaction stopped") {
		t.Fatalf("compacting %q, toast %q", m.turn.compacting, m.toast.Last())
	}
}
