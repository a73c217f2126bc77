package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/orchard-llm/orchard/engine"
)

// Golden views: the screen at fixed sizes through a fixed colour
// profile. Regenerate with: go test ./tui/ -run TestGolden -update

var goldenSizes = [][2]int{{80, 24}, {120, 40}, {200, 50}}

func goldenMetrics() engine.TurnMetrics {
	return engine.TurnMetrics{PromptTokens: 412, ReusedTokens: 380, GeneratedTokens: 96, FinishReason: "eos",
		TTFTSeconds: 0.184, PrefillSeconds: 0.12, PrefillTokPerSec: 266.7, DecodeTokPerSec: 31.42,
		PerTokenMillis: []float64{30, 29, 41, 28, 35, 30, 33, 52, 29, 31, 30, 28},
		PerTokenMinMs:  28, PerTokenMedianMs: 30, PerTokenMaxMs: 52, PerTokenMeanMs: 31.8,
		ContextUsed: 508, ContextLimit: 2048,
		Spec: engine.SpecStats{Enabled: true, State: engine.SpecAdaptive, Rounds: 40, Drafted: 90, Accepted: 61,
			FallbackRounds: 10, AcceptanceRate: 0.678, PLDRate: 0.55, MeanAccepted: 2.03},
		Memory: engine.Memory{FootprintBytes: 612 << 20, FootprintPeakBytes: 655 << 20, ModelBytes: 2560 << 20,
			ModelPeakBytes: 2600 << 20, AvailableBytes: 10 << 30, AvailableLowBytes: 9 << 30}}
}

const goldenReply = "Apple orchards need **full sun** and well-drained soil.\n\n" +
	"1. Plant in early spring.\n2. Prune in late winter.\n3. Thin the fruit in June.\n\n" +
	"```sh\norchard --model ~/models/gemma\n```\n\nAsk about pollination next."

// conversationScene has one finished exchange and a second turn
// streaming.
func conversationScene(m *Model, finishSecond bool) {
	send(m, engine.Cleared{Messages: []engine.Message{
		{Role: "user", Content: "How do I grow apples?"},
	}})
	send(m, engine.Started{Turn: 0, PromptTokens: 412, ReusedTokens: 380})
	send(m, &engine.Delta{Text: goldenReply, Tokens: []int{1, 2, 3, 4}, FromDraft: []bool{false, true, true, false},
		Live: engine.Live{Generated: 96, DecodeTokPerS: 30.1, LastTokenMs: 31, ContextUsed: 508, ContextLimit: 2048, SpecState: engine.SpecAdaptive, AcceptanceRate: 0.66}})
	send(m, engine.Finished{Reply: goldenReply, Metrics: goldenMetrics()})
	m.conv.AddUser("And pollination?")
	send(m, engine.Started{Turn: 2, PromptTokens: 520, ReusedTokens: 508})
	send(m, &engine.Delta{Text: "Most apple varieties need a **second variety** nearby that", Tokens: []int{5, 6, 7},
		FromDraft: []bool{true, true, false},
		Live:      engine.Live{Generated: 11, DecodeTokPerS: 28.7, LastTokenMs: 34, ContextUsed: 531, ContextLimit: 2048, SpecState: engine.SpecAdaptive, AcceptanceRate: 0.7}})
	if finishSecond {
		met := goldenMetrics()
		met.PromptTokens, met.ReusedTokens, met.GeneratedTokens = 520, 508, 11
		send(m, engine.Finished{Reply: "Most apple varieties need a **second variety** nearby that flowers at the same time.", Metrics: met})
	}
}

func goldenCheckpoints(f *FakeEngine) {
	f.AddCheckpoint(engine.CheckpointInfo{Name: "apples", Created: testTime, Turns: 4, Tokens: 1210, Bytes: 44 << 20,
		Bundle: "demo-r1-small", Compatible: true}, nil)
	f.AddCheckpoint(engine.CheckpointInfo{Name: "e4b-notes", Created: testTime.Add(-26 * 3600e9), Turns: 12, Tokens: 1900,
		Bytes: 130 << 20, Bundle: "gemma-4-e4b-it-coreml-speculative"}, nil)
	f.AddCheckpoint(engine.CheckpointInfo{Name: "果樹園の計画 🍎", Created: testTime.Add(-3600e9), Turns: 2, Tokens: 12345,
		Bytes: 9 << 20, Bundle: "demo-r1-small", Compatible: true}, nil)
}

func goldenHistory(f *FakeEngine) {
	f.AddHistory(engine.HistoryInfo{ID: "20260314-140000-a1", Title: "How do I grow apples in a small garden?", Updated: testTime.Add(-3600e9),
		Turns: 3, Tokens: 1210, KV: true, Bundle: "demo-r1-small", Compatible: true},
		[]engine.Message{{Role: "user", Content: "How do I grow apples in a small garden?"}, {Role: "model", Content: "Choose a dwarf apple rootstock."}})
	f.AddHistory(engine.HistoryInfo{ID: "20260313-090000-b2", Title: "Plan the pruning calendar", Updated: testTime.Add(-30 * 3600e9),
		Turns: 7, KV: false, Bundle: "demo-r1-small", Compatible: true},
		[]engine.Message{{Role: "user", Content: "Plan the pruning calendar"}, {Role: "model", Content: "Prune apple and pear trees in late winter."}})
	f.AddHistory(engine.HistoryInfo{ID: "20260301-120000-c3", Title: "果樹園の計画 🍎", Updated: testTime.Add(-300 * 3600e9),
		Turns: 2, Tokens: 400, KV: true, Bundle: "gemma-4-e4b-it-coreml-speculative"},
		[]engine.Message{{Role: "user", Content: "果樹園の計画 🍎"}, {Role: "model", Content: "りんご apple"}})
}

