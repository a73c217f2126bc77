package engine

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
)

// mediaEngine is an engine over a counting session with the bundle's
// encoders.
func mediaEngine(t testing.TB, family string) (*Engine, *countingChain) {
	t.Helper()
	b := testbundle.Tiny(t, family)
	s, cc := countingSession(t, b, DefaultSettings())
	s.Media = NewEncoders(b, reference.New(), coreml.CPUAndGPU)
	e := Start(s, ModelInfo{Media: s.Media.Kinds()})
	t.Cleanup(func() { e.Close() })
	return e, cc
}

func readBytes(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCompleteMedia: a request carrying a picture or a clip as bytes gives
// the tokens a chat session gives the same file by path; the follow-up,
// resending the whole conversation with the file, prefills only its new
// words and encodes nothing again.
func TestCompleteMedia(t *testing.T) {
	dir := t.TempDir()
	pic, clip := writePNG(t, dir, 4, 30, 20), writeWAV(t, dir, 0.5, 330)
	for _, tt := range mediaCases(pic, clip) {
		t.Run(tt.family+"-"+tt.kind, func(t *testing.T) {
			b := testbundle.Tiny(t, tt.family)
			set := greedyOff(8)
			ref := mediaSession(t, b, set)
			want1, _ := sendMedia(t, ref, tt.text, MediaFile{Kind: tt.kind, Path: tt.path})
			first := len(ref.LastPrompt())
			want2, _ := sendMedia(t, ref, "And then?")

			e, cc := mediaEngine(t, tt.family)
			file := MediaFile{Kind: tt.kind, Name: "messages[0].content[0]", Data: readBytes(t, tt.path)}
			r1 := run(t, e, Request{Messages: []Message{{Role: "user", Content: tt.text}}, Settings: set, Media: map[int][]MediaFile{0: {file}}})
			finished(t, r1)
			if !slices.Equal(r1.ids, want1) {
				t.Fatalf("request %v, chat %v", r1.ids, want1)
			}
			var st Started
			for _, ev := range r1.evs {
				if s, ok := ev.(Started); ok {
					st = s
				}
			}
			if len(st.Attachments) != 1 || st.Attachments[0].Name != file.Name || st.Attachments[0].Path != "" || st.Attachments[0].Tokens() == 0 {
				t.Fatalf("started with %+v", st.Attachments)
			}
			before := cc.prefilled
			r2 := run(t, e, Request{Messages: []Message{{Role: "user", Content: tt.text}, {Role: "model", Content: r1.text}, {Role: "user", Content: "And then?"}},
				Settings: set, Media: map[int][]MediaFile{0: {file}}})
			m := finished(t, r2)
			if !slices.Equal(r2.ids, want2) {
				t.Fatalf("follow-up %v, chat %v", r2.ids, want2)
			}
			if fed := cc.prefilled - before; m.ReusedTokens < first || fed != m.PromptTokens-m.ReusedTokens || fed > 20 {
				t.Fatalf("the follow-up reused %d of %d prompt tokens and fed %d (the first prompt was %d)", m.ReusedTokens, m.PromptTokens, fed, first)
			}
			if ms := e.MediaStats(); ms.Encoded != 1 || ms.Reused < 1 || ms.Kept != 1 || ms.KeptBytes <= 0 {
				t.Fatalf("media stats %+v: want the file encoded once", ms)
			}
		})
	}
}

// TestRequestClipWithoutWords: a clip sent without words carries the
// transcription instruction, in any message of the request, as a chat
// message does.
func TestRequestClipWithoutWords(t *testing.T) {
	s := mediaSession(t, testbundle.Tiny(t, "r1"), greedyOff(4))
	clip := readBytes(t, writeWAV(t, t.TempDir(), 0.3, 500))
	req, rows, err := s.requestMedia(Request{Messages: []Message{{Role: "user"}, {Role: "model", Content: "ok"}, {Role: "user", Content: "again"}},
		Media: map[int][]MediaFile{0: {{Kind: MediaAudio, Name: "a", Data: clip}}}}, func() bool { return false }, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if req.Messages[0].Content != TranscriptionInstruction || req.Messages[2].Content != "again" || len(rows) != 1 || len(req.Messages[0].Attachments) != 1 {
		t.Fatalf("messages %+v, %d rows", req.Messages, len(rows))
	}
}

// TestCompleteMediaAlternate: three clients alternate, with pictures, on
// one conversation kept in memory and the others on disk; coming back to
// each restores its cache (the pictures' spans included) and encodes
// nothing again, and a conversation that differs only in its picture is
// not served the other picture's cache.
func TestCompleteMediaAlternate(t *testing.T) {
	dir := t.TempDir()
	pics := []string{writePNG(t, dir, 5, 16, 16), writePNG(t, dir, 6, 16, 16), writePNG(t, dir, 7, 16, 16)}
	b := testbundle.Tiny(t, "r1")
	set := greedyOff(6)
	const q = "Which fruit is it?"
	var want1, want2 [][]int
	for _, p := range pics {
		ref := mediaSession(t, b, set)
		a, _ := sendMedia(t, ref, q, MediaFile{Kind: MediaImage, Path: p})
		c, _ := sendMedia(t, ref, "Ripe?")
		want1, want2 = append(want1, a), append(want2, c)
	}
	if slices.Equal(want1[0], want1[1]) && slices.Equal(want1[1], want1[2]) {
		t.Fatalf("the pictures give the same reply %v: the test cannot tell them apart", want1[0])
	}

	e, cc := mediaEngine(t, "r1")
	e.KeepConversations(1, 1<<30)
	e.SpillConversations(filepath.Join(t.TempDir(), "conversations"), 1<<30)
	file := func(i int) map[int][]MediaFile {
		return map[int][]MediaFile{0: {{Kind: MediaImage, Name: "messages[0].content[0]", Data: readBytes(t, pics[i])}}}
	}
	var texts []string
	var firsts []int
	for i := range pics {
		r := run(t, e, Request{Messages: []Message{{Role: "user", Content: q}}, Settings: set, Media: file(i)})
		m := finished(t, r)
		if !slices.Equal(r.ids, want1[i]) {
			t.Fatalf("picture %d: %v, alone %v (a cache of another picture was reused?)", i, r.ids, want1[i])
		}
		texts, firsts = append(texts, r.text), append(firsts, m.PromptTokens)
	}
	if st := e.ConversationStats(); st.OnDisk < 1 {
		t.Fatalf("nothing on disk: %+v", st)
	}
	for i := range pics {
		before := cc.prefilled
		r := run(t, e, Request{Messages: []Message{{Role: "user", Content: q}, {Role: "model", Content: texts[i]}, {Role: "user", Content: "Ripe?"}}, Settings: set, Media: file(i)})
		m := finished(t, r)
		if !slices.Equal(r.ids, want2[i]) {
			t.Fatalf("follow-up %d: %v, uninterrupted %v", i, r.ids, want2[i])
		}
		if fed := cc.prefilled - before; m.ReusedTokens < firsts[i] || fed > 20 {
			t.Fatalf("follow-up %d reused %d (first prompt %d), fed %d", i, m.ReusedTokens, firsts[i], fed)
		}
	}
	if ms := e.MediaStats(); ms.Encoded != len(pics) {
		t.Fatalf("media stats %+v: each picture should be encoded once", ms)
	}
}

// TestCompleteMediaRefusals: what the request gets wrong is a
// RequestError naming the file by the name the front end gave it.
func TestCompleteMediaRefusals(t *testing.T) {
	dir := t.TempDir()
	pic := readBytes(t, writePNG(t, dir, 8, 8, 8))
	e, _ := mediaEngine(t, "v2")
	set := greedyOff(4)
	user := []Message{{Role: "user", Content: "look"}}
	for _, tt := range []struct {
		name  string
		msgs  []Message
		media map[int][]MediaFile
		says  []string
		is    error
	}{
		{"not a picture", user, map[int][]MediaFile{0: {{Kind: MediaImage, Name: "messages[0].content[1]", Data: []byte("GIF89a but not really")}}},
			[]string{"messages[0].content[1]"}, nil},
		{"not a format", user, map[int][]MediaFile{0: {{Kind: MediaImage, Name: "messages[0].content[1]", Data: []byte("plain text")}}},
			[]string{"messages[0].content[1]", "PNG, JPEG"}, nil},
		{"no audio encoder", user, map[int][]MediaFile{0: {{Kind: MediaAudio, Name: "messages[0].content[0]", Data: pic}}},
			[]string{"audio_fp16.mlmodelc"}, ErrNoEncoder},
		{"on a reply", []Message{{Role: "user", Content: "a"}, {Role: "model", Content: "b"}, {Role: "user", Content: "c"}},
			map[int][]MediaFile{1: {{Kind: MediaImage, Name: "x", Data: pic}}}, []string{"not a user message"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, e, Request{Messages: tt.msgs, Settings: set, Media: tt.media})
			f, ok := r.end.(Failed)
			var re *RequestError
			if !ok || !errors.As(f.Err, &re) {
				t.Fatalf("want a RequestError, got %#v", r.end)
			}
			for _, s := range tt.says {
				if !strings.Contains(f.Err.Error(), s) {
					t.Errorf("%q does not say %q", f.Err, s)
				}
			}
			if tt.is != nil && !errors.Is(f.Err, tt.is) {
				t.Errorf("%v is not %v", f.Err, tt.is)
			}
			var fe *FileError
			if tt.is == nil && tt.name != "on a reply" && (!errors.As(f.Err, &fe) || fe.Path != "messages[0].content[1]") {
				t.Errorf("%v: want a FileError naming the part", f.Err)
			}
		})
	}
	// The engine is still fine.
	finished(t, run(t, e, Request{Messages: user, Settings: set, Media: map[int][]MediaFile{0: {{Kind: MediaImage, Name: "p", Data: pic}}}}))
}

// TestEncodedMemo: files are known by their bytes under any name or path;
// past the budget the least recently used rows go and the file is encoded
// again.
func TestEncodedMemo(t *testing.T) {
	dir := t.TempDir()
	b := testbundle.Tiny(t, "r1")
	enc := NewEncoders(b, reference.New(), coreml.CPUAndGPU)
	defer enc.Close()
	p1, p2 := writePNG(t, dir, 1, 8, 8), writePNG(t, dir, 2, 8, 8)
	a, err := enc.Encode(MediaImage, p1)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(2 * len(a.Rows[0]))
	for _, tt := range []struct {
		f       MediaFile
		reused  bool
		name    string
		encoded int
	}{
		{MediaFile{Kind: MediaImage, Path: p1}, true, "picture-1.png", 1},
		{MediaFile{Kind: MediaImage, Name: "sent.png", Data: readBytes(t, p1)}, true, "sent.png", 1},
		{MediaFile{Kind: MediaImage, Path: p2}, false, "picture-2.png", 2},
		{MediaFile{Kind: MediaImage, Path: p1}, true, "picture-1.png", 2},
	} {
		got, err := enc.EncodeFile(tt.f)
		if err != nil {
			t.Fatal(err)
		}
		if got.Reused != tt.reused || got.Attachment.Name != tt.name || got.Attachment.Path != tt.f.Path || enc.Stats().Encoded != tt.encoded {
			t.Errorf("%+v: reused %v name %q path %q, %+v", tt.f, got.Reused, got.Attachment.Name, got.Attachment.Path, enc.Stats())
		}
		if !slices.Equal(got.Rows[0], a.Rows[0]) && tt.f.Path != p2 {
			t.Errorf("%+v: rows differ", tt.f)
		}
	}
	enc.KeepEncoded(size) // room for one: p1 was used last
	if st := enc.Stats(); st.Kept != 1 || st.KeptBytes != size {
		t.Fatalf("after trimming: %+v", st)
	}
	if got, _ := enc.Encode(MediaImage, p2); got.Reused {
		t.Error("p2 should have been dropped")
	}
	if got, _ := enc.Encode(MediaImage, p1); got.Reused {
		t.Error("p1 should have made room for p2")
	}
	enc.KeepEncoded(-1)
	if got, _ := enc.Encode(MediaImage, p1); got.Reused || enc.Stats().Kept != 0 {
		t.Errorf("nothing should be kept: %+v", enc.Stats())
	}
}

// BenchmarkEncodeFileKept: what a resent picture costs when its rows are
// kept (hash and lookup) against encoding it again (decode, resize,
// patches, encoder), for a 1024×768 PNG of noise (2.3 MB, as a photo) on
// the tiny bundle; the encoder itself dominates on a Mac, so the saving
// there is larger.
func BenchmarkEncodeFileKept(b *testing.B) {
	bun := testbundle.Tiny(b, "r1")
	img := image.NewNRGBA(image.Rect(0, 0, 1024, 768))
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.Uint32())
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	f := MediaFile{Kind: MediaImage, Name: "messages[0].content[0]", Data: data}
	for _, tt := range []struct {
		name string
		keep int64
	}{{"kept", 0}, {"encoded", -1}} {
		b.Run(tt.name, func(b *testing.B) {
			enc := NewEncoders(bun, reference.New(), coreml.CPUAndGPU)
			defer enc.Close()
			enc.KeepEncoded(tt.keep)
			if _, err := enc.EncodeFile(f); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := enc.EncodeFile(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
