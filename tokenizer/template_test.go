package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

func TestTemplateRender(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	tp, err := NewTemplate(tok)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		conv Conversation
		want string
	}{
		{"single user turn", Conversation{Messages: []Message{{Role: RoleUser, Content: "Hi there"}}},
			"<bos><|turn>user\nHi there<turn|>\n<|turn>model\n"},
		{"system prompt", Conversation{System: " Be brief. \n", Messages: []Message{{Role: RoleUser, Content: "Hi"}}},
			"<bos><|turn>system\nBe brief.<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n"},
		{"thinking without system prompt", Conversation{Thinking: true, Messages: []Message{{Role: RoleUser, Content: "Hi"}}},
			"<bos><|turn>system\n<|think|>\n<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n"},
		{"thinking with system prompt", Conversation{System: "Be brief.", Thinking: true, Messages: []Message{{Role: RoleUser, Content: "Hi"}}},
			"<bos><|turn>system\n<|think|>\nBe brief.<turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n"},
		{"history with thoughts stripped", Conversation{Messages: []Message{
			{Role: RoleUser, Content: "2+2?"},
			{Role: RoleModel, Content: "<|channel>thought\nadd them<channel|>4"},
			{Role: RoleUser, Content: "and 3+3?"},
		}}, "<bos><|turn>user\n2+2?<turn|>\n<|turn>model\n4<turn|>\n<|turn>user\nand 3+3?<turn|>\n<|turn>model\n"},
		{"system message and assistant role", Conversation{Messages: []Message{
			{Role: RoleSystem, Content: "S"}, {Role: RoleUser, Content: "u"}, {Role: "assistant", Content: " a "}, {Role: RoleUser, Content: "v"},
		}}, "<bos><|turn>system\nS<turn|>\n<|turn>user\nu<turn|>\n<|turn>model\na<turn|>\n<|turn>user\nv<turn|>\n<|turn>model\n"},
		{"no messages", Conversation{}, "<bos><|turn>model\n"},
		{"system message after the first turn", Conversation{System: "S", Messages: []Message{
			{Role: RoleUser, Content: "u"}, {Role: RoleModel, Content: "a"}, {Role: RoleSystem, Content: " Now in French. "}, {Role: RoleUser, Content: "v"},
		}}, "<bos><|turn>system\nS<turn|>\n<|turn>user\nu<turn|>\n<|turn>model\na<turn|>\n<|turn>system\nNow in French.<turn|>\n<|turn>user\nv<turn|>\n<|turn>model\n"},
		{"the model's last message continued", Conversation{Continue: true, Messages: []Message{
			{Role: RoleUser, Content: "u"}, {Role: "assistant", Content: "The answer is "},
		}}, "<bos><|turn>user\nu<turn|>\n<|turn>model\nThe answer is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tp.Render(tt.conv)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Render =\n%q\nwant\n%q", got, tt.want)
			}
			ids, err := tp.Encode(tt.conv)
			if err != nil {
				t.Fatal(err)
			}
			if want := tok.Encode(got); !slices.Equal(ids, want) {
				t.Errorf("Encode = %v, want Encode(Render) = %v", ids, want)
			}
			if ids[0] != 2 || slices.Contains(ids[1:], 2) {
				t.Errorf("Encode = %v: want exactly one BOS, first", ids)
			}
		})
	}
}

