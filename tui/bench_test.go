package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/testmedia"
)

// benchTranscript is n turns of mixed markdown.
func benchTranscript(n int) []engine.Message {
	msgs := make([]engine.Message, 0, 2*n)
	for i := range n {
		msgs = append(msgs,
			engine.Message{Role: "user", Content: fmt.Sprintf("Question %d: how do the figures of turn %d compare?", i, i)},
			engine.Message{Role: "model", Content: goldenReply})
	}
	return msgs
}

// BenchmarkViewStreaming500 is one streaming step on a 500-turn
// conversation: a token arrives, the frame tick re-renders the tail,
// and the screen is drawn. Target: under 2 ms.
func BenchmarkViewStreaming500(b *testing.B) {
	f := testFake(b, FakeOptions{})
	m := newTestModel(b, f, 120, 40, Options{})
	send(m, engine.Cleared{Messages: benchTranscript(500)})
	m.Update(press("ctrl+t"))
	send(m, engine.Started{PromptTokens: 1900, ReusedTokens: 1800})
	toks := splitTokens(strings.Repeat(goldenReply+"\n\n", 20))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tok := toks[i%len(toks)]
		m.Update(engineMsg{events: []engine.Event{&engine.Delta{Text: tok, Tokens: []int{i}, FromDraft: []bool{i%3 != 0},
			Live: engine.Live{Generated: i, DecodeTokPerS: 30, LastTokenMs: 33, ContextUsed: 1900 + i%100, ContextLimit: 2048, SpecState: engine.SpecOn}}}})
		m.Update(frameMsg{})
		_ = m.View()
	}
}

// BenchmarkView500 is a redraw with nothing new (a keypress, a resize
// of nothing): what every Update costs on top of its own work.
func BenchmarkView500(b *testing.B) {
	m := newTestModel(b, testFake(b, FakeOptions{}), 120, 40, Options{})
	send(m, engine.Cleared{Messages: benchTranscript(500)})
	m.View()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkStreamingMarkdownPerToken is the cost of the streaming
// markdown path per token over a whole ~600-token reply (stable prefix
// cached, tail re-rendered on every token — the worst case, as frames
// batch tokens in practice).
func BenchmarkStreamingMarkdownPerToken(b *testing.B) {
	md := newMarkdown(true, false)
	text := strings.Repeat(goldenReply+"\n\n", 6)
	toks := splitTokens(text)
	b.ReportMetric(float64(len(toks)), "tokens/reply")
	b.ResetTimer()
	for b.Loop() {
		var s streamMarkdown
		reply := ""
		for _, t := range toks {
			reply += t
			s.render(md, reply, 100, 0)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(toks)), "ns/token")
}

// BenchmarkFullMarkdownPerToken is the naive path for comparison:
// the whole reply re-rendered for every token.
func BenchmarkFullMarkdownPerToken(b *testing.B) {
	md := newMarkdown(true, false)
	text := strings.Repeat(goldenReply+"\n\n", 6)
	toks := splitTokens(text)
	for b.Loop() {
		reply := ""
		for _, t := range toks {
			reply += t
			md.render(reply, 100)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(toks)), "ns/token")
}

// BenchmarkFind500 is a keystroke in the search bar on a 500-turn
// conversation: every line shown searched again, the view redrawn
// around the newest match with the matches highlighted.
func BenchmarkFind500(b *testing.B) {
	m := newTestModel(b, testFake(b, FakeOptions{}), 120, 40, Options{})
	send(m, engine.Cleared{Messages: benchTranscript(500)})
	m.Update(press("ctrl+f"))
	m.View()
	qs := []string{"prune", "orchard", "figures of turn 4"}
	for i := 0; b.Loop(); i++ {
		m.conv.SetFind(qs[i%len(qs)])
		_ = m.View()
	}
}

// BenchmarkViewStreamingFind500 is BenchmarkViewStreaming500 with the
// search open: each frame finds the matches again, but only the
// streaming reply is searched anew.
func BenchmarkViewStreamingFind500(b *testing.B) {
	f := testFake(b, FakeOptions{})
	m := newTestModel(b, f, 120, 40, Options{})
	send(m, engine.Cleared{Messages: benchTranscript(500)})
	send(m, engine.Started{PromptTokens: 1900, ReusedTokens: 1800})
	m.Update(press("ctrl+f"))
	typeText(m, "orchard")
	toks := splitTokens(strings.Repeat(goldenReply+"\n\n", 20))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		m.Update(engineMsg{events: []engine.Event{&engine.Delta{Text: toks[i%len(toks)], Tokens: []int{i}, FromDraft: []bool{false},
			Live: engine.Live{Generated: i, DecodeTokPerS: 30, ContextUsed: 1900, ContextLimit: 2048}}}})
		m.Update(frameMsg{})
		_ = m.View()
	}
}

// BenchmarkCheckpointsPanelThumbnail is a redraw of the checkpoints panel
// with the selected checkpoint's picture shown, against a baseline of
// decoding that picture's PNG on every redraw as the panel once did.
func BenchmarkCheckpointsPanelThumbnail(b *testing.B) {
	c := newCheckpoints(newStyles(true, false))
	c.SetSize(100, 30)
	pic := testmedia.PNG(1, 256, 192)
	c.SetList([]engine.CheckpointInfo{{Name: "alpha", Thumbnail: pic, Media: 1}}, "")
	c.focused = true
	b.Run("panel", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = c.View()
		}
	})
	b.Run("baseline-redecode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = c.View()
			_ = halfBlocks(pic, thumbCols) // the decode each redraw once did too
		}
	})
}

// BenchmarkCostPerKey is a key typed after a 50 KB paste, with the
// screen redrawn: "typing" alone, and "priced" with the cost above the
// input computed as the program does (its command run, its answer
// taken in) by the engine's Estimator on the tiny-long bundle. The
// difference is what the cost display adds per key.
func BenchmarkCostPerKey(b *testing.B) {
	para := "Apple trees want full sun, well-drained soil and a winter prune; pears are much the same. "
	paste := strings.Repeat(para, 50*1024/len(para)+1)[:50*1024]
	for _, priced := range []bool{false, true} {
		name := "typing"
		if priced {
			name = "priced"
		}
		b.Run(name, func(b *testing.B) {
			eng := realEngine(b, smallSettings())
			m := newTestModel(b, eng, 120, 40, Options{})
			if !priced {
				m.cost.src = nil
			}
			m.Update(tea.PasteMsg{Content: paste})
			m.Update(press(" "))
			if priced {
				price(b, m)
			}
			keys := []string{"a", "b", "c", " "}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				seq := m.cost.seq
				m.Update(press(keys[i%len(keys)]))
				if priced {
					if m.cost.seq == seq {
						b.Fatal("the key was not priced")
					}
					m.Update(m.costCmd()()) // the command Update returned, run as the program runs it
				}
				_ = m.View()
			}
			if priced && (!m.cost.have || m.cost.cost.Text < 5000) {
				b.Fatalf("the 50 KB message is not priced: %+v", m.cost.cost)
			}
		})
	}
}
