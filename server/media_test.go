package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/internal/testmedia"
)

// mediaFiles writes the test's pictures and clip into dir.
type mediaFiles struct {
	pics [3]string
	clip string
}

func writeMedia(t testing.TB) mediaFiles {
	t.Helper()
	dir := t.TempDir()
	var m mediaFiles
	for i := range m.pics {
		m.pics[i] = filepath.Join(dir, fmt.Sprintf("picture-%d.png", i))
		if err := os.WriteFile(m.pics[i], testmedia.PNG(i+1, 24+4*i, 18), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m.clip = filepath.Join(dir, "tone.wav")
	if err := os.WriteFile(m.clip, testmedia.WAV(0.5, 440), 0o600); err != nil {
		t.Fatal(err)
	}
	return m
}

func fileBytes(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// mediaTurn is one chat turn: words and files by path.
type mediaTurn struct {
	text  string
	files []engine.MediaFile
}

// engineTurns is the engine alone: a fresh session on b with its
// encoders, one turn per step, the files given by path; the replies.
func engineTurns(t testing.TB, b *bundle.Bundle, set engine.Settings, turns ...mediaTurn) []string {
	t.Helper()
	s := newSession(t, b, set, 0)
	defer s.Close()
	var out []string
	for _, tu := range turns {
		var reply string
		if err := s.Send(tu.text, func(ev engine.Event) {
			if f, ok := ev.(engine.Finished); ok {
				reply = f.Reply
			}
		}, tu.files...); err != nil {
			t.Fatal(err)
		}
		out = append(out, reply)
	}
	return out
}

// openAIParts is a user message's content: the files as image_url (data
// URL) or input_audio parts, then the words.
func openAIParts(t testing.TB, tu mediaTurn) openai.ChatCompletionMessageParamUnion {
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, f := range tu.files {
		b64 := base64.StdEncoding.EncodeToString(fileBytes(t, f.Path))
		if f.Kind == engine.MediaImage {
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64," + b64}))
		} else {
			parts = append(parts, openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: b64, Format: "wav"}))
		}
	}
	parts = append(parts, openai.TextContentPart(tu.text))
	return openai.UserMessage(parts)
}

type health struct {
	Media struct {
		Kinds   []string `json:"kinds"`
		Encoded int      `json:"encoded"`
		Reused  int      `json:"reused"`
	} `json:"media"`
}

func getHealth(t testing.TB, ts *testServer) health {
	t.Helper()
	resp, err := httpClient.Get(ts.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestOpenAIMedia: image_url (data URL) and input_audio parts through the
// official client give the engine's own greedy reply for the same files,
// byte for byte, in any user message and several to a message; the
// follow-up, which resends the conversation with its files, is served
// from the cache — cached_tokens cover the whole first prompt, the files'
// spans with it — and no file is encoded twice.
func TestOpenAIMedia(t *testing.T) {
	m := writeMedia(t)
	img := func(i int) engine.MediaFile { return engine.MediaFile{Kind: engine.MediaImage, Path: m.pics[i]} }
	clip := engine.MediaFile{Kind: engine.MediaAudio, Path: m.clip}
	for _, tc := range []struct {
		name, family string
		turns        [2]mediaTurn
		files        int // distinct files
	}{
		{"r1 image", "r1", [2]mediaTurn{{"What is this?", []engine.MediaFile{img(0)}}, {"And its colour?", nil}}, 1},
		{"v2 image", "v2", [2]mediaTurn{{"What is this?", []engine.MediaFile{img(0)}}, {"And its colour?", nil}}, 1},
		{"r1 audio", "r1", [2]mediaTurn{{"Transcribe.", []engine.MediaFile{clip}}, {"Again?", nil}}, 1},
		{"r1 several", "r1", [2]mediaTurn{{"Compare.", []engine.MediaFile{img(0)}}, {"And these?", []engine.MediaFile{img(1), img(2), clip}}}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, serverOpts{family: tc.family})
			set := engine.DefaultSettings()
			set.MaxTokens = 10
			want := engineTurns(t, testbundle.Tiny(t, tc.family), set, tc.turns[0], tc.turns[1])
			c := openAIClient(ts, "")
			first := openAIParts(t, tc.turns[0])

			r1, err := c.Chat.Completions.New(context.Background(), params(ts.info.Name, 10, first))
			if err != nil {
				t.Fatal(err)
			}
			if got := r1.Choices[0].Message.Content; got != want[0] {
				t.Fatalf("reply %q, engine alone %q", got, want[0])
			}
			text, usage, _ := stream(t, c, params(ts.info.Name, 10, first, openai.AssistantMessage(r1.Choices[0].Message.Content), openAIParts(t, tc.turns[1])))
			if text != want[1] {
				t.Fatalf("follow-up %q, engine alone %q", text, want[1])
			}
			if cached := usage.PromptTokensDetails.CachedTokens; cached < r1.Usage.PromptTokens || cached >= usage.PromptTokens {
				t.Fatalf("follow-up: %d of %d prompt tokens cached; the first prompt, image span included, was %d", cached, usage.PromptTokens, r1.Usage.PromptTokens)
			}
			if h := getHealth(t, ts); h.Media.Encoded != tc.files || h.Media.Reused < 1 {
				t.Fatalf("health media %+v: want %d files encoded once each", h.Media, tc.files)
			}
		})
	}
}

// TestOpenAIMediaRefusals: what is wrong with a file is a 400 naming its
// part (413 when it is too large, naming the limit); a URL to fetch, a kind
// the bundle has no encoder for, a file on a reply are refused clearly.
func TestOpenAIMediaRefusals(t *testing.T) {
	ts := startServer(t, serverOpts{family: "v2", maxMedia: 4 << 10})
	c := openAIClient(ts, "")
	pic := base64.StdEncoding.EncodeToString(testmedia.PNG(1, 8, 8))
	big := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 5<<10))
	image := func(url string) openai.ChatCompletionNewParams {
		return params(ts.info.Name, 4, openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("what is this?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}),
		}))
	}
	audio := params(ts.info.Name, 4, openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: base64.StdEncoding.EncodeToString(testmedia.WAV(0.2, 300)), Format: "wav"}),
	}))
	later := params(ts.info.Name, 4, openai.UserMessage("hi"), openai.ChatCompletionMessageParamUnion{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
		Content: openai.ChatCompletionAssistantMessageParamContentUnion{OfString: openai.String("x")}}}, openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64," + pic})}))
	for _, tc := range []struct {
		name   string
		p      openai.ChatCompletionNewParams
		status int
		code   string
		param  string
		says   []string
	}{
		{"http URL", image("https://example.com/cat.png"), 400, "unsupported_value", "messages[0].content[1].image_url.url", []string{"does not fetch", "data:image/png;base64"}},
		{"file URL", image("file:///etc/passwd"), 400, "invalid_image_url", "messages[0].content[1].image_url.url", []string{"must be a data URL"}},
		{"not base64", image("data:image/png,abc"), 400, "invalid_image_url", "messages[0].content[1].image_url.url", []string{"not base64"}},
		{"not an image type", image("data:text/plain;base64,aGVsbG8="), 400, "invalid_image_url", "messages[0].content[1].image_url.url", []string{"text/plain"}},
		{"bad base64", image("data:image/png;base64,%%%%"), 400, "invalid_value", "messages[0].content[1]", []string{"base64 is malformed"}},
		{"empty", image("data:image/png;base64,"), 400, "invalid_value", "messages[0].content[1]", []string{"empty"}},
		{"not a picture", image("data:image/png;base64,aGVsbG8gdGhlcmU="), 400, "invalid_file", "messages[0].content[1]", []string{"messages[0].content[1]", "PNG, JPEG"}},
		{"broken PNG", image("data:image/png;base64," + pic[:40]), 400, "invalid_file", "messages[0].content[1]", []string{"messages[0].content[1]", "png"}},
		{"too large", image("data:image/png;base64," + big), 413, "file_too_large", "messages[0].content[1]", []string{"over the 4 KiB"}},
		{"no audio encoder", audio, 400, "unsupported_content", "messages[0].content[0]", []string{"audio_fp16.mlmodelc"}},
		{"in a later message", later, 200, "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Chat.Completions.New(context.Background(), tc.p)
			if tc.status == 200 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ae *openai.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %v, want an API error", err)
			}
			if ae.StatusCode != tc.status || ae.Code != tc.code || ae.Param != tc.param {
				t.Fatalf("HTTP %d code %q param %q: %s", ae.StatusCode, ae.Code, ae.Param, ae.Message)
			}
			for _, s := range tc.says {
				if !strings.Contains(ae.Message, s) {
					t.Errorf("%q does not say %q", ae.Message, s)
				}
			}
		})
	}
	// Plain HTTP: what the client would not send.
	for _, tc := range []struct {
		name, body string
		status     int
		says       string
		// expect sends the body only after the server asks for it, as
		// curl does for a large one: a body refused by its length is then
		// never sent, where one sent whole can meet a reset before the
		// answer on a loaded machine.
		expect bool
	}{
		{"image on an assistant message", `{"model": "orchard", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,` + pic + `"}}]}, {"role": "user", "content": "and?"}]}`, 400, "user messages only", false},
		{"image_url as a string", `{"model": "orchard", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "https://example.com/x.png"}]}]}`, 400, "does not fetch", false},
		{"part without its object", `{"model": "orchard", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}`, 400, "image_url.url", false},
		{"unknown part", `{"model": "orchard", "messages": [{"role": "user", "content": [{"type": "file", "file": {}}]}]}`, 400, `"file"`, false},
		{"body too large", `{"model": "orchard", "messages": [{"role": "user", "content": "` + strings.Repeat("a", 33<<20) + `"}]}`, 413, "request body", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var header http.Header
			if tc.expect {
				header = http.Header{"Expect": {"100-continue"}}
			}
			resp, e := postChatWith(t, ts, tc.body, header)
			if resp.StatusCode != tc.status || !strings.Contains(e.Message, tc.says) {
				t.Fatalf("HTTP %d: %s", resp.StatusCode, e.Message)
			}
		})
	}
}

