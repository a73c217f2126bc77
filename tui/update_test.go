package tui

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

func live(gen int, tps float64, state engine.SpecState, acc float64) engine.Live {
	return engine.Live{Generated: gen, DecodeTokPerS: tps, LastTokenMs: 1000 / tps, ContextUsed: 100 + gen,
		ContextLimit: 2048, SpecState: state, AcceptanceRate: acc}
}

func TestStreamingEventsUpdateTranscriptAndStats(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})

	send(m, engine.Started{Turn: 0, PromptTokens: 100, ReusedTokens: 60}, engine.PrefillProgress{Done: 20, Total: 40})
	if got := plain(m); !strings.Contains(got, "prefill 50%") {
		t.Fatalf("status bar does not show the prefill:\n%s", got)
	}
	send(m,
		&engine.Delta{Text: "Hello ", Tokens: []int{1}, FromDraft: []bool{false}, Live: live(1, 20, engine.SpecAdaptive, 0)},
		&engine.Delta{Text: "apple orchard", Tokens: []int{2, 3}, FromDraft: []bool{true, false}, Live: live(3, 24.5, engine.SpecAdaptive, 0.5)},
	)
	got := plain(m)
	for _, want := range []string{"Hello apple orchard", "● 24.5 tok/s", "spec adaptive 50%", "ctx 103/2,048"} {
		if !strings.Contains(got, want) {
			t.Errorf("streaming view lacks %q:\n%s", want, got)
		}
	}
	met := engine.TurnMetrics{PromptTokens: 100, ReusedTokens: 60, GeneratedTokens: 3, FinishReason: "eos",
		TTFTSeconds: 0.25, PrefillTokPerSec: 160, DecodeTokPerSec: 23.96, PerTokenMillis: []float64{50, 40, 41},
		PerTokenMinMs: 40, PerTokenMedianMs: 41, PerTokenMaxMs: 50, ContextUsed: 103, ContextLimit: 2048,
		SeamMetered: true, SeamCopiedBytesPerToken: 4096,
		Spec:   engine.SpecStats{Enabled: true, State: engine.SpecAdaptive, Rounds: 2, Drafted: 4, Accepted: 2, AcceptanceRate: 0.5, MeanAccepted: 2},
		Memory: engine.Memory{FootprintBytes: 300 << 20, FootprintPeakBytes: 320 << 20, ModelBytes: 2 << 30, ModelPeakBytes: 2 << 30, AvailableBytes: 8 << 30, AvailableLowBytes: 7 << 30}}
	send(m, engine.Finished{Reply: "Hello apple orchard", Metrics: met})
	got = plain(m)
	// The live figure settles to the exact one.
	for _, want := range []string{"○ 24.0 tok/s", "3 tokens · 24.0 tok/s · TTFT 0.25 s · drafts 50% accepted", "mem 300 MiB"} {
		if !strings.Contains(got, want) {
			t.Errorf("finished view lacks %q:\n%s", want, got)
		}
	}
	m.Update(press("ctrl+t"))
	got = plain(m)
	for _, want := range []string{"100 in, 60 reused, 3 out", "50% turn · 50% session", "2.00 turn", "300 MiB · peak 320 MiB", "2.0 GiB · peak 2.0 GiB", "8.0 GiB · low 7.0 GiB", "0.25 s", "160 tok/s", "40/41/50 ms", "4 KiB a token"} {
		if !strings.Contains(got, want) {
			t.Errorf("stats panel lacks %q:\n%s", want, got)
		}
	}
	if !m.changed {
		t.Error("a finished turn did not mark the conversation for autosave")
	}
}

func TestCancelledKeepsPartialReply(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{})
	send(m, engine.Started{PromptTokens: 10}, &engine.Delta{Text: "partial answ", Live: live(2, 10, engine.SpecOff, 0)})
	send(m, engine.Cancelled{Partial: "partial answ", Metrics: engine.TurnMetrics{GeneratedTokens: 2, FinishReason: "cancelled"}})
	got := plain(m)
	for _, want := range []string{"partial answ", "cancelled · 2 tokens", "■ cancelled", "partial reply is kept"} {
		if !strings.Contains(got, want) {
			t.Errorf("view lacks %q:\n%s", want, got)
		}
	}
}

func TestRefusedSendGoesBackToInput(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{})
	m.conv.AddUser("my long question")
	send(m, engine.Failed{Op: "send", Err: errors.New("the conversation no longer fits the context of 2,048 tokens")})
	if len(m.conv.msgs) != 0 {
		t.Fatalf("the refused message stayed in the transcript: %d messages", len(m.conv.msgs))
	}
	if m.input.Value() != "my long question" {
		t.Fatalf("input = %q, want the refused message back", m.input.Value())
	}
	got := plain(m)
	if !strings.Contains(got, "The message was not sent: the conversation no longer fits") {
		t.Fatalf("toast missing:\n%s", got)
	}
}

func TestToastNeverShowsControlCharacters(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{})
	send(m, engine.Failed{Op: "save", Err: errors.New("open /x:\n\tpermission denied\x1b[31m")})
	got := m.toast.View()
	if strings.ContainsAny(xansi.Strip(got), "\n\t\x1b") && lipglossHeight(got) > 2 {
		t.Fatalf("toast has raw control characters: %q", got)
	}
	if !strings.Contains(xansi.Strip(got), "The checkpoint was not saved: open /x: permission denied") {
		t.Fatalf("toast = %q", xansi.Strip(got))
	}
}

