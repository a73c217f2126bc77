package tokenizer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
	"github.com/orchard-llm/orchard/tools"
)

// Role is who speaks a Message.
type Role string

// Roles of the Gemma chat format. "assistant" is accepted as RoleModel.
const (
	RoleSystem Role = "system"
	RoleUser   Role = "user"
	RoleModel  Role = "model"
)

// Message is one turn of a conversation. A user message may carry media,
// laid out around its text (media.go).
type Message struct {
	Role    Role
	Content string
	Media   []Media
	// Parts, when set, is a model message written as pieces instead of
	// Content: its text with the tool calls and results inside the turn
	// (tools.Text). Markup pieces are the format's tokens, the others
	// text; the pieces are written as they are, untrimmed, so that a turn
	// re-rendered around a tool loop keeps the bytes the model wrote.
	Parts tools.Text
}

// Conversation is what a Template renders: an optional system prompt, the
// thinking switch, and the turns so far, usually ending with the user's.
// A system message after the first turn is a system turn of its own, where
// it stands, as Gemma 4's template renders it.
type Conversation struct {
	System   string
	Thinking bool
	Messages []Message
	// Continue leaves the last message, the model's, open: the prompt
	// ends with its text instead of a new model turn, so the reply goes
	// on from it (an API client's prefill).
	Continue bool
	// Tools are the function declarations (tools.RenderDeclarations),
	// written at the end of the system turn as Gemma 4's template does.
	Tools tools.Text
}

// ManifestPrompt holds the prompt strings a bundle's manifest.json may
// carry (camelCase keys promptPrefix, promptSuffix, assistantSuffix,
// promptSuffixThinking).
type ManifestPrompt struct {
	PromptPrefix         string `json:"promptPrefix,omitempty"`
	PromptSuffix         string `json:"promptSuffix,omitempty"`
	AssistantSuffix      string `json:"assistantSuffix,omitempty"`
	PromptSuffixThinking string `json:"promptSuffixThinking,omitempty"`
}

// Default spellings of Gemma 4's control tokens. Only the spellings are
// fixed; ids always come from the tokenizer.
const (
	turnOpen     = "<|turn>"
	turnClose    = "<turn|>"
	thinkToken   = "<|think|>"
	channelOpen  = "<|channel>"
	channelClose = "<channel|>"
)

// Template renders conversations in the Gemma 4 chat format,
//
//	<bos><|turn>system\n[<|think|>\n]{system}<turn|>\n
//	<|turn>user\n{text}<turn|>\n
//	<|turn>model\n{text}<turn|>\n
//	<|turn>model\n
//
// or, for bundles whose manifest sets them, with the manifest's prompt
// strings. Thought blocks (<|channel>…<channel|>) are removed from model
// turns. Both forms start with exactly one BOS.
type Template struct {
	tok      *Tokenizer
	bos      string // BOS token text; "" when the tokenizer has none
	manifest *ManifestPrompt
	assist   string // assistant suffix of a manifest template
	gemma4   bool   // the tokenizer has <|turn> and <turn|>
}

// NewTemplate returns the canonical Gemma 4 template. The tokenizer must
// have the <|turn> and <turn|> tokens.
func NewTemplate(t *Tokenizer) (*Template, error) {
	tp := newTemplate(t)
	if !tp.gemma4 {
		return nil, fmt.Errorf("tokenizer: chat template: the tokenizer has no %s and %s tokens", turnOpen, turnClose)
	}
	return tp, nil
}