func TestGolden(t *testing.T) {
	scenes := []struct {
		name    string
		profile colorprofile.Profile
		opts    Options
		setup   func(m *Model, f *FakeEngine)
	}{
		{"welcome", colorprofile.NoTTY, Options{}, func(*Model, *FakeEngine) {}},
		{"streaming", colorprofile.NoTTY, Options{}, func(m *Model, _ *FakeEngine) { conversationScene(m, false) }},
		{"streaming-256", colorprofile.ANSI256, Options{}, func(m *Model, _ *FakeEngine) { conversationScene(m, false) }},
		{"stats", colorprofile.NoTTY, Options{}, func(m *Model, _ *FakeEngine) {
			conversationScene(m, true)
			m.Update(press("ctrl+t"))
		}},
		{"checkpoints", colorprofile.NoTTY, Options{}, func(m *Model, f *FakeEngine) {
			goldenCheckpoints(f)
			conversationScene(m, true)
			m.Update(press("ctrl+s"))
			drain(m, f)
			m.Update(press("tab"))
		}},
		{"completion", colorprofile.NoTTY, Options{}, func(m *Model, _ *FakeEngine) {
			conversationScene(m, true)
			typeText(m, "/s")
		}},
		{"palette", colorprofile.NoTTY, Options{}, func(m *Model, _ *FakeEngine) {
			m.Update(press("ctrl+p"))
			typeText(m, "check")
		}},
		{"help", colorprofile.NoTTY, Options{}, func(m *Model, _ *FakeEngine) { m.Update(press("?")) }},
		{"drafts", colorprofile.ANSI256, Options{}, func(m *Model, _ *FakeEngine) {
			conversationScene(m, true)
			m.Update(press("ctrl+x"))
		}},
		{"nocolor", colorprofile.ASCII, Options{Env: []string{"NO_COLOR=1"}}, func(m *Model, _ *FakeEngine) {
			conversationScene(m, true)
			m.Update(press("ctrl+x"))
		}},
		{"light", colorprofile.ANSI256, Options{Theme: "light"}, func(m *Model, _ *FakeEngine) { conversationScene(m, true) }},
		{"confirm", colorprofile.NoTTY, Options{}, func(m *Model, f *FakeEngine) {
			goldenCheckpoints(f)
			conversationScene(m, true)
			m.Update(press("ctrl+s"))
			drain(m, f)
			typeText(m, "/delete apples")
			m.Update(press("enter"))
		}},
		{"versions", colorprofile.NoTTY, Options{}, func(m *Model, _ *FakeEngine) {
			send(m, engine.Cleared{Messages: []engine.Message{
				{Role: "user", Content: "How do I grow apples?"},
				{Role: "model", Content: goldenReply, Version: 1, Versions: 3},
				{Role: "user", Content: "And pollination, briefly?", Version: 1, Versions: 2},
				{Role: "model", Content: "Plant a second variety that flowers at the same time."},
			}})
			m.Update(press("up")) // edit the last message
		}},
		{"history", colorprofile.NoTTY, Options{}, func(m *Model, f *FakeEngine) {
			goldenHistory(f)
			conversationScene(m, true)
			m.Update(press("ctrl+l"))
			drain(m, f)
			typeText(m, "apple")
			drain(m, f)
		}},
		{"find", colorprofile.ANSI256, Options{}, func(m *Model, _ *FakeEngine) {
			conversationScene(m, true)
			m.Update(press("ctrl+f"))
			typeText(m, "apple")
			m.Update(press("enter"))
		}},
		{"html", colorprofile.NoTTY, Options{}, func(m *Model, _ *FakeEngine) {
			// HTML outside code shows as written (glamour would drop it).
			send(m, engine.Cleared{Messages: []engine.Message{
				{Role: "user", Content: "List the steps as HTML."},
				{Role: "model", Content: "<details>\n<summary>Steps</summary>\n\n1. Dig the hole.\n2. Plant the tree.\n</details>\n\nA stray <unused192> token, and `<li>` in code."},
			}})
		}},
		{"error", colorprofile.NoTTY, Options{}, func(m *Model, _ *FakeEngine) {
			conversationScene(m, true)
			send(m, engine.Failed{Op: "load", Err: errors.New(`checkpoint "e4b-notes" was made with gemma-4-e4b-it-coreml-speculative (v2, identity 1c2d3e4f5a6b), not demo-r1-small (r1, identity 9f8e7d6c5b4a); open that bundle with orchard --model DIR to load it`)})
		}},
	}
	for _, sc := range scenes {
		for _, size := range goldenSizes {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				f := testFake(t, FakeOptions{})
				opts := sc.opts
				if opts.Env == nil {
					opts.Env = []string{"HOME=/home/test"}
				}
				m := newTestModel(t, f, size[0], size[1], opts)
				drain(m, f)
				sc.setup(m, f)
				golden.RequireEqual(t, render(m, sc.profile))
			})
		}
	}
}

// TestGoldenTooSmall: a terminal too small for the layout gets a notice,
// not a broken screen.
func TestGoldenTooSmall(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 20, 10, Options{Env: []string{"HOME=/home/test"}})
	conversationScene(m, true)
	got := render(m, colorprofile.NoTTY)
	if !strings.Contains(strings.Join(strings.Fields(got), " "), "needs at least 40×10") {
		t.Fatalf("no notice at 20×10:\n%s", got)
	}
	golden.RequireEqual(t, got)
}
