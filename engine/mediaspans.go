package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/tokenizer"
)

// CanAttach says whether the session's bundle takes a kind of media, and
// if not, why (NoEncoder) — also when it has no encoders at all.
func (s *Session) CanAttach(kind string) error {
	if s.Media == nil {
		return NoEncoder(kind, string(s.b.Family), s.b.Dir)
	}
	return s.Media.Can(kind)
}

// encodeMedia is Encoders.encodeFile, refusing a kind the bundle has no
// encoder for by name when it has none at all.
func (s *Session) encodeMedia(f MediaFile, starting func()) (*Encoded, error) {
	if s.Media == nil {
		return nil, s.CanAttach(f.Kind)
	}
	return s.Media.encodeFile(f, starting)
}

// spanRef names the media rows at a run of prompt positions: which file
// (by hash) and which of its spans.
type spanRef struct {
	Start  int    `json:"start"`
	Rows   int    `json:"rows"`
	SHA256 string `json:"sha256"`
	Span   int    `json:"span"`
}

// mediaFor converts a message's attachments into the template's spans, in
// the order the template lays them out (images, then audio).
func mediaFor(atts []Attachment) []tokenizer.Media {
	var out []tokenizer.Media
	for _, a := range atts {
		for _, n := range a.Spans {
			out = append(out, tokenizer.Media{Kind: tokenizer.MediaKind(a.Kind), Rows: n})
		}
	}
	return out
}

// layout lists a conversation's attachment spans in prompt order.
func layout(msgs []Message) []spanRef {
	var refs []spanRef
	for _, m := range msgs {
		for _, kind := range []string{MediaImage, MediaAudio} {
			for _, a := range m.Attachments {
				if a.Kind != kind {
					continue
				}
				for i, n := range a.Spans {
					refs = append(refs, spanRef{Rows: n, SHA256: a.SHA256, Span: i})
				}
			}
		}
	}
	return refs
}

// place gives each span of layout its start (where the template put its
// first placeholder) and checks it against ids: the kind's opening token,
// Rows placeholders, its closing token. Positions come from the layout
// (tokenizer.Template.EncodeSpans) or from the record of an earlier turn
// (tailState.Spans), never from looking for placeholder ids: a reply may
// hold one as the model's own token, and it stays that.
func (s *Session) place(layout []spanRef, ids, starts []int) ([]spanRef, error) {
	if len(starts) != len(layout) {
		return nil, fmt.Errorf("the prompt lays out %d media spans for %d attachment spans", len(starts), len(layout))
	}
	refs := slices.Clone(layout)
	for i := range refs {
		refs[i].Start = starts[i]
		if !s.holdsSpan(ids, refs[i]) {
			return nil, fmt.Errorf("the prompt's media span %d (%d tokens at %d) is not where the template put it", i, refs[i].Rows, refs[i].Start)
		}
	}
	return refs, nil
}

// holdsSpan reports whether ids hold a media span at r: an opening token,
// r.Rows placeholders of its kind, the closing token.
func (s *Session) holdsSpan(ids []int, r spanRef) bool {
	if r.Start < 1 || r.Rows <= 0 || r.Start+r.Rows >= len(ids) {
		return false
	}
	for _, k := range []tokenizer.MediaKind{tokenizer.MediaImage, tokenizer.MediaAudio} {
		mt, err := s.tok.MediaTokens(k)
		if err != nil || ids[r.Start] != mt.Placeholder {
			continue
		}
		if ids[r.Start-1] != mt.Open || ids[r.Start+r.Rows] != mt.Close {
			return false
		}
		for _, id := range ids[r.Start : r.Start+r.Rows] {
			if id != mt.Placeholder {
				return false
			}
		}
		return true
	}
	return false
}

// spansIn are the spans that begin within the first n ids (a span whose
// prefill was cut short included: the cache holds part of its rows).
func spansIn(spans []spanRef, n int) []spanRef {
	return slices.DeleteFunc(slices.Clone(spans), func(r spanRef) bool { return r.Start >= n })
}

