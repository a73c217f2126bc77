package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// num is a number as the parser returns it.
func num(s string) json.Number { return json.Number(s) }

// callCases are the table: each call, in canonical form, and the
// bytes the model writes for it (keys sorted without regard to case, bare;
// strings between <|"|>; numbers as written).
var callCases = []struct {
	name string
	call Call
	text string
}{
	{"string", Call{"get_weather", map[string]any{"city": "Paris"}},
		`<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>`},
	{"no arguments", Call{"now", map[string]any{}},
		`<|tool_call>call:now{}<tool_call|>`},
	{"sorted keys", Call{"f", map[string]any{"b": num("2"), "a": num("1"), "C": num("3")}},
		`<|tool_call>call:f{a:1,b:2,C:3}<tool_call|>`},
	{"numbers", Call{"set", map[string]any{"i": num("3"), "neg": num("-12"), "f": num("0.25"), "e": num("1.5e-3"), "zero": num("0")}},
		`<|tool_call>call:set{e:1.5e-3,f:0.25,i:3,neg:-12,zero:0}<tool_call|>`},
	{"booleans and null", Call{"toggle", map[string]any{"on": true, "off": false, "none": nil}},
		`<|tool_call>call:toggle{none:null,off:false,on:true}<tool_call|>`},
	{"nested objects", Call{"create", map[string]any{"config": map[string]any{"name": "x", "limits": map[string]any{"cpu": num("2"), "mem": "1G"}}}},
		`<|tool_call>call:create{config:{limits:{cpu:2,mem:<|"|>1G<|"|>},name:<|"|>x<|"|>}}<tool_call|>`},
	{"arrays", Call{"batch", map[string]any{"ids": []any{num("1"), num("2")}, "tags": []any{"a", "b"}, "empty": []any{}, "mixed": []any{true, nil, []any{"deep"}, map[string]any{"k": "v"}}}},
		`<|tool_call>call:batch{empty:[],ids:[1,2],mixed:[true,null,[<|"|>deep<|"|>],{k:<|"|>v<|"|>}],tags:[<|"|>a<|"|>,<|"|>b<|"|>]}<tool_call|>`},
	{"quotes", Call{"search", map[string]any{"q": `say "hello", then 'bye' \n`}},
		`<|tool_call>call:search{q:<|"|>say "hello", then 'bye' \n<|"|>}<tool_call|>`},
	{"braces and brackets", Call{"eval", map[string]any{"code": "func f() { return []int{1}[0] }, x:{"}},
		`<|tool_call>call:eval{code:<|"|>func f() { return []int{1}[0] }, x:{<|"|>}<tool_call|>`},
	{"newlines", Call{"bash", map[string]any{"command": "cat <<EOF\nline 1\n\tline 2\nEOF\n"}},
		"<|tool_call>call:bash{command:<|\"|>cat <<EOF\nline 1\n\tline 2\nEOF\n<|\"|>}<tool_call|>"},
	{"unicode", Call{"translate", map[string]any{"text": "日本語 😀", "ключ": "значение"}},
		`<|tool_call>call:translate{text:<|"|>日本語 😀<|"|>,ключ:<|"|>значение<|"|>}<tool_call|>`},
	{"empty string", Call{"f", map[string]any{"s": ""}},
		`<|tool_call>call:f{s:<|"|><|"|>}<tool_call|>`},
	{"markup inside a string", Call{"f", map[string]any{"s": "<|turn>user\n<tool_call|>"}},
		`<|tool_call>call:f{s:<|"|><|turn>user` + "\n" + `<tool_call|><|"|>}<tool_call|>`},
	{"keys that are not bare", Call{"f", map[string]any{"a b": num("1"), "$ref": "x", "": "empty"}},
		`<|tool_call>call:f{<|"|><|"|>:<|"|>empty<|"|>,<|"|>$ref<|"|>:<|"|>x<|"|>,<|"|>a b<|"|>:1}<tool_call|>`},
	{"the delimiter in a string", Call{"f", map[string]any{"s": `a<|"|>b`}},
		`<|tool_call>call:f{s:"a<|\"|>b"}<tool_call|>`},
	{"dotted and dashed names", Call{"github.search-issues", map[string]any{"per_page": num("5")}},
		`<|tool_call>call:github.search-issues{per_page:5}<tool_call|>`},
}

func renderCall(t *testing.T, c Call) string {
	t.Helper()
	out, err := RenderCalls([]Call{c})
	if err != nil {
		t.Fatalf("RenderCalls(%v): %v", c, err)
	}
	return out.String()
}

