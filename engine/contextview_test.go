package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/media"
)

// TestEstimatorCost: the cost the estimator gives a message before it is
// sent — text, a picture, a clip — is what its turn then feeds: the
// window's tokens plus the message's are the turn's prompt, exactly.
func TestEstimatorCost(t *testing.T) {
	dir := t.TempDir()
	pic, clip := writePNG(t, dir, 1, 40, 30), writeWAV(t, dir, 0.6, 440)
	for _, tc := range mediaCases(pic, clip) {
		t.Run(tc.family+"-"+tc.kind, func(t *testing.T) {
			b := testbundle.Tiny(t, tc.family)
			s := mediaSession(t, b, Settings{MaxTokens: 4, System: "Be brief.", Speculation: SpecModeOff})
			var used, reserve atomic.Int64
			x, err := s.newEstimator(&used, &reserve)
			if err != nil {
				t.Fatal(err)
			}
			var f contextFigures
			f.update(s)
			used.Store(f.used.Load())
			reserve.Store(f.reserve.Load())
			text := strings.Repeat("pears and plums ", 3)
			plain := x.Cost(text)
			want := text
			if x.trims {
				want = strings.TrimSpace(text)
			}
			if plain.Text != len(s.tok.EncodeLiteral(want)) || plain.Template == 0 || plain.Reserve != 4 {
				t.Fatalf("text cost %+v", plain)
			}
			// The file's soft tokens as its encoder will give them.
			enc, err := s.Media.Encode(tc.kind, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			rows := enc.Attachment.Tokens()
			if tc.kind == MediaAudio {
				if want := media.SoftTokens(int(0.6 * 16000)); rows != want {
					t.Fatalf("clip rows %d, media.SoftTokens %d", rows, want)
				}
			}
			withFile := x.Cost(text, MediaCost{Name: "f", Kind: tc.kind, Tokens: rows})
			_, st := sendMedia(t, s, text, MediaFile{Kind: tc.kind, Path: tc.path})
			if got := withFile.Used + withFile.Total; got != st.PromptTokens {
				t.Fatalf("estimated %d tokens (%+v), the turn fed %d: %q", got, withFile, st.PromptTokens, s.tok.Decode(s.LastPrompt(), false))
			}
			if withFile.Total-plain.Total <= rows || withFile.Left != withFile.Context-withFile.Used-withFile.Total {
				t.Fatalf("the file adds %d tokens for %d rows: %+v", withFile.Total-plain.Total, rows, withFile)
			}
			// The next message, after the reply: the figures followed.
			f.update(s)
			used.Store(f.used.Load())
			next := x.Cost("And then?")
			_, st = sendMedia(t, s, "And then?")
			if got := next.Used + next.Total; got != st.PromptTokens {
				t.Fatalf("second message: estimated %d tokens (%+v), the turn fed %d", got, next, st.PromptTokens)
			}
		})
	}
}

// TestPinAndElide: a pinned message stays verbatim before the summary
// through compactions (and a checkpoint); a picture replaced by its line
// frees its soft tokens, the file staying in the conversation.
func TestPinAndElide(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	script := compactScript(t)
	set := Settings{MaxTokens: 12, System: "Be brief.", ContextPolicy: ContextCompact}
	s := scriptedSession(t, b, scriptedRuntime(t, b, script), set)
	var run compactRun
	runQuestions(t, s, 1, 1, &run)
	if err := s.Pin(0, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Pin(99, true); err == nil {
		t.Fatal("pinned a message that does not exist")
	}
	runQuestions(t, s, 2, 12, &run)
	if len(run.compacted) == 0 || s.Window() < 2 {
		t.Fatalf("no compaction (window %d)", s.Window())
	}
	prompt := s.tok.Decode(s.LastPrompt(), false)
	pin, sum := strings.Index(prompt, "Q1<turn|>"), strings.Index(prompt, summaryLead)
	if pin < 0 || sum < 0 || pin > sum {
		t.Fatalf("the pinned message is not verbatim before the summary: %q", prompt)
	}
	v, err := s.ContextView()
	if err != nil {
		t.Fatal(err)
	}
	if v.Parts[0].Kind != "pinned" || v.Parts[0].Index != 0 || v.Parts[1].Kind != "summary" || !slices.Equal(v.Pinned, []int{0}) {
		t.Fatalf("view parts %+v", v.Parts)
	}
	cp, err := s.Checkpoint("pinned", 0)
	if err != nil {
		t.Fatal(err)
	}
	r := scriptedSession(t, b, scriptedRuntime(t, b, script), set)
	if err := r.Restore(cp); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.cstate.Pinned, []int{0}) {
		t.Fatalf("restored pins %v", r.cstate.Pinned)
	}
	if err := s.Pin(0, false); err != nil || len(s.cstate.Pinned) != 0 {
		t.Fatalf("unpin: %v %v", err, s.cstate.Pinned)
	}

	// A picture, then its line.
	pic := writePNG(t, t.TempDir(), 3, 40, 30)
	m := mediaSession(t, b, Settings{MaxTokens: 4, Speculation: SpecModeOff})
	sendMedia(t, m, "Look.", MediaFile{Kind: MediaImage, Path: pic})
	rows := m.Messages()[0].Attachments[0].Tokens()
	before, _ := m.ContextView()
	if err := m.ElideMedia(0, 0, "a small striped picture"); err != nil {
		t.Fatal(err)
	}
	if err := m.ElideMedia(0, 1, ""); err == nil {
		t.Fatal("elided an attachment that does not exist")
	}
	after, _ := m.ContextView()
	line := len(m.tok.EncodeLiteral("[picture picture-3.png: a small striped picture]\n"))
	if after.Used > before.Used-rows+line || !after.Parts[0].Media[0].Elided || after.Parts[0].Media[0].Tokens != 0 {
		t.Fatalf("eliding a %d-row picture: %d tokens before, %d after (%+v)", rows, before.Used, after.Used, after.Parts[0])
	}
	_, st := sendMedia(t, m, "And now?")
	text := m.tok.Decode(m.LastPrompt(), false)
	if !strings.Contains(text, "[picture picture-3.png: a small striped picture]") || strings.Contains(text, "<|image|>") {
		t.Fatalf("the prompt after eliding: %q", text)
	}
	if st.PromptTokens > after.Used+len(m.tok.EncodeLiteral("And now?"))+12 || len(m.Messages()[0].Attachments) != 1 {
		t.Fatalf("prompt %d tokens, attachments %d", st.PromptTokens, len(m.Messages()[0].Attachments))
	}
}

// TestContextViewAddsUp: the parts and the system prompt make the window;
// the sliding layers' reach is the last window of it, a ring on
// stateful3.
func TestContextViewAddsUp(t *testing.T) {
	for _, fam := range []string{"r1", "stateful3"} {
		b := testbundle.Tiny(t, fam)
		s := newSession(t, b, Settings{MaxTokens: 6, System: "Be brief."})
		reply(t, s, "Hello there.")
		reply(t, s, "Tell me more.")
		v, err := s.ContextView()
		if err != nil {
			t.Fatal(err)
		}
		sum := v.System
		for _, p := range v.Parts {
			sum += p.Tokens
		}
		if sum != v.Used || len(v.Parts) != 4 || v.Free != v.Context-v.Used || v.Cached == 0 {
			t.Fatalf("%s: %+v", fam, v)
		}
		sl := v.Sliding
		if sl.Window != b.Geometry.SlidingWindow || sl.Ring != (fam == "stateful3") || sl.From != max(0, v.Used-sl.Window) ||
			sl.Part < 0 || v.Parts[sl.Part].Start > sl.From || v.Parts[sl.Part].Start+v.Parts[sl.Part].Tokens <= sl.From {
			t.Fatalf("%s: sliding %+v of %+v", fam, sl, v.Parts)
		}
	}
}

// TestPolicySwitchLive: the context policy changes on a running engine
// (Settings): under stop a message that does not fit is refused with
// advice that names neither stop nor /clear; switched to compact, the
// same message compacts and is answered. Compact runs on demand too, and
// the estimator's figures follow the conversation.
func TestPolicySwitchLive(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := Settings{MaxTokens: 12, System: "Be brief.", ContextPolicy: ContextStop}
	store := tempStore(t) // before the engine: removed after it closed
	s := scriptedSession(t, b, scriptedRuntime(t, b, compactScript(t)), set)
	e := Start(s, ModelInfo{})
	defer e.Close()
	e.UseHistory(store, HistoryPolicy{KeepKV: 1, KVBudget: 1 << 30})
	next := func(until func(Event) bool) []Event {
		t.Helper()
		var evs []Event
		for ev := range e.Events() {
			evs = append(evs, ev)
			if until(ev) {
				return evs
			}
		}
		t.Fatal("the events ended")
		return nil
	}
	ends := func(ev Event) bool {
		switch ev.(type) {
		case Finished, Failed, Cancelled, ContextReport:
			return true
		}
		return false
	}
	x, err := e.Estimator()
	if err != nil {
		t.Fatal(err)
	}
	var refused Failed
	n := 0
	for refused.Err == nil {
		n++
		if n > 10 {
			t.Fatal("ten turns fit the 128-token context under stop")
		}
		if n%7 == 0 {
			continue // the weights would answer it; this test wants the script's replies
		}
		before := x.Cost(fmt.Sprintf("Q%d", n))
		e.Send(fmt.Sprintf("Q%d", n))
		evs := next(ends)
		switch last := evs[len(evs)-1].(type) {
		case Failed:
			refused = last
			if before.Fits {
				t.Errorf("the estimator said Q%d fits: %+v", n, before)
			}
		case Finished:
			if !before.Fits && before.Left < 0 {
				t.Errorf("the estimator said Q%d does not fit at all: %+v", n, before)
			}
		}
	}
	msg := refused.Err.Error()
	if !errors.Is(refused.Err, chain.ErrContextFull) || strings.Contains(msg, "/clear") || strings.Contains(msg, "to stop") || !strings.Contains(msg, "compact") {
		t.Fatalf("under stop: %v", refused.Err)
	}
	set.ContextPolicy = ContextCompact
	e.SetSettings(set)
	next(func(ev Event) bool { _, ok := ev.(SettingsChanged); return ok })
	e.Send(fmt.Sprintf("Q%d", n))
	evs := next(ends)
	var compacted bool
	for _, ev := range evs {
		if c, ok := ev.(Compacted); ok && c.Summary == fmt.Sprintf("Summary %d.", c.To) {
			compacted = true
		}
	}
	if _, ok := evs[len(evs)-1].(Finished); !ok || !compacted {
		t.Fatalf("under compact: %#v", evs)
	}
	w := e.Window()
	e.Send("Q20")
	next(ends)
	e.Compact()
	evs = next(ends)
	rep, ok := evs[len(evs)-1].(ContextReport)
	var progress int
	for _, ev := range evs {
		if _, ok := ev.(Compacting); ok {
			progress++
		}
	}
	if f, isF := evs[len(evs)-1].(Failed); isF {
		t.Fatalf("Compact: %v", f.Err)
	}
	if !ok || rep.Op != "compact" || rep.View.Window <= w || e.Window() != rep.View.Window || progress == 0 || len(e.Messages())%2 != 0 {
		t.Fatalf("Compact: window %d (was %d), %d progress events, %d messages: %#v", e.Window(), w, progress, len(e.Messages()), evs)
	}
	e.SetSummary("The user asks numbered questions.")
	rep = next(ends)[0].(ContextReport)
	if rep.View.Summary != "The user asks numbered questions." || !rep.View.Edited || rep.View.Summaries == 0 {
		t.Fatalf("SetSummary: %+v", rep.View)
	}
	if c := x.Cost("Q21"); c.Used != rep.View.Used {
		t.Fatalf("the estimator's figures: used %d, the view's %d", c.Used, rep.View.Used)
	}
	// The history keeps every message, and what the model sees.
	e.Autosave()
	e.Mark(7)
	next(func(ev Event) bool { m, ok := ev.(Marker); return ok && m.ID == 7 })
	infos, err := store.List()
	if err != nil || len(infos) != 1 {
		t.Fatalf("history: %v, %+v", err, infos)
	}
	cp, err := store.Show(infos[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(cp.Conversation.Messages), len(e.Messages()); got != want || want < 2*n {
		t.Fatalf("the history holds %d messages, the conversation %d", got, want)
	}
	r := scriptedSession(t, b, scriptedRuntime(t, b, compactScript(t)), set)
	if err := r.Restore(cp); err != nil {
		t.Fatal(err)
	}
	if r.Window() != e.Window() || r.cstate == nil || r.cstate.Summary != "The user asks numbered questions." || len(r.cstate.Earlier) != rep.View.Summaries {
		t.Fatalf("resumed from the history: window %d, %+v", r.Window(), r.cstate)
	}
}

// BenchmarkEstimatorPerKey: pricing a 50 KB input as it is typed, one
// key at a time at its end, with a picture attached; "encode" is the
// same with the whole text encoded on each key, the baseline.
func BenchmarkEstimatorPerKey(b *testing.B) {
	bun := testbundle.Tiny(b, "r1")
	s := newSession(b, bun, Settings{System: "Be brief."})
	var used, reserve atomic.Int64
	x, err := s.newEstimator(&used, &reserve)
	if err != nil {
		b.Fatal(err)
	}
	base := strings.Repeat("The orchard keeps pears, plums and apples in rows by the wall.\n", 800)[:50_000]
	pic := MediaCost{Name: "p.png", Kind: MediaImage, Tokens: 256}
	for _, mode := range []string{"estimator", "encode"} {
		b.Run(mode, func(b *testing.B) {
			text := []byte(base)
			x.Cost(base, pic)
			i := 0
			for b.Loop() {
				i++
				text = append(text[:50_000], "abcdefg"[:i%7]...)
				if mode == "encode" {
					_ = len(s.tok.EncodeLiteral(string(text)))
					continue
				}
				x.Cost(string(text), pic)
			}
		})
	}
}
