package tools_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/tokenizer"
	"github.com/orchard-llm/orchard/tools"
)

func synthTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	data, err := tokenizer.SynthesizeJSON(tokenizer.MinSynthVocab)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// vocab is a tokenizer with only some tokens.
type vocab map[string]int

func (v vocab) TokenID(s string) (int, bool) { id, ok := v[s]; return id, ok }

// TestLookupTokens: the synthetic tokenizer has the tool tokens, each a
// special token of its own; a tokenizer without them is refused, naming
// what it lacks.
func TestLookupTokens(t *testing.T) {
	tok := synthTokenizer(t)
	got, err := tools.LookupTokens(tok)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{got.DeclOpen, got.DeclClose, got.CallOpen, got.CallClose, got.ResponseOpen, got.ResponseClose, got.Quote}
	for i, s := range tools.Spellings() {
		if text, _ := tok.Token(ids[i]); text != s || !tok.IsSpecial(ids[i]) {
			t.Errorf("%s: id %d is %q, special %v", s, ids[i], text, tok.IsSpecial(ids[i]))
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(ids) {
		t.Errorf("ids repeat: %v", ids)
	}
	_, err = tools.LookupTokens(vocab{"<|tool_call>": 1, "<tool_call|>": 2, "<start_of_turn>": 3})
	if err == nil || !strings.Contains(err.Error(), `<|tool>, <tool|>, <|tool_response>, <tool_response|>, <|"|>`) {
		t.Errorf("a tokenizer without tool tokens: %v", err)
	}
}

// encode tokenizes rendered pieces as a template must: markup with its
// special tokens, content as plain text.
func encode(tok *tokenizer.Tokenizer, t tools.Text) []int {
	var ids []int
	for _, p := range t {
		if p.Literal {
			ids = append(ids, tok.EncodeLiteral(p.Text)...)
		} else {
			ids = append(ids, tok.Encode(p.Text)...)
		}
	}
	return ids
}

// TestToolLoopKeepsPrefix: a three-call loop inside one model turn. The
// model writes a call and <|tool_response>; the host appends the result
// after that marker; generation goes on. Rendering the finished turn again
// from its parsed calls and results gives the very token ids the loop fed,
// so a conversation re-rendered afterwards reuses the whole cached turn.
func TestToolLoopKeepsPrefix(t *testing.T) {
	tok := synthTokenizer(t)
	steps := []struct {
		modelWrites string
		result      any
	}{
		{`<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:2}<tool_call|>`, "15 °C, sunny; tomorrow 17 °C"},
		{`<|tool_call>call:convert{from:<|"|>C<|"|>,to:<|"|>F<|"|>,values:[15,17]}<tool_call|>`, map[string]any{"values": []any{59, 62.6}}},
		{`<|tool_call>call:note{text:<|"|>Paris: {59 °F, 62.6 °F}
"warm"<|"|>}<tool_call|>`, "<turn|> saved"},
	}
	var live []int
	var calls []tools.Call
	var results []tools.Response
	for i, st := range steps {
		live = append(live, tok.Encode(st.modelWrites+tools.ResponseOpen)...) // what the model generated
		_, cs, err := tools.Split(st.modelWrites)
		if err != nil || len(cs) != 1 {
			t.Fatalf("step %d: %v %v", i, cs, err)
		}
		r := tools.Response{Name: cs[0].Name, Value: st.result}
		out, err := tools.RenderResponses([]tools.Response{r})
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, encode(tok, out.After(tools.ResponseOpen))...) // what the host fed
		calls, results = append(calls, cs[0]), append(results, r)
	}
	var again []int
	for i := range calls {
		c, err := tools.RenderCalls(calls[i : i+1])
		if err != nil {
			t.Fatal(err)
		}
		r, err := tools.RenderResponses(results[i : i+1])
		if err != nil {
			t.Fatal(err)
		}
		again = append(again, encode(tok, c)...)
		again = append(again, encode(tok, r)...)
	}
	if !slices.Equal(again, live) {
		t.Fatalf("re-rendered turn differs from the loop's tokens:\n got %v\nwant %v", again, live)
	}
	// The result's "<turn|>" is text, not the end of the turn.
	if n := strings.Count(tok.Decode(live, false), "<turn|>"); n != 1 || slices.Contains(live, 106) {
		t.Errorf("the tool's <turn|> became a control token")
	}
}