// TestCallsRoundTrip: each case renders to its bytes, its bytes parse back
// to the call, and the parsed call renders to the same bytes again.
func TestCallsRoundTrip(t *testing.T) {
	for _, tc := range callCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := renderCall(t, tc.call); got != tc.text {
				t.Errorf("render:\n got %s\nwant %s", got, tc.text)
			}
			text, calls, err := Split(tc.text)
			if err != nil || text != "" || len(calls) != 1 {
				t.Fatalf("Split = %q, %v, %v", text, calls, err)
			}
			if !reflect.DeepEqual(calls[0], tc.call) {
				t.Errorf("parse:\n got %#v\nwant %#v", calls[0], tc.call)
			}
			if again := renderCall(t, calls[0]); again != tc.text {
				t.Errorf("render(parse(x)) = %s", again)
			}
		})
	}
}

// TestSeveralCalls: calls one after another, with text around them, come
// back in order with the text as written.
func TestSeveralCalls(t *testing.T) {
	var b strings.Builder
	var want []Call
	b.WriteString("Let me look.\n")
	for _, tc := range callCases[:4] {
		b.WriteString(tc.text)
		want = append(want, tc.call)
	}
	b.WriteString(ResponseOpen)
	text, calls, err := Split(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if text != "Let me look.\n" {
		t.Errorf("text = %q", text)
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls = %#v", calls)
	}
	all, err := RenderCalls(want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), all.String()) {
		t.Errorf("RenderCalls of several calls is not their bytes one after another: %s", all)
	}
}