// softSpans gathers the rows of the placed spans that reach past from (the
// reused prefix): from the session's cache of encoded files, else by
// encoding the file again if it is still there and unchanged (after a
// checkpoint load, say).
func (s *Session) softSpans(msgs []Message, refs []spanRef, from int) ([]chain.SoftSpan, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	byHash := map[string]Attachment{}
	for _, m := range msgs {
		for _, a := range m.Attachments {
			byHash[a.SHA256] = a
		}
	}
	var out []chain.SoftSpan
	for _, r := range refs {
		if r.Start+r.Rows <= from {
			continue
		}
		rows, ok := s.encoded[r.SHA256]
		if !ok {
			a := byHash[r.SHA256]
			enc, err := s.reencode(a)
			if err != nil {
				return nil, err
			}
			rows = enc.Rows
		}
		if r.Span >= len(rows) || len(rows[r.Span]) != r.Rows*s.b.Geometry.Hidden {
			return nil, fmt.Errorf("%s: the encoded rows do not fit the prompt's span", byHash[r.SHA256].Name)
		}
		out = append(out, chain.SoftSpan{Start: r.Start, Rows: rows[r.Span]})
	}
	return out, nil
}

// reencode encodes an attachment's file again, when the cache must be
// rebuilt and its rows are not in memory.
func (s *Session) reencode(a Attachment) (*Encoded, error) {
	if rows, ok := s.Media.lookup(a.Kind, a.SHA256); ok {
		if s.encoded == nil {
			s.encoded = map[string][][]uint16{}
		}
		s.encoded[a.SHA256] = rows
		return &Encoded{Attachment: a, Rows: rows, Reused: true}, nil
	}
	if a.Path == "" {
		return nil, fmt.Errorf("the %s %s must be encoded again to rebuild the cache, and its path is unknown: attach it again or /clear", a.Kind, a.Name)
	}
	if _, err := os.Stat(a.Path); err != nil {
		return nil, fmt.Errorf("the %s %s must be encoded again to rebuild the cache, but %s is gone: attach it again or /clear", a.Kind, a.Name, a.Path)
	}
	enc, err := s.Media.Encode(a.Kind, a.Path)
	if err != nil {
		return nil, err
	}
	if enc.Attachment.SHA256 != a.SHA256 {
		return nil, fmt.Errorf("%s has changed since it was attached (sha256 %.12s…, now %.12s…): attach it again or /clear", a.Path, a.SHA256, enc.Attachment.SHA256)
	}
	if s.encoded == nil {
		s.encoded = map[string][][]uint16{}
	}
	s.encoded[a.SHA256] = enc.Rows
	return enc, nil
}

// mediaPrefix cuts a reusable prefix at the first span whose rows differ
// from those the cache holds: placeholder ids alone do not tell two images
// apart.
func mediaPrefix(lcp int, held, now []spanRef) int {
	for _, n := range now {
		if n.Start >= lcp {
			break
		}
		same := slices.ContainsFunc(held, func(h spanRef) bool { return h == n })
		if !same {
			return n.Start
		}
	}
	return lcp
}

// userMessage is a message to send: a clip sent without words carries the
// published app's transcription instruction (multimodal doc §3.4).
func userMessage(text string, atts []Attachment) Message {
	m := Message{Role: "user", Content: text, Attachments: atts}
	if strings.TrimSpace(text) == "" && slices.ContainsFunc(atts, func(a Attachment) bool { return a.Kind == MediaAudio }) {
		m.Content = TranscriptionInstruction
	}
	return m
}

// attach encodes the files of a message being sent (or takes those
// encoded already) and keeps their rows for as long as the conversation
// may need to prefill them again.
func (s *Session) attach(files []MediaFile, emit func(Event)) ([]Attachment, error) {
	var atts []Attachment
	for _, f := range files {
		enc := f.enc
		if enc == nil {
			var err error
			enc, err = s.encodeMedia(f, func() {
				emit(Notice{Text: fmt.Sprintf("encoding %s (%s)…", filepath.Base(f.label()), f.Kind)})
			})
			if err != nil {
				return nil, err
			}
		}
		if s.encoded == nil {
			s.encoded = map[string][][]uint16{}
		}
		s.encoded[enc.Attachment.SHA256] = enc.Rows
		atts = append(atts, enc.Attachment)
	}
	return atts, nil
}