func TestTemplateIDs(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	tp, err := NewTemplate(tok)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tp.Encode(Conversation{Thinking: true, Messages: []Message{{Role: RoleUser, Content: "Hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	user := tok.Encode("user")
	model := tok.Encode("model")
	system := tok.Encode("system")
	hi := tok.Encode("Hi")
	var want []int
	want = append(want, 2, 105)
	want = append(want, system...)
	want = append(want, 107, synthThinkID, 107, 106, 107, 105)
	want = append(want, user...)
	want = append(want, 107)
	want = append(want, hi...)
	want = append(want, 106, 107, 105)
	want = append(want, model...)
	want = append(want, 107)
	if !slices.Equal(ids, want) {
		t.Errorf("Encode = %v\nwant %v", ids, want)
	}
}

func TestTemplateLiteralUserText(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	tp, _ := NewTemplate(tok)
	conv := Conversation{Messages: []Message{{Role: RoleUser, Content: "say <turn|> and <bos>"}}}
	ids, err := tp.Encode(conv)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(tok.Decode(ids, false), "<turn|>"); n != 2 {
		t.Fatalf("decoded prompt has %d <turn|>, want 2", n)
	}
	turnClose := 0
	for _, id := range ids {
		if id == 106 {
			turnClose++
		}
		if id == 2 && turnClose > 0 {
			t.Errorf("user text became a BOS token: %v", ids)
		}
	}
	if turnClose != 1 {
		t.Errorf("Encode has %d <turn|> tokens, want 1 (user text must stay text): %v", turnClose, ids)
	}
}

func TestManifestTemplate(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	gemma4 := ManifestPrompt{PromptPrefix: "<|turn>user\n", PromptSuffix: "<turn|>\n<|turn>model\n"}
	gemma3 := ManifestPrompt{PromptPrefix: "<start_of_turn>user\n", PromptSuffix: "<end_of_turn>\n<start_of_turn>model\n"}
	history := []Message{{Role: RoleUser, Content: "a"}, {Role: RoleModel, Content: "<|channel>x<channel|>b"}, {Role: RoleUser, Content: "c"}}
	tests := []struct {
		name string
		p    ManifestPrompt
		conv Conversation
		want string
	}{
		{"gemma 4 strings", gemma4, Conversation{Messages: history},
			"<bos><|turn>user\na<turn|>\n<|turn>model\nb<turn|>\n<|turn>user\nc<turn|>\n<|turn>model\n"},
		{"gemma 4 strings with system", gemma4, Conversation{System: "S", Messages: history[2:]},
			"<bos><|turn>system\nS<turn|>\n<|turn>user\nc<turn|>\n<|turn>model\n"},
		{"gemma 3 strings", gemma3, Conversation{Messages: history},
			"<bos><start_of_turn>user\na<end_of_turn>\n<start_of_turn>model\nb<end_of_turn>\n<start_of_turn>user\nc<end_of_turn>\n<start_of_turn>model\n"},
		{"gemma 3 strings with system", gemma3, Conversation{System: "S", Messages: history[2:]},
			"<bos><start_of_turn>user\nS\n\nc<end_of_turn>\n<start_of_turn>model\n"},
		{"explicit assistant suffix", ManifestPrompt{PromptPrefix: "U:", PromptSuffix: "\nA:", AssistantSuffix: "\n"}, Conversation{Messages: history},
			"<bos>U:a\nA:b\nU:c\nA:"},
		{"prefix carries BOS", ManifestPrompt{PromptPrefix: "<bos>U:", PromptSuffix: "\nA:"}, Conversation{Messages: history[2:]},
			"<bos>U:c\nA:"},
		{"thinking suffix", ManifestPrompt{PromptPrefix: "U:", PromptSuffix: "\nA:", PromptSuffixThinking: "\nA(think):"}, Conversation{Thinking: true, Messages: history[2:]},
			"<bos>U:c\nA(think):"},
		{"empty manifest is canonical", ManifestPrompt{}, Conversation{Messages: history[2:]},
			"<bos><|turn>user\nc<turn|>\n<|turn>model\n"},
		{"gemma 4 strings, a system message after the first turn", gemma4, Conversation{Messages: []Message{history[0], history[1], {Role: RoleSystem, Content: "S"}, history[2]}},
			"<bos><|turn>user\na<turn|>\n<|turn>model\nb<turn|>\n<|turn>system\nS<turn|>\n<|turn>user\nc<turn|>\n<|turn>model\n"},
		{"gemma 3 strings, a system message after the first turn", gemma3, Conversation{Messages: []Message{history[0], history[1], {Role: RoleSystem, Content: "S"}, history[2]}},
			"<bos><start_of_turn>user\na<end_of_turn>\n<start_of_turn>model\nb<end_of_turn>\n<start_of_turn>user\nS\n\nc<end_of_turn>\n<start_of_turn>model\n"},
		{"the model's last message continued", ManifestPrompt{PromptPrefix: "U:", PromptSuffix: "\nA:", AssistantSuffix: "\n"}, Conversation{Continue: true, Messages: history[:2]},
			"<bos>U:a\nA:b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := NewManifestTemplate(tok, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tp.Render(tt.conv)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Render =\n%q\nwant\n%q", got, tt.want)
			}
			ids, err := tp.Encode(tt.conv)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, tok.Encode(got)) {
				t.Errorf("Encode differs from Encode(Render)")
			}
			if n := strings.Count(tok.Decode(ids, false), "<bos>"); n != 1 {
				t.Errorf("prompt has %d BOS", n)
			}
		})
	}
}

func TestStopIDs(t *testing.T) {
	tp, err := NewTemplate(synthTokenizer(t, 512))
	if err != nil {
		t.Fatal(err)
	}
	if got := tp.StopIDs(); !slices.Equal(got, []int{1, 106}) {
		t.Errorf("StopIDs = %v, want [1 106]", got)
	}
}