// TestErrorsShownWholeAndLogged: an error toast wraps to show the whole
// sentence, the part that says what to do included; one too long for a
// quarter of the screen ends in "f6 shows all" and f6 shows it whole;
// every error is in the log.
func TestErrorsShownWholeAndLogged(t *testing.T) {
	var logBuf strings.Builder
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{Logger: logger})
	advice := "checkpoint \"e4b\" was made with gemma-4-e4b-it-coreml-speculative (v2, identity 1c2d3e4f5a6b), not demo-r1-small (r1, identity 9f8e7d6c5b4a); open that bundle with orchard --model DIR to load it"
	send(m, engine.Failed{Op: "load", Err: errors.New(advice)})
	got := strings.Join(strings.Fields(xansi.Strip(m.toast.View())), " ")
	if !strings.Contains(got, "open that bundle with orchard --model DIR to load it") {
		t.Fatalf("the toast cut the advice off:\n%s", m.toast.View())
	}
	if !strings.Contains(plain(m), "to load it") {
		t.Fatalf("the screen does not show the whole error:\n%s", plain(m))
	}
	long := strings.TrimSpace(strings.Repeat("a very long reason that goes on ", 18)) + " and the end says what to do."
	send(m, engine.Failed{Op: "save", Err: errors.New(long)})
	view := xansi.Strip(m.toast.View())
	if n := len(strings.Split(view, "\n")); n > 24/4 || !strings.Contains(view, "f6 shows all") {
		t.Fatalf("a very long error takes %d lines or does not say how to see it all:\n%s", n, view)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyF6})
	whole := strings.Join(strings.Fields(plain(m)), " ")
	if !strings.Contains(whole, "Last error") || !strings.Contains(whole, "the end says what to do.") {
		t.Fatalf("f6 does not show the whole error:\n%s", plain(m))
	}
	m.Update(press("x"))
	if strings.Contains(plain(m), "Last error") || m.input.Value() != "" {
		t.Fatalf("any key does not close the message view, or was typed:\n%s", plain(m))
	}
	for _, want := range []string{"to load it", "the end says what to do."} {
		if !strings.Contains(logBuf.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logBuf.String())
		}
	}
}

func lipglossHeight(s string) int { return len(strings.Split(s, "\n")) }

func TestClearedReplacesConversation(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{})
	m.conv.AddUser("old")
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "restored question"}, {Role: "model", Content: "restored **answer**"}}})
	got := plain(m)
	if strings.Contains(got, "old") || !strings.Contains(got, "restored question") || !strings.Contains(got, "restored answer") {
		t.Fatalf("view after Cleared:\n%s", got)
	}
	send(m, engine.Cleared{})
	if !strings.Contains(plain(m), "Type a message") {
		t.Fatalf("empty conversation does not show the welcome:\n%s", plain(m))
	}
}

func TestSlashCommandsChangeSettings(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	run := func(line string) string {
		t.Helper()
		typeText(m, line)
		m.Update(press("enter"))
		drain(m, f)
		return strings.Join(strings.Fields(xansi.Strip(m.toast.View())), " ")
	}
	if got := run("/temp warm"); !strings.Contains(got, "/temp takes a number") {
		t.Errorf("/temp warm: toast %q", got)
	}
	if got := run("/spec off"); !strings.Contains(got, "speculation off") || m.turn.settings.Speculation != engine.SpecModeOff {
		t.Errorf("/spec off: toast %q, settings %+v", got, m.turn.settings)
	}
	if got := run("/draft 2"); !strings.Contains(got, "drafts of 2 tokens") || m.turn.settings.DraftLen != 2 {
		t.Errorf("/draft 2: toast %q", got)
	}
	if got := run("/think on"); !strings.Contains(got, "thinking on") || !m.turn.settings.Thinking {
		t.Errorf("/think on: toast %q", got)
	}
	if got := run("/system Be brief."); !strings.Contains(got, "new system prompt") || m.turn.settings.System != "Be brief." {
		t.Errorf("/system: toast %q", got)
	}
	if got := run("/nope"); !strings.Contains(got, "There is no command /nope") {
		t.Errorf("/nope: toast %q", got)
	}
	if got := run("/save"); !strings.Contains(got, "/save needs an argument") {
		t.Errorf("/save without a name: toast %q", got)
	}

	sampler := testFake(t, FakeOptions{Info: engine.ModelInfo{Name: "cardbud", Family: "stateful3-logits", Context: 2048, Logits: true}})
	m = newTestModel(t, sampler, 80, 24, Options{})
	f = sampler
	for line, want := range map[string]string{"/temp 0.7": "temperature 0.7", "/topk 40": "top-k 40", "/topp 0.9": "top-p 0.9", "/seed 42": "seed 42"} {
		if got := run(line); !strings.Contains(got, want) {
			t.Errorf("%s: toast %q, want %q", line, got, want)
		}
	}
	if m.turn.settings.Sampling != (engine.Sampling{Temperature: 0.7, TopK: 40, TopP: 0.9, Seed: 42}) {
		t.Errorf("sampling = %+v", m.turn.settings.Sampling)
	}
}

// TestSettingsTheBundleCannotHonourAreRefused: the screen refuses, with the
// engine's own rule and naming the missing capability, what the bundle
// cannot do, and the setting in force stays.
func TestSettingsTheBundleCannotHonourAreRefused(t *testing.T) {
	r1 := engine.ModelInfo{Name: "demo-r1-small", Family: "r1", Context: 2048, VerifyWidths: []int{4}}
	s3 := engine.ModelInfo{Name: "cardbud", Family: "stateful3-logits", Context: 2048, Logits: true}
	for _, tc := range []struct {
		info engine.ModelInfo
		line string
		want []string
	}{
		{r1, "/temp 0.7", []string{"temperature 0.7", "argmax", "logits"}},
		{r1, "/topk 40", []string{"top-k 40", "argmax", "logits"}},
		{r1, "/topp 0.9", []string{"top-p 0.9", "argmax"}},
		{r1, "/seed 42", []string{"seed 42", "argmax"}},
		{r1, "/draft 16", []string{"draft length 16", "verify width 4", "use 4 or less"}},
		{s3, "/spec on", []string{"speculation on", "no verify function"}},
		{s3, "/draft 8", []string{"draft length 8", "no verify function"}},
	} {
		t.Run(tc.info.Family+tc.line, func(t *testing.T) {
			f := testFake(t, FakeOptions{Info: tc.info})
			m := newTestModel(t, f, 80, 24, Options{})
			before := m.turn.settings
			typeText(m, tc.line)
			m.Update(press("enter"))
			drain(m, f)
			got := strings.Join(strings.Fields(xansi.Strip(m.toast.View())), " ")
			for _, w := range append(tc.want, "The setting was not changed") {
				if !strings.Contains(got, w) {
					t.Errorf("toast %q lacks %q", got, w)
				}
			}
			if m.turn.settings != before {
				t.Errorf("settings changed: %+v", m.turn.settings)
			}
			// The engine's rule refuses it too (a front end that skips the
			// check gets the same answer).
			f.SetSettings(editSettings(before, tc.line))
			drain(m, f)
			if f.Settings() != before {
				t.Errorf("the engine accepted %s: %+v", tc.line, f.Settings())
			}
		})
	}
}

