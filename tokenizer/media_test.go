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

// TestMediaSpanPositions: EncodeSpans says where the layout put each
// span's placeholders, in prompt order, whatever the text and replies
// spell; EncodeAfterReplySpans those of the turns after the last reply,
// counted from its ids.
func TestMediaSpanPositions(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	tmpl, err := NewTemplate(tok)
	if err != nil {
		t.Fatal(err)
	}
	img, _ := tok.MediaTokens(MediaImage)
	aud, _ := tok.MediaTokens(MediaAudio)
	c := Conversation{System: "Look closely.", Messages: []Message{
		{Role: RoleUser, Content: "Compare <|image|> these.", Media: []Media{{MediaAudio, 2}, {MediaImage, 3}, {MediaImage, 1}}},
		{Role: RoleModel, Content: "The first <|image|><|image|> is a cat."},
		{Role: RoleUser, Content: "And this?", Media: []Media{{MediaImage, 2}}},
	}}
	ids, spans, err := tmpl.EncodeSpans(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ ph, rows int }{{img.Placeholder, 3}, {img.Placeholder, 1}, {aud.Placeholder, 2}, {img.Placeholder, 2}}
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(spans), len(want))
	}
	open := map[int]int{img.Placeholder: img.Open, aud.Placeholder: aud.Open}
	shut := map[int]int{img.Placeholder: img.Close, aud.Placeholder: aud.Close}
	for i, w := range want {
		at := spans[i]
		if ids[at-1] != open[w.ph] || ids[at+w.rows] != shut[w.ph] || !slices.Equal(ids[at:at+w.rows], slices.Repeat([]int{w.ph}, w.rows)) {
			t.Errorf("span %d at %d: %v", i, at, ids[at-1:at+w.rows+1])
		}
	}
	if plain, _ := tmpl.Encode(c); !slices.Equal(plain, ids) {
		t.Error("EncodeSpans' ids differ from Encode's")
	}
	rest, after, ok, err := tmpl.EncodeAfterReplySpans(c)
	if err != nil || !ok || len(after) != 1 {
		t.Fatalf("after the reply: %v %v %v", after, ok, err)
	}
	if off := len(ids) - len(rest); off+after[0] != spans[3] {
		t.Errorf("the last span is at %d after the reply, %d in the prompt", after[0], spans[3])
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
