package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/regfile"
	"github.com/orchard-llm/orchard/termsafe"
	"github.com/orchard-llm/orchard/tokenizer"
)

// ScriptFile is where a synthetic bundle keeps its script (`orchard bundle
// synth --script`), beside its manifest or model_config.json.
const ScriptFile = "orchard_script.json"

// maxScriptBytes bounds a script file: it is read whole.
const maxScriptBytes = 4 << 20

// Script gives a synthetic bundle replies that are known in advance: when
// the last user message (or, inside a model turn, the last tool result)
// matches an entry's regular expression, the first such entry's reply is
// what the model says, then it ends its turn. A Scripted runtime makes the
// head emit those tokens; the engine does not know a script exists.
type Script struct {
	Name    string // the file it came from, for errors
	Replies []ScriptReply
}

// ScriptReply is one entry: Match is a Go regular expression searched in
// the text (anchor it with ^…$ to match a whole message), Reply the exact
// text the model writes.
type ScriptReply struct {
	Match string
	Reply string
	re    *regexp.Regexp
}

// scriptJSON is the file's form: {"replies":[{"match":…,"reply":…},…]}.
type scriptJSON struct {
	Replies []struct {
		Match *string `json:"match"`
		Reply *string `json:"reply"`
	} `json:"replies"`
}

// ReadScript reads and checks a script file. Every error names the file.
func ReadScript(path string) (*Script, error) {
	data, err := regfile.ReadFile(path, maxScriptBytes)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once, below
		}
		return nil, fmt.Errorf("script %s: %w", termsafe.Line(path), err)
	}
	return ParseScript(data, path)
}

// ParseScript checks a script's JSON and compiles its expressions; name
// is the file it came from. Unknown keys are refused, so a misspelt
// "reply" is not silently an empty reply.
func ParseScript(data []byte, name string) (*Script, error) {
	fail := func(format string, a ...any) (*Script, error) {
		return nil, fmt.Errorf("script %s: %s (want {\"replies\":[{\"match\":\"REGEX\",\"reply\":\"TEXT\"}, …]})",
			termsafe.Line(name), fmt.Sprintf(format, a...))
	}
	var raw scriptJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return fail("not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail("more than one JSON value")
	}
	if len(raw.Replies) == 0 {
		return fail("no replies")
	}
	s := &Script{Name: name}
	for i, r := range raw.Replies {
		switch {
		case r.Match == nil:
			return fail("replies[%d] has no \"match\"", i)
		case r.Reply == nil:
			return fail("replies[%d] has no \"reply\"", i)
		}
		re, err := regexp.Compile(*r.Match)
		if err != nil {
			return fail("replies[%d].match: %v", i, err)
		}
		s.Replies = append(s.Replies, ScriptReply{Match: *r.Match, Reply: *r.Reply, re: re})
	}
	return s, nil
}

// JSON is the script in its file form, as stored in a bundle.
func (s *Script) JSON() []byte {
	type entry struct {
		Match string `json:"match"`
		Reply string `json:"reply"`
	}
	out := struct {
		Replies []entry `json:"replies"`
	}{}
	for _, r := range s.Replies {
		out.Replies = append(out.Replies, entry{r.Match, r.Reply})
	}
	data, _ := json.MarshalIndent(out, "", "  ") // strings only: cannot fail
	return append(data, '\n')
}

// StoreScript writes the script into a bundle folder (0600, atomically).
func StoreScript(dir string, s *Script) error {
	if err := atomicfile.Write(filepath.Join(dir, ScriptFile), s.JSON()); err != nil {
		return fmt.Errorf("store the script in %s: %w", dir, err)
	}
	return nil
}

// BundleScript returns the script a bundle folder holds, nil when it has
// none.
func BundleScript(dir string) (*Script, error) {
	path := filepath.Join(dir, ScriptFile)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return ReadScript(path)
}

// compiledReply is an entry with its reply as the ids the head emits: the
// text's tokens, then the end of the turn.
type compiledReply struct {
	re  *regexp.Regexp
	ids []int32
}

// compile tokenizes every reply with the bundle's tokenizer and checks
// that the ids come back as the very bytes of the reply, through Decode
// and through the streaming detokenizer the engine uses. Special-token
// spellings in a reply ("<|channel>", a tool call's markers) become those
// tokens, as the model would write them; one that ends a turn is refused.
func (s *Script) compile(tok *tokenizer.Tokenizer, endOfTurn int) ([]compiledReply, error) {
	tp, err := tokenizer.NewTemplate(tok)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", termsafe.Line(s.Name), err)
	}
	stops := tp.StopIDs()
	out := make([]compiledReply, len(s.Replies))
	for i, r := range s.Replies {
		ids := tok.Encode(r.Reply)
		for _, id := range ids {
			if slices.Contains(stops, id) {
				t, _ := tok.Token(id)
				return nil, fmt.Errorf("script %s: replies[%d].reply holds %s, which would end the turn early; the end of the turn is added after the reply",
					termsafe.Line(s.Name), i, t)
			}
		}
		if got := tok.Decode(ids, false); got != r.Reply {
			return nil, fmt.Errorf("script %s: replies[%d].reply does not survive this tokenizer: it comes back as %s",
				termsafe.Line(s.Name), i, termsafe.Quote(got))
		}
		st := tokenizer.NewStream(tok, false)
		var b strings.Builder
		for _, id := range ids {
			b.WriteString(st.Push(id))
		}
		b.WriteString(st.Flush())
		if b.String() != r.Reply {
			return nil, fmt.Errorf("script %s: replies[%d].reply does not survive the streaming detokenizer: it comes back as %s",
				termsafe.Line(s.Name), i, termsafe.Quote(b.String()))
		}
		c := compiledReply{re: r.re, ids: make([]int32, 0, len(ids)+1)}
		for _, id := range ids {
			c.ids = append(c.ids, int32(id))
		}
		out[i] = compiledReply{re: c.re, ids: append(c.ids, int32(endOfTurn))}
	}
	return out, nil
}

// Check compiles the script against a tokenizer, as a Scripted runtime
// will, without a bundle: `orchard bundle synth --script` refuses a script
// before writing anything.
func (s *Script) Check(tok *tokenizer.Tokenizer) error {
	eot, ok := tok.TokenID(turnCloseToken)
	if !ok {
		return fmt.Errorf("script %s: the tokenizer has no %s token to end a reply", termsafe.Line(s.Name), turnCloseToken)
	}
	_, err := s.compile(tok, eot)
	return err
}