// editSettings applies a settings command to s, for the engine-side check.
func editSettings(s engine.Settings, line string) engine.Settings {
	name, arg := parseCommand(line)
	switch name {
	case "temp":
		s.Sampling.Temperature, _ = strconv.ParseFloat(arg, 64)
	case "topk":
		s.Sampling.TopK, _ = strconv.Atoi(arg)
	case "topp":
		s.Sampling.TopP, _ = strconv.ParseFloat(arg, 64)
	case "seed":
		s.Sampling.Seed, _ = strconv.ParseUint(arg, 10, 64)
	case "draft":
		s.DraftLen, _ = strconv.Atoi(arg)
	case "spec":
		s.Speculation = engine.SpecMode(arg)
	}
	return s
}

func TestForeignCheckpointIsRefusedNamingBothBundles(t *testing.T) {
	f := testFake(t, FakeOptions{})
	f.AddCheckpoint(engine.CheckpointInfo{Name: "e4b-chat", Created: testTime, Bundle: "gemma-4-e4b-stateful"}, nil)
	m := newTestModel(t, f, 80, 24, Options{})
	typeText(m, "/load e4b-chat")
	m.Update(press("enter"))
	drain(m, f)
	got := m.toast.text
	if !strings.Contains(got, "gemma-4-e4b-stateful") || !strings.Contains(got, "demo-r1-small") {
		t.Fatalf("refusal does not name both bundles: %q", got)
	}
}

func TestEscCancels(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	send(m, engine.Started{PromptTokens: 5})
	m.Update(press("esc"))
	if calls := f.Calls(); len(calls) == 0 || calls[len(calls)-1] != "Cancel" {
		t.Fatalf("esc while streaming: calls %v", calls)
	}
}

// TestCtrlC: as in shells and ollama, ctrl+c stops a reply, clears the
// input when it has text, and quits on an empty input when pressed twice.
func TestCtrlC(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})

	// During a reply it stops the reply and quits nothing.
	send(m, engine.Started{PromptTokens: 5})
	m.Update(press("ctrl+c"))
	if calls := f.Calls(); len(calls) == 0 || calls[len(calls)-1] != "Cancel" || m.quitting {
		t.Fatalf("ctrl+c during a reply: calls %v, quitting %v", f.Calls(), m.quitting)
	}
	send(m, engine.Cancelled{Metrics: engine.TurnMetrics{FinishReason: "cancelled"}})

	// With text in the input it clears the input, however much.
	m.Update(tea.PasteMsg{Content: strings.Repeat("pasted line\n", 4000)})
	m.Update(press("ctrl+c"))
	if m.input.Value() != "" || m.quitting {
		t.Fatalf("ctrl+c with text: input %d bytes, quitting %v", len(m.input.Value()), m.quitting)
	}
	// A second one, on the empty input, only arms quitting.
	m.Update(press("ctrl+c"))
	if m.quitting || !strings.Contains(plain(m), "ctrl+c again to quit") {
		t.Fatalf("first ctrl+c on an empty input:\n%s", plain(m))
	}
	_, cmd := m.Update(press("ctrl+c"))
	if !m.quitting || cmd == nil {
		t.Fatal("ctrl+c twice on an empty input did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c twice did not return tea.Quit")
	}
}

// TestRefusedPasteCanBeCleared: a paste the engine refuses comes back to
// the input; esc clears it, and it is not kept as a draft.
func TestRefusedPasteCanBeCleared(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	big := strings.Repeat("a line of a 50 KB paste\n", 2100)
	m.conv.AddUser(strings.TrimSpace(big)) // sent; the engine refuses it:
	send(m, engine.Failed{Op: "send", Err: errors.New("the message alone is 30,000 tokens and the context holds 2,048")})
	if m.input.Value() != strings.TrimSpace(big) {
		t.Fatalf("the refused paste is not back in the input (%d bytes)", len(m.input.Value()))
	}
	draft := filepath.Join(t.TempDir(), "draft.txt")
	os.WriteFile(draft, []byte("stale"), 0o600)
	keepDraft(draft, m)
	if _, err := os.Stat(draft); err == nil {
		t.Fatal("the refused paste was kept as the draft")
	}
	m.Update(press("esc"))
	if m.input.Value() != "" {
		t.Fatalf("esc did not clear the refused paste (%d bytes left)", len(m.input.Value()))
	}
	// esc leaves text the user typed alone.
	typeText(m, "my own words")
	m.Update(press("esc"))
	if m.input.Value() != "my own words" {
		t.Fatalf("esc cleared typed text: %q", m.input.Value())
	}
}

func TestHistoryWithUpAndDown(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	for _, s := range []string{"first", "second"} {
		typeText(m, s)
		m.Update(press("enter"))
		pump(t, m, f, func() bool { return !m.turn.busy() && m.turn.phase == phaseDone })
	}
	m.Update(press("up"))
	if m.input.Value() != "second" {
		t.Fatalf("up: %q", m.input.Value())
	}
	m.Update(press("up"))
	if m.input.Value() != "first" {
		t.Fatalf("up up: %q", m.input.Value())
	}
	m.Update(press("down"))
	m.Update(press("down"))
	if m.input.Value() != "" {
		t.Fatalf("down down: %q", m.input.Value())
	}
	// With text typed, up moves the cursor instead of recalling.
	typeText(m, "draft")
	m.Update(press("up"))
	if m.input.Value() != "draft" {
		t.Fatalf("up on a typed draft replaced it: %q", m.input.Value())
	}
}

