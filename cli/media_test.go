package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/testmedia"
	"github.com/orchard-llm/orchard/tokenizer"
)

func testPNG(t *testing.T, dir string) string {
	t.Helper()
	return writeTestFile(t, dir, "pic.png", testmedia.PNG(1, 30, 20))
}

func testWAV(t *testing.T, dir string, seconds float64) string {
	t.Helper()
	return writeTestFile(t, dir, "clip.wav", testmedia.WAV(seconds, 440))
}

func writeTestFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMediaCommand: `orchard media` runs one encoder alone and writes its
// input as fed and the rows that enter the prompt.
func TestMediaCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "b")
	if code, _, stderr := runCmd(t, "bundle", "synth", "--family", "r1", "--preset", "tiny", "--seed", "2", "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	pic, clip := testPNG(t, dir), testWAV(t, dir, 0.8)
	code, text, stderr := runCmd(t, "media", "image", "--model", out, "--patches-out", filepath.Join(dir, "p.npy"), "--soft-out", filepath.Join(dir, "s.npy"), pic)
	if code != 0 || !strings.Contains(text, "pic.png") || !strings.Contains(text, "patches [1 144 768] fp16") || !strings.Contains(text, "soft rows [16 32]") {
		t.Fatalf("media image: %d %q %s", code, text, stderr)
	}
	for name, size := range map[string]int64{"p.npy": 128 + 144*768*2, "s.npy": 128 + 16*32*2} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() != size || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %d bytes %v, want %d", name, err, st.Size(), st.Mode(), size)
		}
	}
	code, text, stderr = runCmd(t, "media", "audio", "--model", out, "--mel-out", filepath.Join(dir, "m.npy"), "--mask-out", filepath.Join(dir, "k.npy"), "--soft-out", filepath.Join(dir, "a.npy"), clip)
	if code != 0 || !strings.Contains(text, "mel [1 3000 128] fp16, mask [1 3000] fp16") || !strings.Contains(text, "20 tokens") {
		t.Fatalf("media audio: %d %q %s", code, text, stderr)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"media", "video", "--model", out, pic}, 2, "unknown kind"},
		{[]string{"media", "image", "--model", out, clip}, 2, "clip.wav"},
		{[]string{"media", "image", "--model", out}, 2, "one image file"},
		// The config's limits, here from flags, bound what is read.
		{[]string{"media", "image", "--model", out, "--media-max-size", "10B", pic}, 2, "the media.max_file_size setting raises the limit"},
		{[]string{"media", "audio", "--model", out, "--media-max-seconds", "0", clip}, 2, "media.max_audio_seconds: invalid value"},
		// A picture whose decoder would take more than the limit: 4 MB of RGBA.
		{[]string{"media", "image", "--model", out, "--media-max-decode-size", "2MiB", writeTestFile(t, dir, "big.png", testmedia.PNG(1, 1000, 1000))}, 2,
			"big.png is a 1000×1000 RGB PNG, which takes 4.8 MiB to decode, more than the 2 MiB orchard decodes a picture in: scale it down, or save it as a baseline JPEG, first; the media.max_decode_size setting raises the limit"},
	} {
		code, _, stderr := runCmd(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
	// A v2 bundle ships no audio encoder: refused naming the file.
	v2 := filepath.Join(dir, "v2")
	runCmd(t, "bundle", "synth", "--family", "v2", "--preset", "tiny", "--out", v2)
	if code, _, stderr := runCmd(t, "media", "audio", "--model", v2, clip); code != 2 || !strings.Contains(stderr, "audio_fp16.mlmodelc") {
		t.Errorf("v2 audio: %d %s", code, stderr)
	}
}

// TestRunWithMedia: `orchard run --image` puts the image placeholder at
// every soft position of the prompt ids.
func TestRunWithMedia(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "b")
	runCmd(t, "bundle", "synth", "--family", "r1", "--preset", "tiny", "--seed", "2", "--out", out)
	pic := testPNG(t, dir)
	code, js, stderr := runCmd(t, "run", "--model", out, "--image", pic, "--prompt", "What is it?", "--max-tokens", "3", "--json", "--no-spec")
	var res struct {
		PromptIDs   []int `json:"promptIds"`
		Attachments []struct {
			Name  string
			Spans []int
		}
	}
	if code != 0 || json.Unmarshal([]byte(js), &res) != nil {
		t.Fatalf("run --image: %d %s\n%s", code, stderr, js)
	}
	tok, err := tokenizer.Load(filepath.Join(out, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	mt, _ := tok.MediaTokens(tokenizer.MediaImage)
	i := slices.Index(res.PromptIDs, mt.Open)
	if i < 0 || len(res.Attachments) != 1 || res.Attachments[0].Spans[0] != 16 {
		t.Fatalf("prompt %v, attachments %+v", res.PromptIDs, res.Attachments)
	}
	span := res.PromptIDs[i+1 : i+17]
	if !slices.Equal(span, slices.Repeat([]int{mt.Placeholder}, 16)) || res.PromptIDs[i+17] != mt.Close {
		t.Errorf("span %v", res.PromptIDs[i:i+18])
	}
	if !strings.Contains(stderr, "attached: pic.png") {
		t.Errorf("stderr lacks the attachment line:\n%s", stderr)
	}
	if code, _, stderr := runCmd(t, "run", "--model", out, "--image", filepath.Join(dir, "nope.png"), "--prompt", "x"); code != 2 {
		t.Errorf("missing file: exit %d %s", code, stderr)
	}
	// The media limits of the config bound what run reads.
	code, _, stderr = runCmd(t, "run", "--model", out, "--image", pic, "--prompt", "x", "--media-max-size", "10B")
	if code != 2 || !strings.Contains(stderr, "pic.png") || !strings.Contains(stderr, "media.max_file_size") {
		t.Errorf("over the file size limit: exit %d %s", code, stderr)
	}
}
