package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/internal/testmedia"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

// writePNG writes a w×h picture whose pattern depends on seed.
func writePNG(t testing.TB, dir string, seed, w, h int) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("picture-%d.png", seed))
	if err := os.WriteFile(p, testmedia.PNG(seed, w, h), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeWAV writes a 16 kHz mono 16-bit clip of a tone.
func writeWAV(t testing.TB, dir string, seconds, hz float64) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("tone-%.0f.wav", hz))
	if err := os.WriteFile(p, testmedia.WAV(seconds, hz), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// mediaCase is a first turn with a file.
type mediaCase struct{ family, kind, path, text string }

// mediaCases are the families that take each kind of file: r1 and v2 a
// picture, r1 a clip.
func mediaCases(pic, clip string) []mediaCase {
	return []mediaCase{
		{"r1", MediaImage, pic, "What is this?"},
		{"v2", MediaImage, pic, "What is this?"},
		{"r1", MediaAudio, clip, "Transcribe."},
	}
}

// mediaSession is a session on a tiny bundle with its encoders.
func mediaSession(t testing.TB, b *bundle.Bundle, set Settings) *Session {
	t.Helper()
	s := newSession(t, b, set)
	s.Media = NewEncoders(b, reference.New(), coreml.CPUAndGPU)
	return s
}

// sendMedia runs a turn with attachments and returns its tokens and the
// Started event.
func sendMedia(t testing.TB, s *Session, text string, files ...MediaFile) ([]int, Started) {
	t.Helper()
	var ids []int
	var st Started
	err := s.Send(text, func(e Event) {
		switch e := e.(type) {
		case *Delta:
			ids = append(ids, e.Tokens...)
		case Started:
			st = e
		}
	}, files...)
	if err != nil {
		t.Fatalf("send %q: %v", text, err)
	}
	return ids, st
}

// TestMediaTurnsMatchOracle: a first turn with an image (r1, v2) or a clip
// (r1) gives the oracle's tokens for the published layout with the
// encoder's rows at the span, with speculation off and on alike.
func TestMediaTurnsMatchOracle(t *testing.T) {
	dir := t.TempDir()
	pic, clip := writePNG(t, dir, 1, 40, 30), writeWAV(t, dir, 0.6, 440)
	for _, tt := range mediaCases(pic, clip) {
		t.Run(tt.family+"-"+tt.kind, func(t *testing.T) {
			b := testbundle.Tiny(t, tt.family)
			set := Settings{MaxTokens: 12, Speculation: SpecModeOff}
			s := mediaSession(t, b, set)
			got, _ := sendMedia(t, s, tt.text, MediaFile{Kind: tt.kind, Path: tt.path})
			prompt := s.LastPrompt()

			// The layout: the span right after "user\n" for an image, the
			// transcription instruction before the clip.
			mt, _ := s.tok.MediaTokens(tokenizer.MediaKind(tt.kind))
			open := slices.Index(prompt, mt.Open)
			msgs := s.Messages()
			if tt.kind == MediaAudio {
				if close := slices.Index(prompt, mt.Close); prompt[close+1] != 106 {
					t.Errorf("<audio|> is followed by %d, want <turn|>", prompt[close+1])
				}
			} else if !slices.Equal(prompt[:open], s.tok.Encode("<bos><|turn>user\n")) {
				t.Errorf("the image span does not follow \"user\\n\": %v", prompt[:open+1])
			}
			att := msgs[0].Attachments
			if len(att) != 1 || att[0].SHA256 == "" || att[0].Tokens() != count(prompt, mt.Placeholder) {
				t.Fatalf("attachment %+v, %d placeholders", att, count(prompt, mt.Placeholder))
			}

			enc, err := NewEncoders(b, reference.New(), coreml.CPUAndGPU).Encode(tt.kind, tt.path)
			if err != nil {
				t.Fatal(err)
			}
			want := chaintest.OracleGreedy(t, b, prompt, []chain.SoftSpan{{Start: open + 1, Rows: enc.Rows[0]}}, 12)
			if !slices.Equal(got[:min(len(got), len(want))], want[:min(len(got), len(want))]) || len(got) == 0 {
				t.Fatalf("tokens %v, oracle %v", got, want)
			}
			if b.Family == bundle.R1 {
				on := mediaSession(t, b, specOn(b, set))
				spec, _ := sendMedia(t, on, tt.text, MediaFile{Kind: tt.kind, Path: tt.path})
				if !slices.Equal(spec, got) {
					t.Errorf("speculation on: %v, off: %v", spec, got)
				}
			}
		})
	}
}

func count(ids []int, id int) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// TestMediaFollowUpAndCheckpoint: a follow-up question prefills only its
// own words (the image stays in the cache), and after a checkpoint round
// trip — with the picture file gone — the follow-up is token for token
// what an uninterrupted session gives.
func TestMediaFollowUpAndCheckpoint(t *testing.T) {
	dir := t.TempDir()
	pic := writePNG(t, dir, 2, 24, 24)
	b := testbundle.Tiny(t, "r1")
	set := Settings{MaxTokens: 8, Speculation: SpecModeOff}

	s := mediaSession(t, b, set)
	sendMedia(t, s, "Describe it.", MediaFile{Kind: MediaImage, Path: pic})
	first := len(s.LastPrompt())
	want, st := sendMedia(t, s, "What colour?")
	if fed := st.PromptTokens - st.ReusedTokens; st.ReusedTokens < first || fed > 30 {
		t.Errorf("the follow-up fed %d of %d prompt tokens (reused %d; the first turn was %d)", fed, st.PromptTokens, st.ReusedTokens, first)
	}

	a := mediaSession(t, b, set)
	sendMedia(t, a, "Describe it.", MediaFile{Kind: MediaImage, Path: pic})
	cp, err := a.Checkpoint("pic", coreml.CPUOnly)
	if err != nil {
		t.Fatal(err)
	}
	if n, thumb := cp.Conversation.MediaCount(); n != 1 || len(thumb) == 0 || cp.Conversation.Messages[0].Media[0].SHA256 == "" {
		t.Fatalf("the checkpoint keeps %d attachments (thumbnail %d bytes): %+v", n, len(thumb), cp.Conversation.Messages[0].Media)
	}
	moved := pic + ".gone"
	if err := os.Rename(pic, moved); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(moved, pic)
	r := mediaSession(t, b, set)
	if err := r.Restore(cp); err != nil {
		t.Fatal(err)
	}
	if att := r.Messages()[0].Attachments; len(att) != 1 || att[0].Name != filepath.Base(pic) || len(att[0].Thumbnail) == 0 {
		t.Fatalf("restored attachments %+v", att)
	}
	got, _ := sendMedia(t, r, "What colour?")
	if !slices.Equal(got, want) {
		t.Errorf("after restore %v, uninterrupted %v", got, want)
	}

	// A rebuild of the cache (a new system prompt re-renders everything)
	// needs the file again: without it the message says which file; with
	// it the picture is encoded again and checked against its hash.
	sys := r.Settings()
	sys.System = "Be brief."
	if err := r.SetSettings(sys); err != nil {
		t.Fatal(err)
	}
	err = r.Send("More?", func(Event) {})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(pic)) || !strings.Contains(err.Error(), "gone") {
		t.Errorf("rebuild without the file: %v", err)
	}
	os.Rename(moved, pic)
	if _, st := sendMedia(t, r, "More?"); st.ReusedTokens > 3 {
		t.Errorf("the rebuild reused %d tokens after a new system prompt", st.ReusedTokens)
	}
}