func TestNewlineKeysAndPaste(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{})
	typeText(m, "a")
	m.Update(press("shift+enter"))
	typeText(m, "b")
	m.Update(tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl})
	typeText(m, "c")
	if got := m.input.Value(); got != "a\nb\nc" {
		t.Fatalf("input = %q", got)
	}
	m.input.Reset()
	big := strings.Repeat("a line of pasted text\n", 2000)
	m.Update(tea.PasteMsg{Content: big})
	if got := m.input.Text(); got != big {
		t.Fatalf("paste kept %d of %d bytes", len(got), len(big))
	}
	m.Update(press("ctrl+y"))
	if got := m.input.Value(); got != big {
		t.Fatalf("unfolded, the input holds %d of %d bytes", len(got), len(big))
	}
	if h := m.input.Height(); h > maxInputRows+1 {
		t.Fatalf("input grew to %d rows", h)
	}
}

// TestLongPasteFolds: a long paste is one chip in the input that gives its
// size; the rule above the input gives the message's; ctrl+y unfolds it
// and folds it back; the whole text is sent, and a refused message comes
// back folded. A short paste goes in as it is.
func TestLongPasteFolds(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 100, 30, Options{})
	var b strings.Builder
	for i := range 700 {
		fmt.Fprintf(&b, "%03d the orchard log line with enough words to be long\tend\n", i)
	}
	paste := b.String()
	held := strings.ReplaceAll(paste, "\t", "    ") // as the input holds it
	chip := "[paste 1 · 700 lines · ~10.7k tokens]"

	typeText(m, "Summarise this: ")
	m.Update(tea.PasteMsg{Content: paste})
	typeText(m, " thanks")
	if got := m.input.Value(); got != "Summarise this: "+chip+" thanks" {
		t.Fatalf("input %q", got)
	}
	screen := plain(m)
	if !strings.Contains(screen, "› Summarise this: "+chip+" thanks") || !strings.Contains(screen, "701 lines · ~10.7k tokens in all · ctrl+y unfolds the paste") {
		t.Fatalf("screen:\n%s", screen)
	}
	m.Update(press("ctrl+y"))
	if got := m.input.Value(); got != "Summarise this: "+held+" thanks" {
		t.Fatalf("unfolded: %d bytes", len(got))
	}
	if screen := plain(m); !strings.Contains(screen, "701 lines · ~10.7k tokens · ctrl+y folds the paste") {
		t.Fatalf("unfolded screen:\n%s", screen)
	}
	m.Update(press("ctrl+y"))
	if got := m.input.Value(); got != "Summarise this: "+chip+" thanks" {
		t.Fatalf("folded again: %q", got)
	}

	m.Update(press("enter"))
	pump(t, m, f, func() bool { return !m.replying() })
	want := "Send Summarise this: " + held + " thanks"
	if calls := f.Calls(); !slices.Contains(calls, want) {
		t.Fatalf("the engine got %d calls, not the whole text", len(calls))
	}
	if msgs := m.conv.Messages(); msgs[0].Content != "Summarise this: "+held+" thanks" {
		t.Fatal("the conversation does not show the text sent")
	}

	// A refused message comes back as it was typed, folded; esc clears it.
	m.Update(tea.PasteMsg{Content: paste})
	m.Update(press("enter"))
	send(m, engine.Failed{Op: "send", Err: errors.New("the message alone is 11,000 tokens and the context holds 2,048")})
	chip2 := strings.Replace(chip, "paste 1", "paste 2", 1)
	if got := m.input.Value(); got != chip2 {
		t.Fatalf("refused: the input holds %.80q… (%d bytes)", got, len(got))
	}
	m.Update(press("esc"))
	if m.input.Value() != "" {
		t.Fatal("esc left the refused paste")
	}

	// The draft kept at exit is the whole text.
	m.Update(tea.PasteMsg{Content: paste})
	draft := filepath.Join(t.TempDir(), "draft.txt")
	keepDraft(draft, m)
	if b, _ := os.ReadFile(draft); string(b) != held {
		t.Fatalf("draft holds %d bytes", len(b))
	}

	// A short paste goes in as it is; ctrl+y then has nothing to fold.
	m.input.Reset()
	m.Update(tea.PasteMsg{Content: "one\ntwo\nthree"})
	if got := m.input.Value(); got != "one\ntwo\nthree" {
		t.Fatalf("short paste: %q", got)
	}
	m.Update(press("ctrl+y"))
	if !strings.Contains(m.toast.text, "Nothing to fold") {
		t.Errorf("toast %q", m.toast.text)
	}
}

