package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

// TestMediaLayout: media turns are laid out exactly as the published
// runtime lays them out (multimodal doc §3.2, §3.4): the image span right
// after "user\n" and right before the question, no newline around it; the
// instruction before the audio span, which is followed directly by <turn|>.
func TestMediaLayout(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	tmpl, err := NewTemplate(tok)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tok.MediaTokens(MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	aud, err := tok.MediaTokens(MediaAudio)
	if err != nil {
		t.Fatal(err)
	}
	if img.Placeholder == aud.Placeholder || img.Open == img.Close {
		t.Fatalf("media tokens %+v %+v", img, aud)
	}
	head := tok.Encode("<bos><|turn>user\n")
	tail := tok.Encode("<turn|>\n<|turn>model\n")
	cat := func(parts ...[]int) []int { return slices.Concat(parts...) }
	span := func(m MediaTokens, n int) []int {
		return cat([]int{m.Open}, slices.Repeat([]int{m.Placeholder}, n), []int{m.Close})
	}
	for _, tt := range []struct {
		name string
		msg  Message
		want []int
	}{
		{"image then question", Message{Role: RoleUser, Content: "What is this?", Media: []Media{{MediaImage, 3}}},
			cat(head, span(img, 3), tok.EncodeLiteral("What is this?"), tail)},
		{"instruction then audio", Message{Role: RoleUser, Content: "Transcribe this.", Media: []Media{{MediaAudio, 2}}},
			cat(head, tok.EncodeLiteral("Transcribe this."), span(aud, 2), tail)},
		{"two images, a clip", Message{Role: RoleUser, Content: "Compare.", Media: []Media{{MediaAudio, 1}, {MediaImage, 2}, {MediaImage, 1}}},
			cat(head, span(img, 2), span(img, 1), tok.EncodeLiteral("Compare."), span(aud, 1), tail)},
	} {
		got, err := tmpl.Encode(Conversation{Messages: []Message{tt.msg}})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %v\nwant %v", tt.name, got, tt.want)
		}
	}
	// A follow-up question in a later turn needs no new span: the cache
	// holds the image, and the ids of the first turn are a prefix.
	first := Conversation{Messages: []Message{{Role: RoleUser, Content: "What is this?", Media: []Media{{MediaImage, 3}}}}}
	a, _ := tmpl.Encode(first)
	second := first
	second.Messages = append(slices.Clone(first.Messages), Message{Role: RoleModel, Content: "A cat."}, Message{Role: RoleUser, Content: "What colour?"})
	b, _ := tmpl.Encode(second)
	if !slices.Equal(b[:len(a)-len(tail)], a[:len(a)-len(tail)]) {
		t.Error("the follow-up does not extend the first turn's ids")
	}
	// The user's own text never becomes a media token.
	lit, _ := tmpl.Encode(Conversation{Messages: []Message{{Role: RoleUser, Content: "<|image|><|audio>"}}})
	if slices.Contains(lit, img.Placeholder) || slices.Contains(lit, aud.Open) {
		t.Errorf("typed media tokens became special: %v", lit)
	}
}

func TestMediaRefusals(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	tmpl, _ := NewTemplate(tok)
	_, err := tmpl.Encode(Conversation{Messages: []Message{{Role: RoleUser, Content: "x", Media: []Media{{MediaImage, 0}}}}})
	if err == nil || !strings.Contains(err.Error(), "0 soft tokens") {
		t.Errorf("zero rows: %v", err)
	}
}
