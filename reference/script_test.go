package reference

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/tokenizer"
)

// TestScriptErrorsNameTheFile: every way a script file can be wrong is an
// error that names the file and says what is wrong.
func TestScriptErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, body, want string
	}{
		{"bad-json.json", `{"replies":[{"match":"a","reply":"b"}`, "not valid JSON"},
		{"not-object.json", `[1,2]`, "not valid JSON"},
		{"typo.json", `{"replies":[{"match":"a","repy":"b"}]}`, `unknown field "repy"`},
		{"no-reply.json", `{"replies":[{"match":"a"}]}`, `replies[0] has no "reply"`},
		{"no-match.json", `{"replies":[{"match":"a","reply":"b"},{"reply":"c"}]}`, `replies[1] has no "match"`},
		{"bad-regex.json", `{"replies":[{"match":"(unclosed","reply":"b"}]}`, "replies[0].match: error parsing regexp"},
		{"empty.json", `{"replies":[]}`, "no replies"},
		{"two.json", `{"replies":[{"match":"a","reply":"b"}]} {}`, "more than one JSON value"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadScript(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want the path and %q", c.name, err, c.want)
		}
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err := ReadScript(missing); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ReadScript(dir); err == nil || !strings.Contains(err.Error(), "a folder") {
		t.Errorf("a folder: %v", err)
	}
}

// TestScriptCompile: replies must come back byte for byte through the
// bundle's tokenizer and must not end the turn themselves.
func TestScriptCompile(t *testing.T) {
	tok := synthTokenizer(t)
	ok, err := ParseScript([]byte(`{"replies":[{"match":"x","reply":"Grüße 🍎 <|channel>thought<channel|>\nok"},{"match":"y","reply":""}]}`), "s.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := ok.Check(tok); err != nil {
		t.Fatal(err)
	}
	eot, _ := tok.TokenID("<turn|>")
	cr, _ := ok.compile(tok, eot)
	if ids := cr[1].ids; len(ids) != 1 || ids[0] != int32(eot) {
		t.Errorf("an empty reply is %v, want only the end of the turn", ids)
	}
	bad, err := ParseScript([]byte(`{"replies":[{"match":"x","reply":"done<turn|>more"}]}`), "early.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Check(tok); err == nil || !strings.Contains(err.Error(), "early.json") || !strings.Contains(err.Error(), "end the turn early") {
		t.Errorf("a reply holding <turn|>: %v", err)
	}
	// The stored form reads back as the same script.
	again, err := ParseScript(ok.JSON(), "again")
	if err != nil || len(again.Replies) != 2 || again.Replies[0].Reply != ok.Replies[0].Reply {
		t.Errorf("stored script reads back as %+v, %v", again, err)
	}
}

// synthTokenizer is the tiny bundles' tokenizer (it carries the
// tool-call and tool-result markers as the real one does).
func synthTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	data, err := tokenizer.SynthesizeJSON(512)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{toolResponseOpen, toolResponseClose} {
		if _, ok := tok.TokenID(m); !ok {
			t.Fatalf("the synthetic tokenizer has no %s", m)
		}
	}
	return tok
}

// TestScriptReading: how the head reads the log — the user message before
// the model turn (soft rows left out), the last tool result inside it, a
// header not yet complete, a turn that leaves the script, positions past
// what is current.
func TestScriptReading(t *testing.T) {
	tok := synthTokenizer(t)
	sc, err := ParseScript([]byte(`{"replies":[
		{"match":"^<\\|tool_response>response:weather","reply":"It is sunny."},
		{"match":"(?i)weather","reply":"<|tool_call>call:weather{}<tool_call|>"},
		{"match":"^look$","reply":"A picture."}]}`), "tools.json")
	if err != nil {
		t.Fatal(err)
	}
	hidden := 4
	s, err := NewScripted(New(), ScriptedOptions{Script: sc, Tokenizer: tok, Vocab: 512, Hidden: hidden,
		Embed: func(id int, dst []uint16) error { clear(dst); dst[0] = uint16(id + 1); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	s.log.init(128, 0)
	feed := func(ids []int) {
		for q, id := range ids {
			s.fed(q, int32(id), nil)
		}
		s.log.top = len(ids)
	}
	enc := func(text string) []int { return tok.Encode(text) }
	reply := func(ids []int, max int) string { // greedy on the script alone
		var out []int
		for range max {
			feed(ids)
			id := s.next(len(ids) - 1)
			if id < 0 || id == s.tClose {
				break
			}
			ids = append(ids, int(id))
			out = append(out, int(id))
		}
		return tok.Decode(out, false)
	}
	user := enc("<bos><|turn>user\nWhat is the weather?<turn|>\n<|turn>model\n")
	if got := reply(user, 40); got != "<|tool_call>call:weather{}<tool_call|>" {
		t.Errorf("user message: %q", got)
	}
	// The tool result inside the same model turn is the trigger now.
	call := append(slices.Clone(user), enc("<|tool_call>call:weather{}<tool_call|>")...)
	result := append(call, enc("<|tool_response>response:weather{sky:sunny}<tool_response|>")...)
	if got := reply(result, 40); got != "It is sunny." {
		t.Errorf("tool result: %q", got)
	}
	// A picture's soft rows are unknown: left out of the user's text.
	pic := enc("<bos><|turn>user\n")
	pic = append(pic, enc("<|image>")...)
	pic = append(pic, -1, -1, -1)
	pic = append(pic, enc("<image|>look<turn|>\n<|turn>model\n")...)
	if got := reply(pic, 20); got != "A picture." {
		t.Errorf("message with a picture: %q", got)
	}
	// Unknown ids inside the model turn: the weights answer.
	blind := append(slices.Clone(user[:len(user)-1]), -1)
	feed(blind)
	if id := s.next(len(blind) - 1); id >= 0 {
		t.Errorf("unknown id in the header: scripted %d", id)
	}
	// The header "model\n" not complete: nothing yet, then the reply.
	cut := len(user) - 1
	feed(user[:cut])
	if id := s.next(cut - 1); id >= 0 {
		t.Errorf("incomplete header: scripted %d", id)
	}
	s.fed(cut, int32(user[cut]), nil) // as the next decode step feeds it
	s.log.top++
	if id := s.next(cut); id < 0 {
		t.Error("the completed header was not read again")
	}
	// A reply that left the script (an edit, a prefilled answer).
	off := append(slices.Clone(user), enc("Sure")...)
	feed(off)
	if id := s.next(len(off) - 1); id >= 0 {
		t.Errorf("after a reply that left the script: scripted %d", id)
	}
	// Past top: not current, nothing is said.
	feed(user)
	s.log.top = len(user) - 1
	if id := s.next(len(user) - 1); id >= 0 {
		t.Errorf("a position past top: scripted %d", id)
	}
}
