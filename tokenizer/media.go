package tokenizer

import (
	"fmt"
	"strings"
)

// MediaKind is an image or an audio clip attached to a user message.
type MediaKind string

const (
	MediaImage MediaKind = "image"
	MediaAudio MediaKind = "audio"
)

// Media is one attachment of a message as the template lays it out: a
// span of Rows placeholder tokens between the kind's opening and closing
// tokens, whose embeddings the engine replaces with the encoder's rows.
type Media struct {
	Kind MediaKind
	Rows int
}

// Gemma 4's media tokens (multimodal doc §3.1), looked up by name.
const (
	imageOpen, imagePlaceholder, imageClose = "<|image>", "<|image|>", "<image|>"
	audioOpen, audioPlaceholder, audioClose = "<|audio>", "<|audio|>", "<audio|>"
)

// MediaTokens are the ids of one kind's span tokens.
type MediaTokens struct {
	Open, Placeholder, Close int
}

// MediaTokens returns the span tokens of a kind, or an error naming the
// token the tokenizer lacks.
func (t *Tokenizer) MediaTokens(k MediaKind) (MediaTokens, error) {
	names := [3]string{imageOpen, imagePlaceholder, imageClose}
	if k == MediaAudio {
		names = [3]string{audioOpen, audioPlaceholder, audioClose}
	} else if k != MediaImage {
		return MediaTokens{}, fmt.Errorf("tokenizer: unknown media kind %q", k)
	}
	var ids [3]int
	for i, n := range names {
		id, ok := t.TokenID(n)
		if !ok {
			return MediaTokens{}, fmt.Errorf("tokenizer: no %s token, so this tokenizer cannot take %s input", n, k)
		}
		ids[i] = id
	}
	return MediaTokens{Open: ids[0], Placeholder: ids[1], Close: ids[2]}, nil
}

// mediaSpan renders one attachment's span as markup text: the opening
// token, Rows placeholders, the closing token.
func (tp *Template) mediaSpan(m Media) (string, error) {
	if m.Rows <= 0 {
		return "", fmt.Errorf("tokenizer: a %s attachment spans %d soft tokens", m.Kind, m.Rows)
	}
	if _, err := tp.tok.MediaTokens(m.Kind); err != nil {
		return "", err
	}
	if m.Kind == MediaAudio {
		return audioOpen + strings.Repeat(audioPlaceholder, m.Rows) + audioClose, nil
	}
	return imageOpen + strings.Repeat(imagePlaceholder, m.Rows) + imageClose, nil
}

// userTurn renders a user message's body as the published runtime lays out
// a media turn (multimodal doc §3.2, §3.4): images first, right before the
// text with no newline between, then the text, then audio spans right
// after it (the instruction precedes the clip).
func (tp *Template) userTurn(m Message, media, text func(string)) error {
	for _, md := range m.Media {
		if md.Kind != MediaImage {
			continue
		}
		span, err := tp.mediaSpan(md)
		if err != nil {
			return err
		}
		media(span)
	}
	text(m.Content)
	for _, md := range m.Media {
		if md.Kind == MediaImage {
			continue
		}
		span, err := tp.mediaSpan(md)
		if err != nil {
			return err
		}
		media(span)
	}
	return nil
}