// TestOllamaImages: /api/chat's images (base64) give the engine's reply;
// the follow-up prefills only its words; a bad image names itself.
func TestOllamaImages(t *testing.T) {
	m := writeMedia(t)
	ts := startServer(t, serverOpts{})
	set := engine.DefaultSettings()
	set.MaxTokens = 10
	turns := []mediaTurn{{"What is this?", []engine.MediaFile{{Kind: engine.MediaImage, Path: m.pics[2]}}}, {"Is it ripe?", nil}}
	b64 := base64.StdEncoding.EncodeToString(fileBytes(t, m.pics[2]))
	chat := func(body string) (int, ollamaChunk, string) {
		resp, err := httpClient.Post(ts.url+"/api/chat", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var c ollamaChunk
		json.Unmarshal(raw, &c)
		return resp.StatusCode, c, string(raw)
	}
	first := `{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is this?", "images": ["` + b64 + `"]}`
	status, c1, raw := chat(`{"model": "orchard", "stream": false, "options": {"num_predict": 10}, "messages": [` + first + `]}`)
	if status != 200 {
		t.Fatalf("HTTP %d: %s", status, raw)
	}
	sys := set
	sys.System = "Be brief."
	want := engineTurns(t, testbundle.Tiny(t, "r1"), sys, turns...)
	if c1.Message.Content != want[0] {
		t.Fatalf("reply %q, engine alone %q", c1.Message.Content, want[0])
	}
	reply, _ := json.Marshal(c1.Message.Content)
	status, c2, raw := chat(`{"model": "orchard", "stream": false, "options": {"num_predict": 10}, "messages": [` + first +
		`, {"role": "assistant", "content": ` + string(reply) + `}, {"role": "user", "content": "Is it ripe?"}]}`)
	if status != 200 || c2.Message.Content != want[1] {
		t.Fatalf("HTTP %d follow-up %q, engine alone %q: %s", status, c2.Message.Content, want[1], raw)
	}
	if c1.PrefilledCount == nil || c2.PrefilledCount == nil || *c2.PrefilledCount > 30 || *c2.PrefilledCount >= *c1.PrefilledCount ||
		c2.PromptEvalCount <= c1.PromptEvalCount {
		t.Fatalf("the follow-up prefilled %s tokens of %d (the first %s of %d)", jsonOf(c2.PrefilledCount), c2.PromptEvalCount, jsonOf(c1.PrefilledCount), c1.PromptEvalCount)
	}
	status, _, raw = chat(`{"model": "orchard", "stream": false, "messages": [{"role": "user", "content": "x", "images": ["aGVsbG8="]}]}`)
	if status != 400 || !strings.Contains(raw, "messages[0].images[0]") {
		t.Fatalf("bad image: HTTP %d %s", status, raw)
	}
	if h := getHealth(t, ts); h.Media.Encoded != 1 {
		t.Fatalf("health %+v: the picture should be encoded once", h.Media)
	}
}

// TestAttachMedia: an attached screen sends a picture with a message (its
// bytes: the screen may be on another machine); the reply is the engine's
// for the same file, the chip and thumbnail come back with the turn's
// events to this screen and to another one, the follow-up reuses the
// cache, and a file the server cannot take is refused clearly.
func TestAttachMedia(t *testing.T) {
	m := writeMedia(t)
	ts := startServer(t, serverOpts{})
	set := engine.DefaultSettings()
	set.MaxTokens = 10
	pic := engine.MediaFile{Kind: engine.MediaImage, Path: m.pics[1]}
	want := engineTurns(t, testbundle.Tiny(t, "r1"), set, mediaTurn{"What is this?", []engine.MediaFile{pic}}, mediaTurn{"Sure?", nil})
	ctx := context.Background()

	a, err := Connect(ctx, strings.TrimPrefix(ts.url, "http://"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := a.Info().Media; len(got) != 2 {
		t.Fatalf("the attached screen sees media %v, want image and audio", got)
	}
	b, err := Connect(ctx, "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a.SetSettings(set)
	until(t, a, func(ev engine.Event) bool { _, ok := ev.(engine.SettingsChanged); return ok })

	a.Send("What is this?", pic)
	evs := until(t, a, turnEnd)
	var st engine.Started
	for _, ev := range evs {
		if s, ok := ev.(engine.Started); ok {
			st = s
		}
	}
	f, ok := evs[len(evs)-1].(engine.Finished)
	firstPrompt := f.Metrics.PromptTokens
	if !ok || f.Reply != want[0] {
		t.Fatalf("reply %#v, engine alone %q", evs[len(evs)-1], want[0])
	}
	if len(st.Attachments) != 1 {
		t.Fatalf("started with %+v", st.Attachments)
	}
	att := st.Attachments[0]
	if att.Name != filepath.Base(m.pics[1]) || att.SHA256 == "" || att.Bytes != int64(len(fileBytes(t, m.pics[1]))) || att.Tokens() == 0 || len(att.Thumbnail) == 0 || att.Width != 28 {
		t.Fatalf("chip %+v", att)
	}
	if msgs := a.Messages(); len(msgs) != 2 || len(msgs[0].Attachments) != 1 || msgs[0].Attachments[0].SHA256 != att.SHA256 {
		t.Fatalf("messages %+v", msgs)
	}
	// The other screen saw the message with its chip.
	evsB := until(t, b, turnEnd)
	var shown bool
	for _, ev := range evsB {
		if c, ok := ev.(engine.Cleared); ok && len(c.Messages) > 0 && len(c.Messages[len(c.Messages)-1].Attachments) == 1 {
			shown = true
		}
	}
	if !shown {
		t.Fatalf("the other screen did not see the chip: %#v", evsB)
	}

	a.Send("Sure?")
	evs = until(t, a, turnEnd)
	f, ok = evs[len(evs)-1].(engine.Finished)
	if !ok || f.Reply != want[1] || f.Metrics.ReusedTokens < firstPrompt {
		t.Fatalf("follow-up %#v (%v), engine alone %q", evs[len(evs)-1], evs[len(evs)-1], want[1])
	}

	// A screen attached later gets the conversation with its chips.
	c, err := Connect(ctx, "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if msgs := c.Messages(); len(msgs) != 4 || len(msgs[0].Attachments) != 1 || len(msgs[0].Attachments[0].Thumbnail) == 0 {
		t.Fatalf("a late screen sees %+v", msgs)
	}

	// A checkpoint of it lists its picture, for the screen's panel, and
	// loading it brings the chips back.
	a.SaveCheckpoint("with a picture")
	evs = until(t, a, func(ev engine.Event) bool { c, ok := ev.(engine.Checkpoints); return ok && c.Op == "save" })
	saved := false
	for _, cp := range evs[len(evs)-1].(engine.Checkpoints).List {
		saved = saved || cp.Name == "with a picture" && cp.Media == 1 && len(cp.Thumbnail) > 0
	}
	if !saved {
		t.Fatalf("checkpoints %+v", evs[len(evs)-1])
	}
	a.Clear()
	until(t, a, func(ev engine.Event) bool { _, ok := ev.(engine.Cleared); return ok })
	a.LoadCheckpoint("with a picture")
	evs = until(t, a, func(ev engine.Event) bool { _, ok := ev.(engine.Cleared); return ok })
	if cl := evs[len(evs)-1].(engine.Cleared); len(cl.Messages) != 4 || len(cl.Messages[0].Attachments) != 1 || cl.Messages[0].Attachments[0].SHA256 != att.SHA256 {
		t.Fatalf("loaded %+v", cl.Messages)
	}

	// Refusals: a missing file, a file that is no picture.
	if err := sendRefused(t, a, "And this?", engine.MediaFile{Kind: engine.MediaImage, Path: filepath.Join(t.TempDir(), "gone.png")}); !strings.Contains(err.Error(), "gone.png") || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing file: %v", err)
	}
	if err := sendRefused(t, a, "And this?", engine.MediaFile{Kind: engine.MediaImage, Path: m.clip}); !strings.Contains(err.Error(), "tone.wav") {
		t.Fatalf("a clip sent as a picture: %v", err)
	}
}

// TestAttachMediaRefused: a server whose bundle has no audio encoder
// refuses a clip from an attached screen, naming the file it lacks; one
// that takes smaller files refuses a larger one before sending it.
func TestAttachMediaRefused(t *testing.T) {
	m := writeMedia(t)
	ts := startServer(t, serverOpts{family: "v2", maxMedia: 1 << 10})
	a, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := a.Info().Media; len(got) != 1 || got[0] != engine.MediaImage {
		t.Fatalf("media %v", got)
	}
	for _, tc := range []struct {
		f    engine.MediaFile
		says string
	}{
		{engine.MediaFile{Kind: engine.MediaAudio, Path: m.clip}, "more than the 1 KiB allowed by the server"},
		{engine.MediaFile{Kind: engine.MediaAudio, Data: testmedia.WAV(0.01, 300), Name: "tiny.wav"}, "audio_fp16.mlmodelc"},
		{engine.MediaFile{Kind: engine.MediaImage, Data: bytes.Repeat([]byte{1}, 2<<10), Name: "big.png"}, "media[0] is 2 KiB, over the 1 KiB"},
	} {
		if err := sendRefused(t, a, "hear this", tc.f); !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: %v", tc.f, err)
		}
	}
}