// TestClipWithoutWords: a clip sent without text carries the published
// transcription instruction.
func TestClipWithoutWords(t *testing.T) {
	u := userMessage("", []Attachment{{Kind: MediaAudio, Spans: []int{25}}})
	if u.Content != TranscriptionInstruction {
		t.Errorf("content %q", u.Content)
	}
	if u := userMessage("", []Attachment{{Kind: MediaImage, Spans: []int{16}}}); u.Content != "" {
		t.Errorf("an image without words got %q", u.Content)
	}
	if u := userMessage("Say it in French.", []Attachment{{Kind: MediaAudio, Spans: []int{25}}}); u.Content != "Say it in French." {
		t.Errorf("typed instruction replaced: %q", u.Content)
	}
}

// TestMediaPrefix: two different images at the same place share
// placeholder ids, not rows; the cache is reused only up to the span.
func TestMediaPrefix(t *testing.T) {
	held := []spanRef{{Start: 4, Rows: 16, SHA256: "a"}, {Start: 30, Rows: 16, SHA256: "b"}}
	for _, tt := range []struct {
		now  []spanRef
		lcp  int
		want int
	}{
		{held, 60, 60},
		{[]spanRef{{Start: 4, Rows: 16, SHA256: "a"}, {Start: 30, Rows: 16, SHA256: "c"}}, 60, 30},
		{[]spanRef{{Start: 4, Rows: 16, SHA256: "z"}}, 60, 4},
		{[]spanRef{{Start: 4, Rows: 16, SHA256: "z"}}, 3, 3},
		{nil, 60, 60},
	} {
		if got := mediaPrefix(tt.lcp, held, tt.now); got != tt.want {
			t.Errorf("mediaPrefix(%d, %v) = %d, want %d", tt.lcp, tt.now, got, tt.want)
		}
	}
}