func TestSizeText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"hello", "1 line · ~2 tokens"},
		{"a\nb\n", "2 lines · ~1 tokens"},
		{strings.Repeat("x", 4000), "1 line · ~1.0k tokens"},
		{strings.Repeat("果", 500), "1 line · ~500 tokens"},
		{strings.Repeat("word ", 100_000), "1 line · ~125k tokens"},
	} {
		if got := sizeText(c.in); got != c.want {
			t.Errorf("sizeText(%.20q…) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	f := testFake(t, FakeOptions{})
	f.AddCheckpoint(engine.CheckpointInfo{Name: "apples", Created: testTime, Bundle: "demo-r1-small", Compatible: true}, nil)
	m := newTestModel(t, f, 80, 24, Options{})
	drain(m, f) // the list asked for at start
	typeText(m, "/lo")
	if !m.comp.Visible() || m.comp.items[0].label != "/load NAME" {
		t.Fatalf("completion for /lo: %+v", m.comp.items)
	}
	m.Update(press("tab"))
	if m.input.Value() != "/load " {
		t.Fatalf("tab: %q", m.input.Value())
	}
	typeText(m, "ap")
	if !m.comp.Visible() || m.comp.items[0].label != "apples" {
		t.Fatalf("argument completion: %+v", m.comp.items)
	}
	m.Update(press("tab"))
	if m.input.Value() != "/load apples" {
		t.Fatalf("tab on the name: %q", m.input.Value())
	}
	m.input.Reset()
	m.comp.Hide()
	// Enter on a unique prefix of an argument-less command runs it.
	typeText(m, "/cle")
	m.Update(press("enter"))
	if calls := f.Calls(); calls[len(calls)-1] != "Clear" {
		t.Fatalf("enter on /cle: calls %v", calls)
	}
}

func TestScrolledUpViewStaysPut(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{})
	var msgs []engine.Message
	for i := range 30 {
		msgs = append(msgs, engine.Message{Role: "user", Content: "question " + itoa(i)}, engine.Message{Role: "model", Content: "answer " + itoa(i)})
	}
	send(m, engine.Cleared{Messages: msgs})
	m.Update(press("pgup"))
	if m.conv.AtBottom() {
		t.Fatal("pgup did not scroll")
	}
	before := plain(m)
	send(m, engine.Started{PromptTokens: 10})
	send(m, &engine.Delta{Text: "new\n\nlines\n\nkeep\n\ncoming", Live: live(4, 10, engine.SpecOff, 0)})
	after := plain(m)
	if firstLines(before, 10) != firstLines(after, 10) {
		t.Fatalf("streaming moved a scrolled-up view:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	m.Update(press("ctrl+end"))
	if !m.conv.AtBottom() || !strings.Contains(plain(m), "coming") {
		t.Fatalf("ctrl+end does not follow:\n%s", plain(m))
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.conv.AtBottom() {
		t.Fatal("the wheel does not scroll")
	}
}

func firstLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[1:min(n, len(l))], "\n")
}

func itoa(i int) string { return commas(i) }

func TestThinkingFoldedAndDraftHighlight(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{})
	reply := thinkOpen + "thought\nsecret chain of reasoning here" + thinkClose + "The answer."
	send(m, engine.Started{PromptTokens: 5})
	send(m, &engine.Delta{Text: reply[:12], Live: live(1, 10, engine.SpecOn, 0)})
	if got := plain(m); strings.Contains(got, "<|chan") {
		t.Fatalf("a half-arrived marker is shown:\n%s", got)
	}
	send(m, &engine.Delta{Text: reply[12:], Tokens: []int{1, 2}, FromDraft: []bool{true, true}, Live: live(3, 10, engine.SpecOn, 1)})
	send(m, engine.Finished{Reply: reply})
	got := plain(m)
	if strings.Contains(got, "secret chain") || !strings.Contains(got, "thinking · 5 words") || !strings.Contains(got, "The answer.") {
		t.Fatalf("thinking not folded:\n%s", got)
	}
	m.Update(press("ctrl+r"))
	if !strings.Contains(plain(m), "secret chain of reasoning") {
		t.Fatalf("ctrl+r does not unfold:\n%s", plain(m))
	}
	m.Update(press("ctrl+x"))
	styled := m.View().Content
	if !strings.Contains(styled, m.st.Draft.Render("The answer.")) {
		t.Fatalf("draft tokens are not highlighted:\n%q", styled)
	}
	if text, _ := m.conv.LastReply(); text != "The answer." {
		t.Fatalf("LastReply = %q, want the answer without thinking", text)
	}
}

func TestExportWritesPrivateMarkdown(t *testing.T) {
	dir := t.TempDir()
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{Env: []string{"HOME=" + dir}})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "hi"}, {Role: "model", Content: thinkOpen + "hmm" + thinkClose + "hello **there**"}}})
	typeText(m, "/export ~/out.md")
	_, cmd := m.Update(press("enter"))
	msg := cmd()
	m.Update(msg)
	if !strings.Contains(m.toast.text, "Exported the conversation to "+filepath.Join(dir, "out.md")) {
		t.Fatalf("no confirmation:\n%s", plain(m))
	}
	fi, err := os.Stat(filepath.Join(dir, "out.md"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out.md"))
	for _, want := range []string{"# Conversation with demo-r1-small", "## You\n\nhi", "## Model\n\n> **Thinking**\n>\n> hmm\n\nhello **there**"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("export lacks %q:\n%s", want, b)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	// A failure is a sentence, not a panic.
	typeText(m, "/export /nonexistent-dir/x.md")
	_, cmd = m.Update(press("enter"))
	m.Update(cmd())
	if !strings.Contains(plain(m), "The conversation was not exported") {
		t.Fatalf("export failure not reported:\n%s", plain(m))
	}
}

func TestKeyOverrides(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{Keys: map[string][]string{"stats": {"f9"}}})
	m.Update(tea.KeyPressMsg{Code: tea.KeyF9})
	if m.panel != panelStats {
		t.Fatal("rebound key does not open the stats panel")
	}
	if _, err := newModel(f, Options{Keys: map[string][]string{"sned": {"x"}}}); err == nil || !strings.Contains(err.Error(), `unknown key action "sned"`) {
		t.Fatalf("unknown action: %v", err)
	}
	if _, err := newModel(f, Options{Theme: "purple"}); err == nil {
		t.Fatal("unknown theme accepted")
	}
}

// TestPrintableKeysAreRefused: a key one types cannot be bound to an
// action (--key quit=q ate every q typed), from flags or the config
// (CheckKeys); with a modifier it can. Help may have one: it acts only
// on an empty input.
func TestPrintableKeysAreRefused(t *testing.T) {
	for _, c := range []struct {
		keys map[string][]string
		bad  string // in the error; "" for accepted
	}{
		{map[string][]string{"quit": {"q"}}, `key action "quit": q is a key you type`},
		{map[string][]string{"quit": {"ctrl+c", "Q"}}, "Q is a key you type"},
		{map[string][]string{"stats": {"shift+s"}}, "shift+s is a key you type"},
		{map[string][]string{"new": {"space"}}, "ctrl+space"},
		{map[string][]string{"thinking": {"é"}}, "é is a key you type"},
		{map[string][]string{"quit": {"ctrl+q"}}, ""},
		{map[string][]string{"stats": {"alt+s", "f9"}}, ""},
		{map[string][]string{"help": {"h", "f1"}}, ""},
	} {
		err := CheckKeys(c.keys)
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%v refused: %v", c.keys, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%v: err = %v, want %q", c.keys, err, c.bad)
		}
		if _, merr := newModel(testFake(t, FakeOptions{}), Options{Keys: c.keys}); (merr == nil) != (err == nil) {
			t.Errorf("%v: the chat says %v, CheckKeys %v", c.keys, merr, err)
		}
	}
	// help=h: h opens help on an empty input and is typed in a message.
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{Keys: map[string][]string{"help": {"h"}}})
	typeText(m, "oh hi")
	if m.showHelp || m.input.Value() != "oh hi" {
		t.Fatalf("help %v, input %q", m.showHelp, m.input.Value())
	}
	m.input.Reset()
	m.Update(press("h"))
	if !m.showHelp {
		t.Fatal("h on an empty input did not open help")
	}
}

