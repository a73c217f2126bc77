package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// TestThoughts: a reply split into thinking and answer comes out the same
// whatever the deltas' sizes — markers and the channel's name cut
// anywhere — and text that only looks like the start of a marker is
// answer.
func TestThoughts(t *testing.T) {
	for _, tc := range []struct{ reply, thinking, answer string }{
		{"<|channel>thought\nLet me see.<channel|>Apples.", "Let me see.", "Apples."},
		{"Before <|channel>thought\nhmm<channel|> after", "hmm", "Before  after"},
		{"<|channel>thought\nstill thinking", "still thinking", ""},
		{"<|channel>no label<channel|>ok", "no label", "ok"},
		{"a <|chan but not a marker <channel|>", "", "a <|chan but not a marker <channel|>"},
		{"ends with <|chan", "", "ends with <|chan"},
		{"plain answer", "", "plain answer"},
		{"<|channel>thou", "thou", ""},
	} {
		for size := 1; size <= len(tc.reply); size++ {
			var sp thoughts
			var th, an strings.Builder
			for i := 0; i < len(tc.reply); i += size {
				a, b := sp.push(tc.reply[i:min(i+size, len(tc.reply))])
				th.WriteString(a)
				an.WriteString(b)
			}
			a, b := sp.flush()
			th.WriteString(a)
			an.WriteString(b)
			if th.String() != tc.thinking || an.String() != tc.answer {
				t.Fatalf("%q in deltas of %d: thinking %q answer %q; want %q and %q", tc.reply, size, th.String(), an.String(), tc.thinking, tc.answer)
			}
		}
		if th, an := splitThoughts(tc.reply); th != tc.thinking || an != tc.answer {
			t.Fatalf("%q whole: %q %q", tc.reply, th, an)
		}
	}
}

// TestOllamaThink: with think the request asks the template for thinking
// (the reply is the engine's with thinking on) and the answer comes apart
// from the thinking, streamed and not; a bad think value is refused.
func TestOllamaThink(t *testing.T) {
	ts := startServer(t, serverOpts{})
	set := engine.DefaultSettings()
	set.MaxTokens, set.Thinking = 24, true
	reply := engineReply(t, set, "think about apples")[0]
	plain := set
	plain.Thinking = false
	if reply == engineReply(t, plain, "think about apples")[0] {
		t.Log("thinking on and off give the same reply here: the test still checks the split")
	}
	wantThinking, wantAnswer := splitThoughts(reply)
	body := `{"model": "orchard", "think": true, "options": {"num_predict": 24}, "messages": [{"role": "user", "content": "think about apples"}]`
	status, raw := ollamaCall(t, ts, "POST", "/api/chat", body+`, "stream": false}`)
	var one ollamaChunk
	if json.Unmarshal(raw, &one); status != 200 || one.Message == nil || one.Message.Thinking != wantThinking || one.Message.Content != wantAnswer {
		t.Fatalf("HTTP %d %s; want thinking %q, content %q", status, raw, wantThinking, wantAnswer)
	}
	status, raw = ollamaCall(t, ts, "POST", "/api/chat", body+`}`)
	var th, an strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var c ollamaChunk
		if err := json.Unmarshal([]byte(line), &c); err != nil || c.Message == nil {
			t.Fatalf("line %q: %v", line, err)
		}
		th.WriteString(c.Message.Thinking)
		an.WriteString(c.Message.Content)
	}
	if status != 200 || th.String() != wantThinking || an.String() != wantAnswer {
		t.Fatalf("streamed: thinking %q content %q; want %q and %q", th.String(), an.String(), wantThinking, wantAnswer)
	}
	status, raw = ollamaCall(t, ts, "POST", "/api/generate", `{"model": "orchard", "think": "high", "stream": false, "options": {"num_predict": 24}, "prompt": "think about apples"}`)
	if json.Unmarshal(raw, &one); status != 200 || one.Thinking != wantThinking || *one.Response != wantAnswer {
		t.Fatalf("generate: HTTP %d %s", status, raw)
	}
	for _, bad := range []string{`3`, `{"a": 1}`} {
		status, raw = ollamaCall(t, ts, "POST", "/api/chat", `{"model": "orchard", "think": `+bad+`, "messages": [{"role": "user", "content": "a"}]}`)
		if status != 400 || !strings.Contains(string(raw), "think") {
			t.Fatalf("think %s: HTTP %d %s", bad, status, raw)
		}
	}
}
