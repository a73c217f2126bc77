package tui

import (
	"errors"
	"fmt"
	"slices"

	"github.com/orchard-llm/orchard/engine"
)

// The fake's side of what the model sees: compaction summarises all but
// the last turn into a fixed text, pins and elisions are kept, and every
// change is answered with a ContextReport, as the engine does.

type fakeContext struct {
	window  int
	summary string
	edited  bool
	pinned  []int
	elided  map[[2]int]string
}

func (f *FakeEngine) reportLocked(op engine.Op) engine.ContextReport {
	c := &f.ctx
	v := engine.ContextView{Context: f.info.Context, Policy: f.settings.ContextPolicy, Reserve: f.info.Context / 4, System: 8,
		Window: c.window, Summary: c.summary, Edited: c.edited, Pinned: slices.Clone(c.pinned)}
	pos := v.System
	add := func(p engine.ContextPart) {
		p.Start = pos
		pos += p.Tokens
		v.Parts = append(v.Parts, p)
	}
	msgs := f.messagesLocked()
	for _, i := range c.pinned {
		if i < c.window {
			add(engine.ContextPart{Kind: "pinned", Index: i, Role: msgs[i].Role, Tokens: countTokens(msgs[i : i+1])})
		}
	}
	if c.summary != "" {
		add(engine.ContextPart{Kind: "summary", Index: -1, Role: "system", Tokens: len(splitTokens(c.summary)) + 6})
	}
	for i := c.window; i < len(msgs); i++ {
		p := engine.ContextPart{Kind: "message", Index: i, Role: msgs[i].Role, Tokens: countTokens(msgs[i : i+1])}
		for a, att := range msgs[i].Attachments {
			mc := engine.MediaCost{Name: att.Name, Kind: att.Kind, Tokens: att.Tokens()}
			if line, ok := c.elided[[2]int{i, a}]; ok {
				mc.Tokens, mc.Elided, mc.Line = 0, true, line
			}
			p.Tokens += mc.Tokens
			p.Media = append(p.Media, mc)
		}
		add(p)
	}
	v.Used, v.Free, v.Cached = pos, v.Context-pos, pos
	return engine.ContextReport{Op: op, View: v}
}

func (f *FakeEngine) contextCmd(op engine.Op, change func(msgs []engine.Message) error) error {
	f.record(string(op))
	f.mu.Lock()
	err := change(f.messagesLocked())
	var rep engine.ContextReport
	if err == nil {
		rep = f.reportLocked(op)
	}
	f.mu.Unlock()
	if err != nil {
		f.emit(engine.Failed{Op: op, Err: err})
		return nil
	}
	f.emit(rep)
	return nil
}

// FakeSummary is what the fake's compaction writes.
const FakeSummary = "The user asked about apples; the model answered about pruning."

func (f *FakeEngine) Compact() error {
	f.record("Compact")
	f.mu.Lock()
	msgs := f.messagesLocked()
	to := lastUser(msgs)
	if to <= f.ctx.window {
		f.mu.Unlock()
		f.emit(engine.Failed{Op: engine.OpCompact, Err: engine.ErrNothingToCompact})
		return nil
	}
	from := f.ctx.window
	f.ctx.window, f.ctx.summary, f.ctx.edited = to, FakeSummary, false
	rep := f.reportLocked(engine.OpCompact)
	f.mu.Unlock()
	f.emit(engine.Compacting{Phase: "prefill", Done: 10, Total: 20})
	f.emit(engine.Compacting{Phase: "summary", Done: 5, Total: 64})
	f.emit(engine.Compacted{Summary: FakeSummary, From: from, To: to, Window: to, SummaryTokens: len(splitTokens(FakeSummary)),
		ContextUsed: rep.View.Used, Cached: 8})
	f.emit(rep)
	return nil
}

func (f *FakeEngine) Pin(index int, pinned bool) error {
	return f.contextCmd(engine.OpPin, func(msgs []engine.Message) error {
		if index < 0 || index >= len(msgs) {
			return fmt.Errorf("pin: there is no message %d", index+1)
		}
		f.ctx.pinned = slices.DeleteFunc(f.ctx.pinned, func(i int) bool { return i == index })
		if pinned {
			f.ctx.pinned = append(f.ctx.pinned, index)
			slices.Sort(f.ctx.pinned)
		}
		return nil
	})
}

func (f *FakeEngine) SetSummary(text string) error {
	return f.contextCmd(engine.OpSummary, func([]engine.Message) error {
		if f.ctx.summary == "" {
			return errors.New("summary: the conversation has no summary yet (/compact makes one)")
		}
		f.ctx.summary, f.ctx.edited = text, true
		return nil
	})
}

func (f *FakeEngine) ElideMedia(index, att int, caption string) error {
	return f.contextCmd(engine.OpElide, func(msgs []engine.Message) error {
		if index < 0 || index >= len(msgs) || att < 0 || att >= len(msgs[index].Attachments) {
			return fmt.Errorf("elide: message %d has no attachment %d", index+1, att+1)
		}
		if f.ctx.elided == nil {
			f.ctx.elided = map[[2]int]string{}
		}
		line := "[picture " + msgs[index].Attachments[att].Name + "]"
		if caption != "" {
			line = "[picture " + msgs[index].Attachments[att].Name + ": " + caption + "]"
		}
		f.ctx.elided[[2]int{index, att}] = line
		return nil
	})
}

func (f *FakeEngine) ContextView() error {
	return f.contextCmd(engine.OpContext, func([]engine.Message) error { return nil })
}