// TestMediaRefusals: a bundle without an encoder refuses the kind naming
// what is missing — the file next to an okayuji bundle's manifest, or,
// for the stateful3 family, which ships no encoders, the bundles that
// take it — and the bundle, whether or not the session has encoders; an
// encoder whose rows are not the model's width is refused before it runs.
func TestMediaRefusals(t *testing.T) {
	s3 := testbundle.Tiny(t, "stateful3")
	for _, tc := range []struct {
		name string
		fam  string
		kind string
		want []string
	}{
		{"stateful3 image", "stateful3", MediaImage, []string{"stateful3 bundles ship none", s3.Dir, "okayuji r1 and v2 bundles", "vision_fp16.mlmodelc"}},
		{"stateful3 audio", "stateful3", MediaAudio, []string{"stateful3 bundles ship none", s3.Dir, "audio_fp16.mlmodelc"}},
		{"v2 audio", "v2", MediaAudio, []string{"audio_fp16.mlmodelc next to the bundle's manifest", testbundle.Tiny(t, "v2").Dir + " has none"}},
	} {
		b := testbundle.Tiny(t, tc.fam)
		s := newSession(t, b, Settings{MaxTokens: 4, Speculation: SpecModeOff})
		if tc.fam != "stateful3" {
			s.Media = NewEncoders(b, reference.New(), coreml.CPUAndGPU)
		}
		for _, err := range []error{
			s.CanAttach(tc.kind),
			s.Send("x", func(Event) {}, MediaFile{Kind: tc.kind, Path: "/nonexistent.file"}),
			NewEncoders(b, reference.New(), coreml.CPUAndGPU).Can(tc.kind),
		} {
			if !errors.Is(err, ErrNoEncoder) {
				t.Fatalf("%s: %v", tc.name, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %q lacks %q", tc.name, err, w)
				}
			}
			if strings.Contains(err.Error(), "  ") {
				t.Errorf("%s: a name left out: %q", tc.name, err)
			}
		}
	}

	src := testbundle.Tiny(t, "r1")
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(src.Dir)); err != nil {
		t.Fatal(err)
	}
	twin := filepath.Join(root, bundle.VisionEncoder+".mlmodelc", reference.TwinFile)
	data, _ := os.ReadFile(twin)
	data = []byte(strings.Replace(string(data), `"hidden": 32`, `"hidden": 7`, 1))
	os.WriteFile(twin, data, 0o600)
	b, err := bundle.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewEncoders(b, reference.New(), coreml.CPUAndGPU).Encode(MediaImage, writePNG(t, root, 3, 8, 8))
	if err == nil || !strings.Contains(err.Error(), "7-wide") || !strings.Contains(err.Error(), "hidden size is 32") {
		t.Errorf("width mismatch: %v", err)
	}
}

// TestMediaLimits: the limits set from the config bound what is read, and
// a refusal names the setting that raises it; a file within them encodes.
func TestMediaLimits(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	dir := t.TempDir()
	pic, clip := writePNG(t, dir, 1, 40, 30), writeWAV(t, dir, 3, 440)
	for _, c := range []struct {
		name   string
		limits MediaLimits
		kind   string
		file   string
		says   string // "" encodes
	}{
		{"file size", MediaLimits{MaxFileBytes: 100}, MediaImage, pic, "; the media.max_file_size setting raises the limit"},
		{"clip length", MediaLimits{MaxSeconds: 2}, MediaAudio, clip, "is 3.0 s long; orchard reads at most 2.0 s of audio (each 30 s takes 750 tokens of context); the media.max_audio_seconds setting raises the limit"},
		{"within them", MediaLimits{MaxFileBytes: 1 << 20, MaxSeconds: 4}, MediaAudio, clip, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc := NewEncoders(b, reference.New(), coreml.CPUAndGPU)
			defer enc.Close()
			enc.SetLimits(c.limits)
			_, err := enc.Encode(c.kind, c.file)
			var fe *FileError
			switch {
			case c.says == "" && err != nil:
				t.Fatal(err)
			case c.says != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), c.says)):
				t.Errorf("error %v lacks %q", err, c.says)
			}
		})
	}
}

// panicAlloc is a runtime whose Alloc panics, standing in for any bug a
// damaged file trips while it is prepared.
type panicAlloc struct{ coreml.Runtime }

func (panicAlloc) Alloc([]int, coreml.DType) *coreml.Tensor { panic("boom") }

// TestEncodePanicIsAFileError: a panic while a file is prepared fails that
// file with a FileError naming it, and the encoders stay usable: one bad
// picture posted to orchard serve does not end the process.
func TestEncodePanicIsAFileError(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	pic := writePNG(t, t.TempDir(), 1, 20, 20)
	enc := NewEncoders(b, panicAlloc{reference.New()}, coreml.CPUAndGPU)
	defer enc.Close()
	_, err := enc.Encode(MediaImage, pic)
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "picture-1.png") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("a panic while encoding: %v", err)
	}
	if _, err := enc.Encode(MediaImage, pic); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a second file: %v (the lock must be free again)", err)
	}
}