// TestParseLenient: what the model may write besides the canonical form
// parses to the same call, and re-renders canonically.
func TestParseLenient(t *testing.T) {
	weather := Call{"get_weather", map[string]any{"city": "Paris", "days": num("3")}}
	cases := []struct {
		name, in string
		want     Call
	}{
		{"unsorted keys", `call:get_weather{days:3,city:<|"|>Paris<|"|>}`, weather},
		{"whitespace and newlines", "  call: get_weather {\n  city : <|\"|>Paris<|\"|> ,\n  days: 3\n}\n", weather},
		{"trailing comma", `call:get_weather{city:<|"|>Paris<|"|>,days:3,}`, weather},
		{"JSON strings", `call:get_weather{"city":"Paris","days":3}`, weather},
		{"JSON escapes", `call:f{s:"tab\tquote\" \u00e9"}`, Call{"f", map[string]any{"s": "tab\tquote\" é"}}},
		{"delimited keys", `call:f{<|"|>a b<|"|>:[1, 2 ,]}`, Call{"f", map[string]any{"a b": []any{num("1"), num("2")}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCall(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// TestParseMalformed: a call that does not parse is an error that says
// where, and the reply keeps it as text; nothing panics.
func TestParseMalformed(t *testing.T) {
	deep := "call:f{a:" + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "}"
	cases := []struct{ name, body, msg string }{
		{"empty", "", "want call:NAME"},
		{"no name", "call:{}", "name"},
		{"space in name", "call:get weather{}", "want {"},
		{"no braces", "call:f", "want {"},
		{"unclosed object", `call:f{a:1`, "not closed"},
		{"unclosed string", `call:f{a:<|"|>x}`, "not closed"},
		{"unclosed JSON string", `call:f{a:"x}`, "not closed"},
		{"missing colon", `call:f{a 1}`, "want :"},
		{"missing comma", `call:f{a:1 b:2}`, "want , or }"},
		{"bare word value", `call:f{city:Paris}`, "want a value"},
		{"bad number", `call:f{n:1.2.3}`, "not a number"},
		{"leading zero", `call:f{n:012}`, "not a number"},
		{"truthy", `call:f{b:trueish}`, "want a value"},
		{"repeated key", `call:f{a:1,a:2}`, "given twice"},
		{"text after", `call:f{} and more`, "after the call"},
		{"too deep", deep, "deeper than"},
		{"bad JSON escape", `call:f{s:"\x"}`, "not valid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCall(tc.body)
			if err == nil {
				t.Fatalf("ParseCall(%q) = nil error", tc.body)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			reply := "before " + CallOpen + tc.body + CallClose + " after"
			text, calls, err := Split(reply)
			if err == nil || len(calls) != 0 {
				t.Fatalf("Split: calls %v, err %v", calls, err)
			}
			if text != reply {
				t.Errorf("the malformed call is not kept as text: %q", text)
			}
		})
	}
	// Nesting up to the limit is fine.
	ok := "call:f{a:" + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + "}"
	if _, err := ParseCall(ok); err != nil {
		t.Errorf("nesting at the limit: %v", err)
	}
}

// TestRenderCanonical: the bytes depend on the call, not on how its
// arguments arrived: JSON objects with their keys in any order render the
// same, so a conversation re-rendered around a tool loop keeps its prefix.
func TestRenderCanonical(t *testing.T) {
	var texts []string
	for _, js := range []string{
		`{"b":1,"a":{"y":[1,{"q":2,"p":3}],"x":"s"},"B":true}`,
		`{"a":{"x":"s","y":[1,{"p":3,"q":2}]},"B":true,"b":1}`,
		`{"B":true,"a":{"y":[1,{"q":2,"p":3}],"x":"s"},"b":1}`,
	} {
		dec := json.NewDecoder(strings.NewReader(js))
		dec.UseNumber()
		var args map[string]any
		if err := dec.Decode(&args); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, renderCall(t, Call{"f", args}))
	}
	for _, s := range texts[1:] {
		if s != texts[0] {
			t.Errorf("renders differ:\n%s\n%s", texts[0], s)
		}
	}
	const want = `<|tool_call>call:f{a:{x:<|"|>s<|"|>,y:[1,{p:3,q:2}]},B:true,b:1}<tool_call|>`
	if texts[0] != want {
		t.Errorf("got  %s\nwant %s", texts[0], want)
	}
}

// TestRenderGoValues: Go numbers render as JSON would write them.
func TestRenderGoValues(t *testing.T) {
	got := renderCall(t, Call{"f", map[string]any{"a": 3.0, "b": 0.1, "c": -2, "d": uint64(7), "e": 1e300, "f": []string{"x"}, "g": float32(0.5)}})
	const want = `<|tool_call>call:f{a:3,b:0.1,c:-2,d:7,e:1e+300,f:[<|"|>x<|"|>],g:0.5}<tool_call|>`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestRenderRefuses(t *testing.T) {
	nest := map[string]any{}
	for cur, i := nest, 0; i < MaxDepth; i++ {
		next := map[string]any{}
		cur["n"] = next
		cur = next
	}
	for _, c := range []Call{
		{"", nil},
		{"get weather", nil},
		{"f{", nil},
		{strings.Repeat("n", MaxNameBytes+1), nil},
		{"f", map[string]any{"x": make(chan int)}},
		{"f", map[string]any{"x": json.Number("1.")}},
		{"f", map[string]any{"x": []any{1.0, 2.0, nan()}}},
		{"f", map[string]any{"x": "<|\"|>\xff"}},
		{"f", nest},
	} {
		if out, err := RenderCalls([]Call{c}); err == nil {
			t.Errorf("RenderCalls(%.60v) = %q, want an error", c, out)
		}
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestRenderResponses(t *testing.T) {
	cases := []struct {
		name string
		r    Response
		want string
	}{
		{"text", Response{"get_weather", "15 °C, sunny"},
			`<|tool_response>response:get_weather{value:<|"|>15 °C, sunny<|"|>}<tool_response|>`},
		{"object", Response{"get_weather", map[string]any{"weather": "sunny", "temperature": num("15")}},
			`<|tool_response>response:get_weather{temperature:15,weather:<|"|>sunny<|"|>}<tool_response|>`},
		{"nested", Response{"ls", map[string]any{"files": []any{map[string]any{"size": num("3"), "name": "a"}}}},
			`<|tool_response>response:ls{files:[{name:<|"|>a<|"|>,size:3}]}<tool_response|>`},
		{"null", Response{"f", nil}, `<|tool_response>response:f{value:null}<tool_response|>`},
		{"markup in the output", Response{"cat", "<turn|>\n<|turn>user\nhi"},
			"<|tool_response>response:cat{value:<|\"|><turn|>\n<|turn>user\nhi<|\"|>}<tool_response|>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RenderResponses([]Response{tc.r})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got  %s\nwant %s", out, tc.want)
			}
			after := out.After(ResponseOpen)
			if got := ResponseOpen + after.String(); got != tc.want {
				t.Errorf("After(ResponseOpen) = %q", after)
			}
		})
	}
	if _, err := RenderResponses([]Response{{"bad name", "x"}}); err == nil {
		t.Error("a response with a bad name rendered")
	}
}

// TestPiecesKeepContentLiteral: only the format's own tokens are markup;
// names, keys and strings are literal, so a tokenizer never reads a
// string's "<|turn>" or "<tool_call|>" as a control token.
func TestPiecesKeepContentLiteral(t *testing.T) {
	out, err := RenderCalls([]Call{{"f", map[string]any{"s": "<|turn><tool_call|>", "<|turn>": num("1")}}})
	if err != nil {
		t.Fatal(err)
	}
	var markup []string
	for _, p := range out {
		if !p.Literal {
			markup = append(markup, p.Text)
		}
	}
	for _, m := range markup {
		rest := m
		for rest != "" {
			found := false
			for _, s := range Spellings() {
				if strings.HasPrefix(rest, s) {
					rest, found = rest[len(s):], true
					break
				}
			}
			if !found {
				t.Fatalf("markup piece %q holds more than the format's tokens (pieces %q)", m, out)
			}
		}
	}
	if out.String() != `<|tool_call>call:f{<|"|><|turn><|"|>:1,s:<|"|><|turn><tool_call|><|"|>}<tool_call|>` {
		t.Errorf("got %s", out)
	}
}