// NewManifestTemplate returns a template built from a manifest's prompt
// strings: a user turn is PromptPrefix+text+PromptSuffix and a model turn
// text+AssistantSuffix. An empty AssistantSuffix is derived from the
// other two: the part of PromptSuffix before the role-open marker (the
// text before "user" in PromptPrefix) followed by "model". A manifest
// without PromptPrefix and PromptSuffix gets the canonical template.
func NewManifestTemplate(t *Tokenizer, p ManifestPrompt) (*Template, error) {
	if p.PromptPrefix == "" && p.PromptSuffix == "" {
		return NewTemplate(t)
	}
	if p.PromptPrefix == "" || p.PromptSuffix == "" {
		return nil, errors.New("tokenizer: chat template: manifest sets only one of promptPrefix and promptSuffix")
	}
	tp := newTemplate(t)
	tp.manifest = &p
	tp.assist = p.AssistantSuffix
	if tp.assist == "" {
		tp.assist = deriveAssistantSuffix(p.PromptPrefix, p.PromptSuffix)
	}
	return tp, nil
}

func newTemplate(t *Tokenizer) *Template {
	tp := &Template{tok: t}
	if id, ok := t.BOS(); ok {
		tp.bos, _ = t.Token(id)
	}
	_, hasOpen := t.TokenID(turnOpen)
	_, hasClose := t.TokenID(turnClose)
	tp.gemma4 = hasOpen && hasClose
	return tp
}

func deriveAssistantSuffix(prefix, suffix string) string {
	if i := strings.Index(prefix, "user"); i > 0 {
		if j := strings.Index(suffix, prefix[:i]+"model"); j >= 0 {
			return suffix[:j]
		}
	}
	return suffix
}

// segment is a piece of rendered text; user text is literal, so that
// special-token spellings in it stay text when encoded.
type segment struct {
	text    string
	literal bool
	reply   bool // the content of a model message
	media   bool // a media span: opening token, placeholders, closing token
}

// Render returns the prompt text, ending with the generation prompt.
func (tp *Template) Render(c Conversation) (string, error) {
	segs, err := tp.segments(c)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.text)
	}
	return b.String(), nil
}

// Encode returns the prompt's token ids: the ids of Render's text, except
// that special-token spellings inside message text are encoded as plain
// text rather than as control tokens.
func (tp *Template) Encode(c Conversation) ([]int, error) {
	ids, _, err := tp.EncodeSpans(c)
	return ids, err
}

// EncodeSpans is Encode, and where the template put each media span: the
// position of its first placeholder, in prompt order (each message's
// images, then its clips). The positions come from the layout, never from
// looking for placeholder ids, which a reply may hold as its own tokens.
func (tp *Template) EncodeSpans(c Conversation) (ids, spans []int, err error) {
	segs, err := tp.segments(c)
	if err != nil {
		return nil, nil, err
	}
	ids, spans = tp.tok.encodeSegments(segs)
	return ids, spans, nil
}