func TestEveryViewFitsTheWindow(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	var msgs []engine.Message
	for i := range 5 {
		msgs = append(msgs, engine.Message{Role: "user", Content: strings.Repeat("word ", 40) + itoa(i)},
			engine.Message{Role: "model", Content: "| a | b |\n|---|---|\n| " + strings.Repeat("wide ", 40) + " | x |\n\n```\n" + strings.Repeat("code", 50) + "\n```"})
	}
	send(m, engine.Cleared{Messages: msgs})
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 20}, {40, 12}, {200, 60}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, setup := range []func(){func() {}, func() { m.Update(press("ctrl+t")) }, func() { m.Update(press("ctrl+s")) }, func() { m.Update(press("ctrl+p")) }, func() { m.Update(press("esc")); m.Update(press("?")) }} {
			setup()
			lines := strings.Split(m.View().Content, "\n")
			if len(lines) != size[1] {
				t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
			}
			for i, l := range lines {
				if w := xansi.StringWidth(l); w > size[0] {
					t.Errorf("%dx%d: line %d is %d cells: %q", size[0], size[1], i, w, xansi.Strip(l))
				}
			}
		}
		m.Update(press("esc"))
		m.closePanel()
	}
}

func TestNoColor(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{Env: []string{"NO_COLOR=1"}})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "hi"}, {Role: "model", Content: "# Title\n\n`code` and *text*"}}})
	m.Update(press("ctrl+x"))
	v := m.View().Content
	if strings.Contains(v, "\x1b[38") || strings.Contains(v, "\x1b[48") {
		t.Fatalf("colour codes under NO_COLOR: %q", v)
	}
	if !m.st.NoColor {
		t.Fatal("NO_COLOR not detected")
	}
}

func TestBackgroundDetectionSwitchesTheme(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{Theme: "auto"})
	if !m.st.Dark {
		t.Fatal("the default before the terminal answers is not dark")
	}
	m.Update(tea.BackgroundColorMsg{Color: whiteColor{}})
	if m.st.Dark {
		t.Fatal("a white background did not select the light theme")
	}
}

type whiteColor struct{}

func (whiteColor) RGBA() (r, g, b, a uint32) { return 0xffff, 0xffff, 0xffff, 0xffff }

func TestEditorResult(t *testing.T) {
	p := filepath.Join(t.TempDir(), "draft.md")
	os.WriteFile(p, []byte("edited text\n"), 0o600)
	msg := editorResult(p, nil).(editorDoneMsg)
	if msg.text != "edited text" || msg.err != nil {
		t.Fatalf("editorResult = %+v", msg)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatal("the temporary file was kept")
	}
	cmd := editorCommand([]string{"EDITOR=vi", "VISUAL=code --wait"}, "/tmp/x.md")
	if got := strings.Join(cmd.Args, " "); got != "code --wait /tmp/x.md" {
		t.Fatalf("editor command %q", got)
	}
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{})
	m.Update(editorDoneMsg{text: "from the editor"})
	if m.input.Value() != "from the editor" {
		t.Fatalf("input = %q", m.input.Value())
	}
}

func TestCheckpointPanelActions(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "q"}, {Role: "model", Content: "a"}}})
	for _, n := range []string{"one", "two"} {
		f.SaveCheckpoint(n)
	}
	m.Update(press("ctrl+s"))
	drain(m, f)
	m.Update(press("tab"))
	if m.focused() != focusPanel {
		t.Fatal("tab does not focus the panel")
	}
	// Rename the selected one.
	m.Update(press("r"))
	for range 10 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	typeText(m, "renamed")
	m.Update(press("enter"))
	drain(m, f)
	if !strings.Contains(strings.Join(m.ckpts.Names(), ","), "renamed") {
		t.Fatalf("rename: %v / calls %v", m.ckpts.Names(), f.Calls())
	}
	// Delete asks first; n keeps it.
	m.Update(press("d"))
	if !strings.Contains(plain(m), "Delete \"renamed\"? y deletes") {
		t.Fatalf("no confirmation:\n%s", plain(m))
	}
	m.Update(press("n"))
	drain(m, f)
	if len(m.ckpts.list) != 2 {
		t.Fatal("n deleted")
	}
	m.Update(press("d"))
	m.Update(press("y"))
	drain(m, f)
	if len(m.ckpts.list) != 1 {
		t.Fatalf("y did not delete: %v", m.ckpts.Names())
	}
	// Save as, then fork.
	m.Update(press("s"))
	typeText(m, "three")
	m.Update(press("enter"))
	drain(m, f)
	m.Update(press("f"))
	drain(m, f)
	if !strings.Contains(plain(m), "Started a new conversation from") {
		t.Fatalf("fork:\n%s", plain(m))
	}
	m.Update(press("esc"))
	if m.focused() != focusInput {
		t.Fatal("esc does not give the focus back")
	}
}

func TestAutosaveWhenChanged(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{AutosaveEvery: 1})
	m.Update(autosaveMsg{})
	if strings.Contains(strings.Join(f.Calls(), ","), "Autosave") {
		t.Fatal("autosave with nothing changed")
	}
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "q"}}})
	m.Update(autosaveMsg{})
	if !strings.Contains(strings.Join(f.Calls(), ","), "Autosave") {
		t.Fatal("no autosave after a change")
	}
	drain(m, f)
	if m.toast.Visible() {
		t.Fatalf("autosave is announced: %q", m.toast.text)
	}
}

