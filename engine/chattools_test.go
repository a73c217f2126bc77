package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
	"github.com/orchard-llm/orchard/tools"
)

// chatTurn is one turn of the chat's loop as a test sees it.
type chatTurn struct {
	ids   []int
	reply string
	f     Finished
	evs   []Event
}

func chatEmit(ct *chatTurn) func(Event) {
	return func(ev Event) {
		ct.evs = append(ct.evs, ev)
		switch x := ev.(type) {
		case *Delta:
			ct.ids = append(ct.ids, x.Tokens...)
			ct.reply += x.Text
		case Finished:
			ct.f = x
		}
	}
}

// chatLoop runs the chat's tool loop of toolScript on s from the user's
// question (unless from > 0: s is restored after the first call), giving
// each call its toolLoop result, and returns every reply's ids; prefilled
// reports the tokens each results turn prefilled.
func chatLoop(t *testing.T, s *Session, cc *countingChain, from int, stopAt int) (ids [][]int, prefilled []int) {
	t.Helper()
	if from == 0 {
		var ct chatTurn
		if err := s.Send("What is the weather in Paris?", chatEmit(&ct)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ct.ids)
		if ct.f.Metrics.FinishReason != "tool_calls" || !reflect.DeepEqual(ct.f.Calls, []tools.Call{toolLoop[0].call}) {
			t.Fatalf("first turn: %q, finish %s, calls %v", ct.reply, ct.f.Metrics.FinishReason, ct.f.Calls)
		}
	}
	for i := max(from, 0); i < len(toolLoop) && i < stopAt; i++ {
		if got := s.AwaitedCalls(); !reflect.DeepEqual(got, []tools.Call{toolLoop[i].call}) {
			t.Fatalf("step %d: awaited %v", i, got)
		}
		var ct chatTurn
		before := cc.prefilled
		if err := s.ToolResults([]tools.Response{{Name: toolLoop[i].call.Name, Value: toolLoop[i].result}}, chatEmit(&ct)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		ids, prefilled = append(ids, ct.ids), append(prefilled, cc.prefilled-before)
		last := i == len(toolLoop)-1
		if last {
			if ct.reply != "Sunny and 15 °C in Paris, for three days." || ct.f.Metrics.FinishReason != "eos" {
				t.Fatalf("answer %q (%s)", ct.reply, ct.f.Metrics.FinishReason)
			}
		} else if ct.f.Metrics.FinishReason != "tool_calls" || !reflect.DeepEqual(ct.f.Calls, []tools.Call{toolLoop[i+1].call}) {
			t.Fatalf("step %d: %q, finish %s, calls %#v", i, ct.reply, ct.f.Metrics.FinishReason, ct.f.Calls)
		}
	}
	return ids, prefilled
}

func chatToolSession(t *testing.T, b *bundle.Bundle, rt *reference.Scripted, set Settings) (*Session, *countingChain) {
	t.Helper()
	if rt == nil {
		rt = scriptedRuntime(t, b, toolScript)
	}
	s := scriptedSession(t, b, rt, set)
	cc := &countingChain{Chain: s.chain}
	s.chain = cc
	if _, err := s.SetTools(ChatTools{Decls: toolDecls}); err != nil {
		t.Fatal(err)
	}
	return s, cc
}

// TestChatToolLoop: the chat's own turns call the tools of toolScript one
// after the other within one model turn. Each results turn prefills only
// the result (the calls keep the bytes the model wrote); the ids are the
// same with speculation on and off, and after a checkpoint taken while a
// call waits and restored into a fresh session; the record holds the
// calls and results, and the template renders the loop as one model turn.
func TestChatToolLoop(t *testing.T) {
	b := testbundle.Preset(t, "v2", "tiny-long")
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	set := DefaultSettings()
	set.MaxTokens, set.Speculation = 64, SpecModeOff
	s, cc := chatToolSession(t, b, nil, set)
	off, prefilled := chatLoop(t, s, cc, 0, len(toolLoop))
	for i, n := range prefilled {
		res, _ := tools.RenderResponses([]tools.Response{{Name: toolLoop[i].call.Name, Value: toolLoop[i].result}})
		if want := len(tok.Encode(res.String())); n != want {
			t.Errorf("results turn %d prefilled %d tokens, want %d (the result alone)", i, n, want)
		}
	}
	msgs := s.Messages()
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if want := "user model tool model tool model tool model"; strings.Join(roles, " ") != want {
		t.Fatalf("record %v, want %s", roles, want)
	}
	if !reflect.DeepEqual(msgs[1].Calls, []tools.Call{toolLoop[0].call}) || msgs[2].Responses[0].Name != "get_weather" {
		t.Fatalf("record: %#v", msgs[1:3])
	}

	set.Speculation = SpecModeOn
	son, _ := chatToolSession(t, b, nil, set)
	scc := son.chain.(*countingChain)
	if on, _ := chatLoop(t, son, scc, 0, len(toolLoop)); !reflect.DeepEqual(on, off) {
		t.Fatalf("speculation on %v, off %v", on, off)
	}

	// A checkpoint while the second call waits, restored into another
	// session after it ran another conversation, goes on with the same
	// ids (the same runtime: a fresh scripted one cannot tell where the
	// restored turn begins, and its weights would answer).
	set.Speculation = SpecModeOff
	rt := scriptedRuntime(t, b, toolScript)
	a, acc := chatToolSession(t, b, rt, set)
	head, _ := chatLoop(t, a, acc, 0, 1)
	cp, err := a.Checkpoint("mid", coreml.CPUOnly)
	if err != nil {
		t.Fatal(err)
	}
	r, rcc := chatToolSession(t, b, rt, set)
	replyText(t, r, "something else entirely") // a conversation to replace
	if err := r.Restore(cp); err != nil {
		t.Fatal(err)
	}
	tail, _ := chatLoop(t, r, rcc, 1, len(toolLoop))
	if got := append(head, tail...); !reflect.DeepEqual(got, off) {
		t.Fatalf("restored %v, uninterrupted %v", got, off)
	}
}

// TestChatToolRefusals: results no call waits for are refused, and so are
// calls past chat.tools.max_calls (kept in the record, not asked for).
func TestChatToolRefusals(t *testing.T) {
	b := testbundle.Preset(t, "v2", "tiny-long")
	set := DefaultSettings()
	set.MaxTokens, set.Speculation = 64, SpecModeOff
	s := scriptedSession(t, b, scriptedRuntime(t, b, toolScript), set)
	if _, err := s.SetTools(ChatTools{Decls: toolDecls, MaxCalls: 1}); err != nil {
		t.Fatal(err)
	}
	var ct chatTurn
	if err := s.ToolResults([]tools.Response{{Name: "f", Value: 1}}, chatEmit(&ct)); err != ErrNoCalls {
		t.Fatalf("results without a call: %v", err)
	}
	if err := s.Send("What is the weather in Paris?", chatEmit(&ct)); err != nil {
		t.Fatal(err)
	}
	if err := s.ToolResults([]tools.Response{Refused(toolLoop[0].call)}, chatEmit(&ct)); err != nil {
		t.Fatal(err)
	}
	if ct.f.Metrics.FinishReason != "tool_limit" || len(ct.f.Calls) != 0 || s.AwaitedCalls() != nil {
		t.Fatalf("second call past the bound: finish %s, calls %v", ct.f.Metrics.FinishReason, ct.f.Calls)
	}
	if m := s.Messages(); len(m[3].Calls) != 1 {
		t.Fatalf("the call past the bound is not in the record: %#v", m[3])
	}
}