func (tp *Template) segments(c Conversation) ([]segment, error) {
	msgs := c.Messages
	system := c.System
	// A leading system message is the system prompt; with one given too,
	// turn-token templates render it as a system turn of its own after
	// the prompt's (a conversation's summary, engine/compact.go).
	if len(msgs) > 0 && msgs[0].Role == RoleSystem && (system == "" || !tp.usesTurnTokens()) {
		if system != "" {
			return nil, errors.New("tokenizer: chat template: system prompt given twice")
		}
		system, msgs = msgs[0].Content, msgs[1:]
	}
	for i := range msgs {
		switch msgs[i].Role {
		case RoleUser, RoleModel, RoleSystem:
		case "assistant":
			msgs = append([]Message(nil), msgs...)
			msgs[i].Role = RoleModel
		default:
			return nil, fmt.Errorf("tokenizer: chat template: message %d has role %s", i, termsafe.Quote(string(msgs[i].Role)))
		}
	}
	open := c.Continue && len(msgs) > 0 && msgs[len(msgs)-1].Role == RoleModel
	if c.Continue && !open {
		return nil, errors.New("tokenizer: chat template: only a conversation that ends with the model's message can be continued")
	}
	if c.Thinking && !tp.gemma4 && (tp.manifest == nil || tp.manifest.PromptSuffixThinking == "") {
		return nil, errors.New("tokenizer: chat template: thinking needs a tokenizer with Gemma 4 turn tokens or a manifest promptSuffixThinking")
	}
	if c.Thinking && tp.usesTurnTokens() {
		if _, ok := tp.tok.TokenID(thinkToken); !ok {
			return nil, fmt.Errorf("tokenizer: chat template: thinking needs the %s token", thinkToken)
		}
	}

	var segs []segment
	markup := func(s string) { segs = append(segs, segment{text: s}) }
	text := func(s string) { segs = append(segs, segment{text: s, literal: true}) }
	reply := func(s string) { segs = append(segs, segment{text: s, literal: true, reply: true}) }
	media := func(s string) { segs = append(segs, segment{text: s, media: true}) }

	if tp.bos != "" && (tp.manifest == nil || !strings.HasPrefix(tp.manifest.PromptPrefix, tp.bos)) {
		markup(tp.bos)
	}
	if len(c.Tools) > 0 && !tp.usesTurnTokens() {
		return nil, errors.New("tokenizer: chat template: tool declarations need Gemma 4's turn tokens (this bundle's template has no system turn)")
	}
	pieces := func(t tools.Text) {
		for _, p := range t {
			if p.Literal {
				segs = append(segs, segment{text: p.Text, literal: true, reply: true})
			} else {
				segs = append(segs, segment{text: p.Text, reply: true})
			}
		}
	}
	if tp.usesTurnTokens() && (system != "" || c.Thinking || len(c.Tools) > 0) {
		markup(turnOpen + "system\n")
		if c.Thinking {
			markup(thinkToken + "\n")
		}
		text(strings.TrimSpace(system))
		for _, p := range c.Tools {
			if p.Literal {
				text(p.Text)
			} else {
				markup(p.Text)
			}
		}
		markup(turnClose + "\n")
		system = ""
	}

	if tp.manifest == nil {
		for i, m := range msgs {
			content := m.Content
			if m.Role == RoleModel {
				content = StripThoughts(content)
			}
			markup(turnOpen + string(m.Role) + "\n")
			switch m.Role {
			case RoleModel:
				if m.Parts != nil {
					pieces(m.Parts)
				} else {
					reply(strings.TrimSpace(content))
				}
				if open && i == len(msgs)-1 {
					return segs, nil
				}
			case RoleSystem:
				text(strings.TrimSpace(content))
			default:
				m.Content = strings.TrimSpace(content)
				if err := tp.userTurn(m, media, text); err != nil {
					return nil, err
				}
			}
			markup(turnClose + "\n")
		}
		markup(turnOpen + "model\n")
		return segs, nil
	}

	// The manifest form ends with the user's prompt and its suffix, which
	// opens the model's turn.
	p := tp.manifest
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != RoleUser && !open {
		return nil, errors.New("tokenizer: chat template: a manifest template needs a conversation that ends with a user message")
	}
	for i, m := range msgs {
		switch m.Role {
		case RoleModel:
			switch {
			case m.Parts != nil && !tp.usesTurnTokens():
				return nil, errors.New("tokenizer: chat template: tool calls need Gemma 4's turn tokens (this bundle's template has none)")
			case m.Parts != nil:
				pieces(m.Parts)
			default:
				reply(StripThoughts(m.Content))
			}
			if !open || i < len(msgs)-1 {
				markup(tp.assist)
			}
			continue
		case RoleSystem:
			if tp.usesTurnTokens() {
				markup(turnOpen + "system\n")
				text(strings.TrimSpace(m.Content))
				markup(turnClose + "\n")
				continue
			}
			if i+1 == len(msgs) || msgs[i+1].Role != RoleUser {
				return nil, errors.New("tokenizer: chat template: in a manifest template a system message must come before a user message")
			}
			// Without system turns it leads the next user message, as the
			// system prompt leads the first.
			system = strings.TrimSpace(system + "\n\n" + m.Content)
			continue
		}
		content := m.Content
		if system != "" {
			// Without a system turn (Gemma 3 style), the system prompt
			// leads the first user message.
			content = strings.TrimSpace(system) + "\n\n" + content
			system = ""
		}
		markup(p.PromptPrefix)
		m.Content = content
		if err := tp.userTurn(m, media, text); err != nil {
			return nil, err
		}
		if i == len(msgs)-1 && c.Thinking && p.PromptSuffixThinking != "" {
			markup(p.PromptSuffixThinking)
		} else {
			markup(p.PromptSuffix)
		}
	}
	return segs, nil
}

