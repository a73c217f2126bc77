// Package tools holds Gemma 4's function-calling format: the declarations
// a system turn offers the model, the calls the model writes, and the
// results that go back inside the same model turn.
//
//	<|tool>declaration:NAME{description:<|"|>…<|"|>,parameters:{…}}<tool|>
//	<|tool_call>call:NAME{key:<|"|>value<|"|>,n:3}<tool_call|>
//	<|tool_response>response:NAME{…}<tool_response|>
//
// Keys are written bare, <|"|> delimits strings, JSON-Schema type names are
// upper-cased. Rendering sorts keys, so the same call or result always has
// the same bytes and a conversation re-rendered around a tool loop keeps
// its cached prefix. The parser reads what the model writes (and is fuzzed):
// a malformed call comes back as text with an error, never a panic. Stream
// finds calls in a reply as it is generated.
//
// The package knows nothing of token ids beyond looking the format's
// special tokens up by name (LookupTokens), and nothing of MCP.
package tools

import (
	"fmt"
	"strings"
)

// The spellings of Gemma 4's tool tokens. Each is one special token of the
// real tokenizer (and of orchard's synthetic one); ids come from the
// tokenizer by name (LookupTokens).
const (
	DeclOpen      = "<|tool>"
	DeclClose     = "<tool|>"
	CallOpen      = "<|tool_call>"
	CallClose     = "<tool_call|>"
	ResponseOpen  = "<|tool_response>"
	ResponseClose = "<tool_response|>"
	Quote         = `<|"|>` // the string delimiter
)

// Spellings lists the tool tokens in the order Tokens holds them.
func Spellings() []string {
	return []string{DeclOpen, DeclClose, CallOpen, CallClose, ResponseOpen, ResponseClose, Quote}
}

// Tokens are the ids of the tool tokens in one tokenizer.
type Tokens struct {
	DeclOpen, DeclClose         int
	CallOpen, CallClose         int
	ResponseOpen, ResponseClose int
	Quote                       int
}

// Vocabulary is what LookupTokens needs of a tokenizer
// (*tokenizer.Tokenizer has it).
type Vocabulary interface {
	TokenID(token string) (id int, ok bool)
}

// LookupTokens finds the tool tokens by name. A tokenizer without them
// (Gemma 3's, an older synthetic one) cannot do tool calls: the error
// names the missing tokens.
func LookupTokens(v Vocabulary) (Tokens, error) {
	var t Tokens
	fields := []*int{&t.DeclOpen, &t.DeclClose, &t.CallOpen, &t.CallClose, &t.ResponseOpen, &t.ResponseClose, &t.Quote}
	var missing []string
	for i, s := range Spellings() {
		id, ok := v.TokenID(s)
		if !ok {
			missing = append(missing, s)
			continue
		}
		*fields[i] = id
	}
	if len(missing) > 0 {
		return Tokens{}, fmt.Errorf("tools: the tokenizer has no %s token (a Gemma 4 tokenizer has them all)", strings.Join(missing, ", "))
	}
	return t, nil
}