// TestAutosaveKeepsThePanel: the autosave's list replaces the panel's
// (the autosave in it, newest) without taking the cursor from the
// checkpoint the user is on.
func TestAutosaveKeepsThePanel(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "q"}, {Role: "model", Content: "a"}}})
	info := func(name string, min int) engine.CheckpointInfo {
		return engine.CheckpointInfo{Name: name, Created: testTime.Add(time.Duration(min) * time.Minute), Compatible: true}
	}
	send(m, engine.Checkpoints{Op: "list", List: []engine.CheckpointInfo{info("two", 2), info("one", 1)}})
	m.Update(press("ctrl+s"))
	m.Update(press("tab"))
	m.Update(press("down"))
	if cp, _ := m.ckpts.selected(); cp.Name != "one" {
		t.Fatalf("selected %q before the autosave", cp.Name)
	}
	send(m, engine.Checkpoints{Op: "autosave", Name: "_autosave", List: []engine.CheckpointInfo{info("_autosave", 3), info("two", 2), info("one", 1)}})
	if cp, _ := m.ckpts.selected(); len(m.ckpts.list) != 3 || cp.Name != "one" {
		t.Fatalf("after the autosave: %v, selected %q", m.ckpts.Names(), cp.Name)
	}
}

// TestFocusReturnsToInputAfterCommands: after /delete NAME and y, the
// keys are the input's again: typing a sentence full of panel keys (d, y,
// s, f, r) types it, and deletes, saves or forks nothing.
func TestFocusReturnsToInputAfterCommands(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "q"}, {Role: "model", Content: "a"}}})
	for _, n := range []string{"alpha", "beta", "gamma"} {
		f.SaveCheckpoint(n)
	}
	m.Update(press("ctrl+s"))
	drain(m, f)
	typeText(m, "/delete alpha")
	m.Update(press("enter"))
	if !strings.Contains(plain(m), `Delete the checkpoint "alpha"?`) {
		t.Fatalf("/delete does not ask:\n%s", plain(m))
	}
	m.Update(press("y"))
	drain(m, f)
	if m.focused() != focusInput {
		t.Fatalf("focus %d after /delete, want the input", m.focused())
	}
	before := len(f.Calls())
	typeText(m, "what day is it today? fruit")
	drain(m, f)
	if got := m.input.Value(); got != "what day is it today? fruit" {
		t.Fatalf("input = %q", got)
	}
	for _, c := range f.Calls()[before:] {
		t.Errorf("typing called the engine: %s", c)
	}
	if names := strings.Join(m.ckpts.Names(), ","); names != "beta,gamma" && names != "gamma,beta" {
		t.Fatalf("checkpoints now %s", names)
	}

	// The palette gives the focus back too.
	m.input.Reset()
	m.Update(press("ctrl+p"))
	typeText(m, "stats panel")
	m.Update(press("enter"))
	if m.focused() != focusInput || m.panel != panelStats {
		t.Fatalf("after the palette: focus %d, panel %d", m.focused(), m.panel)
	}
}

// TestPanelFocusIsVisibleAndLoadAsks: the panel shows when it has the
// keys (its border, title and the input's placeholder say so); forking
// or loading over an unsaved conversation asks, and only y goes on.
func TestPanelFocusIsVisibleAndLoadAsks(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	f.AddCheckpoint(engine.CheckpointInfo{Name: "apples", Created: testTime, Bundle: "demo-r1-small", Compatible: true},
		[]engine.Message{{Role: "user", Content: "saved question"}, {Role: "model", Content: "saved answer"}})
	m.Update(press("ctrl+s"))
	drain(m, f)
	unfocused := plain(m)
	m.Update(press("tab"))
	focused := plain(m)
	for _, want := range []string{"┏", "the keys act here", "keys go to the checkpoints panel"} {
		if strings.Contains(unfocused, want) || !strings.Contains(focused, want) {
			t.Errorf("focus is not shown by %q:\nunfocused:\n%s\nfocused:\n%s", want, unfocused, focused)
		}
	}
	if m.View().Cursor != nil {
		t.Error("the input shows a cursor while the panel has the keys")
	}

	// An unsaved conversation: f asks, any key but y keeps it.
	typeText(m, "")
	m.Update(press("esc"))
	typeText(m, "my question")
	m.Update(press("enter"))
	pump(t, m, f, func() bool { return m.turn.phase == phaseDone })
	m.Update(press("tab"))
	before := len(f.Calls())
	m.Update(press("f"))
	if !strings.Contains(plain(m), "is not saved; forking \"apples\" replaces it") {
		t.Fatalf("fork over an unsaved conversation does not ask:\n%s", plain(m))
	}
	m.Update(press("r"))
	drain(m, f)
	if len(f.Calls()) != before || m.focused() != focusPanel || m.ckpts.mode != ckptBrowse {
		t.Fatalf("r after the question: calls %v, focus %d, mode %d", f.Calls()[before:], m.focused(), m.ckpts.mode)
	}
	m.Update(press("enter"))
	m.Update(press("y"))
	drain(m, f)
	if calls := f.Calls(); calls[len(calls)-1] != "load apples" {
		t.Fatalf("y did not load: %v", calls[before:])
	}
	if m.focused() != focusInput || !strings.Contains(plain(m), "saved question") {
		t.Fatalf("after loading: focus %d\n%s", m.focused(), plain(m))
	}
	// Loaded and unchanged: loading again does not ask.
	typeText(m, "/load apples")
	m.Update(press("enter"))
	if m.asking() {
		t.Fatal("loading over a saved conversation asks")
	}
}

// TestLoadShowsTheEngineSettings: a checkpoint restores its own
// settings; the status bar, the stats panel and the next change read
// them, not the ones the screen had.
func TestLoadShowsTheEngineSettings(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	saved := engine.DefaultSettings()
	saved.Speculation, saved.DraftLen, saved.Thinking, saved.System = engine.SpecModeOff, 2, true, "Be terse."
	f.AddCheckpoint(engine.CheckpointInfo{Name: "terse", Created: testTime, Bundle: "demo-r1-small", Compatible: true},
		[]engine.Message{{Role: "user", Content: "q"}, {Role: "model", Content: "a"}}, saved)
	typeText(m, "/load terse")
	m.Update(press("enter"))
	drain(m, f)
	if m.turn.settings != saved {
		t.Fatalf("settings on screen %+v, want %+v", m.turn.settings, saved)
	}
	m.Update(press("ctrl+t"))
	got := plain(m)
	for _, want := range []string{"greedy · think", "spec off", "off · draft 2"} {
		if !strings.Contains(got, want) {
			t.Errorf("the screen lacks %q after the load:\n%s", want, got)
		}
	}
	typeText(m, "/think off")
	m.Update(press("enter"))
	drain(m, f)
	if toast := xansi.Strip(m.toast.View()); !strings.Contains(toast, "thinking off") {
		t.Fatalf("/think off after loading a thinking checkpoint: %q", toast)
	}
	typeText(m, "/system")
	m.Update(press("enter"))
	if toast := xansi.Strip(m.toast.View()); !strings.Contains(toast, "System prompt: Be terse.") {
		t.Fatalf("/system without text: %q", toast)
	}
	typeText(m, "/system clear")
	m.Update(press("enter"))
	drain(m, f)
	if m.turn.settings.System != "" || f.Settings().System != "" {
		t.Fatalf("/system clear left %q", m.turn.settings.System)
	}
}