// usesTurnTokens reports whether system turns are written with Gemma 4's
// turn tokens: always for the canonical template, and for a manifest whose
// prefix opens turns with <|turn>.
func (tp *Template) usesTurnTokens() bool {
	if !tp.gemma4 {
		return false
	}
	return tp.manifest == nil || strings.Contains(tp.manifest.PromptPrefix, turnOpen)
}

// StopIDs returns the tokens that end a model turn and that the tokenizer
// has: <turn|> (Gemma 4), <end_of_turn> (Gemma 3) and <eos>, in id order.
// A bundle's config may name more.
func (tp *Template) StopIDs() []int {
	var ids []int
	for _, s := range []string{"<eos>", turnClose, "<end_of_turn>"} {
		if id, ok := tp.tok.TokenID(s); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// StripThoughts removes thought blocks, <|channel>…<channel|>, from model
// output before it is kept in the history. An unterminated block runs to
// the end of the text.
func StripThoughts(s string) string {
	if !strings.Contains(s, channelOpen) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, channelOpen)
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i+len(channelOpen):]
		j := strings.Index(rest, channelClose)
		if j < 0 {
			break
		}
		s = rest[j+len(channelClose):]
	}
	return b.String()
}

// encodeSegments encodes rendered segments as Encode would encode their
// concatenation, except that literal segments match no special tokens.
// Text between added tokens is joined across segment boundaries first, so
// that BPE sees the same words as for the whole string. spans are where
// the media segments' placeholders begin (after their opening token).
func (t *Tokenizer) encodeSegments(segs []segment) (ids, spans []int) {
	sc := t.scratches.Get().(*encodeScratch)
	defer t.scratches.Put(sc)
	var (
		out     []int
		pending strings.Builder
		literal bool
		pieces  []piece
	)
	flush := func() {
		if pending.Len() > 0 {
			out = t.appendEncoded(out, pending.String(), literal, sc)
			pending.Reset()
			literal = false
		}
	}
	for _, s := range segs {
		if s.media {
			flush()
			spans = append(spans, len(out)+1)
		}
		pieces = t.added.split(t.added.raw, s.text, s.literal, pieces[:0])
		for _, p := range pieces {
			if p.id >= 0 {
				flush()
				out = append(out, p.id)
				continue
			}
			pending.WriteString(p.text)
			literal = literal || s.literal
		}
	}
	flush()
	return out, spans
}

// EncodeAfterReply returns the ids of everything the conversation renders
// after the content of its last model message: the end of that turn and
// the new turns. A session appends them to the tokens its cache already
// holds for the reply, so the generated ids are reused as they are rather
// than re-tokenized from text (which can differ, and would cost a
// re-prefill). ok is false when the conversation has no model message.
func (tp *Template) EncodeAfterReply(c Conversation) (ids []int, ok bool, err error) {
	ids, _, ok, err = tp.EncodeAfterReplySpans(c)
	return ids, ok, err
}

// EncodeAfterReplySpans is EncodeAfterReply, and where the media spans of
// those ids begin (as EncodeSpans): the spans of the messages after the
// last reply.
func (tp *Template) EncodeAfterReplySpans(c Conversation) (ids, spans []int, ok bool, err error) {
	segs, err := tp.segments(c)
	if err != nil {
		return nil, nil, false, err
	}
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].reply {
			ids, spans = tp.tok.encodeSegments(segs[i+1:])
			return ids, spans, true, nil
		}
	}
	return nil, nil, false, nil
}