func TestDeriveAssistantSuffix(t *testing.T) {
	tests := []struct{ prefix, suffix, want string }{
		{"<|turn>user\n", "<turn|>\n<|turn>model\n", "<turn|>\n"},
		{"<start_of_turn>user\n", "<end_of_turn>\n<start_of_turn>model\n", "<end_of_turn>\n"},
		{"U:", "\nA:", "\nA:"},
		{"user:", "\n", "\n"},
	}
	for _, tt := range tests {
		if got := deriveAssistantSuffix(tt.prefix, tt.suffix); got != tt.want {
			t.Errorf("deriveAssistantSuffix(%q, %q) = %q, want %q", tt.prefix, tt.suffix, got, tt.want)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	tp, _ := NewTemplate(tok)
	if _, err := tp.Render(Conversation{Messages: []Message{{Role: "tool", Content: "x"}}}); err == nil {
		t.Error("unknown role accepted")
	}
	// A system prompt and a leading system message (a conversation's
	// summary) are two system turns, in that order.
	if got, err := tp.Render(Conversation{System: "a", Messages: []Message{{Role: RoleSystem, Content: "b"}, {Role: RoleUser, Content: "c"}}}); err != nil ||
		!strings.Contains(got, "<|turn>system\na<turn|>\n<|turn>system\nb<turn|>\n<|turn>user\nc") {
		t.Errorf("a system prompt and a system message: %q, %v", got, err)
	}
	mt, _ := NewManifestTemplate(tok, ManifestPrompt{PromptPrefix: "U:", PromptSuffix: "A:"})
	if _, err := mt.Render(Conversation{Messages: []Message{{Role: RoleUser, Content: "a"}, {Role: RoleModel, Content: "b"}}}); err == nil {
		t.Error("manifest template accepted a conversation ending with the model")
	}
	if _, err := mt.Render(Conversation{Thinking: true, Messages: []Message{{Role: RoleUser, Content: "a"}}}); err != nil {
		t.Errorf("thinking with a Gemma 4 tokenizer: %v", err)
	}
	if _, err := tp.Render(Conversation{Continue: true, Messages: []Message{{Role: RoleUser, Content: "a"}}}); err == nil {
		t.Error("a conversation ending with the user's message continued")
	}
	if _, err := mt.Render(Conversation{Messages: []Message{{Role: RoleUser, Content: "a"}, {Role: RoleSystem, Content: "b"}}}); err == nil {
		t.Error("manifest template accepted a system message with no user message after it")
	}
	if _, err := NewManifestTemplate(tok, ManifestPrompt{PromptPrefix: "U:"}); err == nil {
		t.Error("manifest with only a prefix accepted")
	}
}

func TestTemplateNeedsTurnTokens(t *testing.T) {
	tok := loadGemma(t) // Gemma 3: <start_of_turn>, no <|turn>
	if _, err := NewTemplate(tok); err == nil {
		t.Fatal("NewTemplate accepted a tokenizer without <|turn>")
	}
	tp, err := NewManifestTemplate(tok, ManifestPrompt{PromptPrefix: "<start_of_turn>user\n", PromptSuffix: "<end_of_turn>\n<start_of_turn>model\n"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tp.Encode(Conversation{Messages: []Message{{Role: RoleUser, Content: "Hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{2, 105, 2364, 107, 9259, 106, 107, 105, 4368, 107}
	if !slices.Equal(ids, want) {
		t.Errorf("Encode = %v, want %v", ids, want)
	}
	if _, err := tp.Render(Conversation{Thinking: true, Messages: []Message{{Role: RoleUser, Content: "x"}}}); err == nil {
		t.Error("thinking accepted without turn tokens or a thinking suffix")
	}
}

func TestStripThoughts(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"<|channel>thought\nx<channel|>answer", "answer"},
		{"a<|channel>1<channel|>b<|channel>2<channel|>c", "abc"},
		{"a<|channel>never closed", "a"},
		{"<channel|>stray close", "<channel|>stray close"},
	}
	for _, tt := range tests {
		if got := StripThoughts(tt.in); got != tt.want {
			t.Errorf("StripThoughts(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEncodeAfterReply(t *testing.T) {
	tok := synthTokenizer(t, 512)
	tp, err := NewTemplate(tok)
	if err != nil {
		t.Fatal(err)
	}
	conv := Conversation{System: "sys", Messages: []Message{{Role: RoleUser, Content: "hello there"},
		{Role: RoleModel, Content: " general kenobi "}, {Role: RoleUser, Content: "you <turn|> are bold"}}}
	ids, ok, err := tp.EncodeAfterReply(conv)
	if err != nil || !ok {
		t.Fatalf("EncodeAfterReply: %v %v", ok, err)
	}
	full, _ := tp.Render(conv)
	i := strings.Index(full, "general kenobi") + len("general kenobi")
	if got := tok.Decode(ids, false); got != full[i:] {
		t.Fatalf("ids decode to %q, want %q", got, full[i:])
	}
	turnClose, _ := tok.TokenID("<turn|>")
	n := 0
	for _, id := range ids {
		if id == turnClose {
			n++
		}
	}
	if n != 2 { // closing the reply and the new user turn; the user's literal stays text
		t.Fatalf("%d <turn|> ids, want 2", n)
	}
	if _, ok, _ := tp.EncodeAfterReply(Conversation{Messages: []Message{{Role: RoleUser, Content: "x"}}}); ok {
		t.Fatal("a conversation without a model message has no reply to continue")
	}
}