// TestExportIntoTheDataFolder: /export without a name writes into the
// exports folder (not the current one), an empty conversation is refused,
// and a failure names the file, never a temporary one.
func TestExportIntoTheDataFolder(t *testing.T) {
	exports := filepath.Join(t.TempDir(), "data", "exports")
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{ExportDir: exports})
	run := func(line string) string {
		t.Helper()
		typeText(m, line)
		_, cmd := m.Update(press("enter"))
		if len(m.conv.msgs) > 0 { // the command is the export itself (not a toast's timer)
			m.Update(cmd())
		}
		return strings.Join(strings.Fields(m.toast.text), " ")
	}
	if got := run("/export"); !strings.Contains(got, "nothing to export") {
		t.Fatalf("/export of an empty conversation: %q", got)
	}
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "hi"}, {Role: "model", Content: "hello"}}})
	want := filepath.Join(exports, "orchard-20260314-150926.md")
	if got := run("/export"); !strings.Contains(got, "Exported the conversation to "+want) {
		t.Fatalf("/export: %q", got)
	}
	if fi, err := os.Stat(want); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("export file: %v %v", fi, err)
	}
	if got := run(`/export "my notes.md"`); !strings.Contains(got, filepath.Join(exports, "my notes.md")) {
		t.Fatalf("/export with a quoted name: %q", got)
	}
	// A folder in the way: the error names the file and the reason only.
	os.Mkdir(filepath.Join(exports, "taken.md"), 0o700)
	got := run("/export taken.md")
	if !strings.Contains(got, "The conversation was not exported: cannot write "+filepath.Join(exports, "taken.md")) || strings.Contains(got, ".tmp") {
		t.Fatalf("export failure: %q", got)
	}
}

// TestNamesWithSpaces: checkpoint names with spaces work in every
// command, quoted or (for one-name commands) not; completion quotes them.
func TestNamesWithSpaces(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "q"}, {Role: "model", Content: "a"}}})
	enter := func(line string) {
		typeText(m, line)
		m.Update(press("enter"))
		drain(m, f)
	}
	enter(`/save "my chat"`)
	enter("/save second one")
	if names := strings.Join(m.ckpts.Names(), "|"); !strings.Contains(names, "my chat") || !strings.Contains(names, "second one") {
		t.Fatalf("saved %q", names)
	}
	typeText(m, "/load my")
	if !m.comp.Visible() || m.comp.items[0].insert != `/load "my chat"` {
		t.Fatalf("completion of a name with a space: %+v", m.comp.items)
	}
	m.input.Reset()
	m.comp.Hide()
	enter(`/rename "my chat" "our chat"`)
	enter("/rename second one first one")
	names := strings.Join(m.ckpts.Names(), "|")
	if !strings.Contains(names, "our chat") || !strings.Contains(names, "first one") || strings.Contains(names, "my chat") {
		t.Fatalf("after the renames: %q (calls %v)", names, f.Calls())
	}
	// Saving over an existing name asks; only y replaces.
	enter("/save our chat")
	if !strings.Contains(plain(m), `A checkpoint "our chat" exists; saving replaces it.`) {
		t.Fatalf("saving over a name does not ask:\n%s", plain(m))
	}
	before := len(f.Calls())
	m.Update(press("n"))
	if len(f.Calls()) != before {
		t.Fatalf("n saved: %v", f.Calls()[before:])
	}
	enter("/save our chat")
	m.Update(press("y"))
	drain(m, f)
	if calls := f.Calls(); calls[len(calls)-1] != "SaveCheckpoint our chat" {
		t.Fatalf("y did not save: %v", calls[before:])
	}
	enter(`/delete "first one"`)
	m.Update(press("y"))
	drain(m, f)
	if strings.Contains(strings.Join(m.ckpts.Names(), "|"), "first one") {
		t.Fatalf("delete with a quoted name: %v", m.ckpts.Names())
	}
}

// TestInterruptedReplyIsMarked: a reply cut short in an earlier session
// (a dropped connection) is marked when the conversation comes back.
func TestInterruptedReplyIsMarked(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 80, 24, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "q"},
		{Role: "model", Content: "the reply was going", Interrupted: true}}})
	if got := plain(m); !strings.Contains(got, "interrupted · this reply was cut short") {
		t.Fatalf("no mark:\n%s", got)
	}
}

// TestReadableWidthAndTinyTerminal: at 200 columns a reply wraps at about
// 100; a 20×10 terminal gets a notice instead of a broken layout.
func TestReadableWidthAndTinyTerminal(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 200, 50, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "q"}, {Role: "model", Content: strings.Repeat("word ", 200)}}})
	longest := 0
	for _, l := range strings.Split(plain(m), "\n") {
		if strings.Contains(l, "word") {
			longest = max(longest, xansi.StringWidth(strings.TrimRight(l, " ")))
		}
	}
	if longest > maxTextWidth+len(gutter) || longest < maxTextWidth-10 {
		t.Fatalf("reply lines are %d columns at a width of 200", longest)
	}
	m.Update(tea.WindowSizeMsg{Width: 20, Height: 10})
	got := plain(m)
	if !strings.Contains(strings.Join(strings.Fields(got), " "), "orchard needs at least 40×10") {
		t.Fatalf("no notice at 20×10:\n%s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if xansi.StringWidth(l) > 20 {
			t.Fatalf("a line is wider than the terminal: %q", l)
		}
	}
}
