package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestTranscriptionInstruction: the language goes where the published
// instruction names English; none is the instruction itself; an unknown
// code is refused naming it.
func TestTranscriptionInstruction(t *testing.T) {
	if !strings.Contains(engine.TranscriptionInstruction, transcriptionLanguage) {
		t.Fatalf("the instruction no longer says %q: %q", transcriptionLanguage, engine.TranscriptionInstruction)
	}
	for _, tc := range []struct{ code, says string }{
		{"", transcriptionLanguage}, {"en", transcriptionLanguage}, {"fr", "in French into French text"}, {"de", "in German into German text"},
	} {
		got, err := transcriptionFor(tc.code)
		if err != nil || !strings.Contains(got, tc.says) || strings.Count(got, "\n") != strings.Count(engine.TranscriptionInstruction, "\n") {
			t.Fatalf("%q: %q, %v", tc.code, got, err)
		}
	}
	if _, err := transcriptionFor("klingon"); err == nil || !strings.Contains(err.Error(), "klingon") {
		t.Fatalf("unknown language: %v", err)
	}
}

// TestTranscriptions: /v1/audio/transcriptions through the official
// client gives the engine's own reply to the clip sent with the
// instruction for the language asked (English when none); response_format
// text answers the text alone; a bundle without an audio encoder is
// refused naming it; formats with timestamps are refused. The published
// instruction is longer than the tiny bundle's context, so the server
// here asks a shorter one (the client tests in server/clienttest run the
// real one on the demo bundle).
func TestTranscriptions(t *testing.T) {
	m := writeMedia(t)
	capped := engine.DefaultSettings()
	capped.MaxTokens = 8
	ts := startServer(t, serverOpts{defaults: &capped})
	short := func(lang string) (string, error) {
		if lang == "" {
			lang = "en"
		}
		if lang == "xx-nope" {
			return transcriptionFor(lang)
		}
		return "Transcribe (" + lang + ")", nil
	}
	ts.instruction = short
	c := openAIClient(ts, "")
	ctx := context.Background()
	set := engine.DefaultSettings()
	set.MaxTokens = 8
	clip := engine.MediaFile{Kind: engine.MediaAudio, Path: m.clip}
	want := engineTurns(t, testbundle.Tiny(t, "r1"), set, mediaTurn{"Transcribe (en)", []engine.MediaFile{clip}})[0]
	wantFr := engineTurns(t, testbundle.Tiny(t, "r1"), set, mediaTurn{"Transcribe (fr)", []engine.MediaFile{clip}})[0]

	open := func() *os.File {
		f, err := os.Open(m.clip)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	got, err := c.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{File: open(), Model: "orchard"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != strings.TrimSpace(want) || got.Text == "" {
		t.Fatalf("transcript %q, engine alone %q", got.Text, want)
	}
	got, err = c.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{File: open(), Model: "orchard", Language: openai.String("fr")})
	if err != nil || got.Text != strings.TrimSpace(wantFr) {
		t.Fatalf("French: %v %q, engine alone %q", err, got.Text, wantFr)
	}

	post := func(ts *testServer, fields map[string]string) (int, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("file", "tone.wav")
		fw.Write(fileBytes(t, m.clip))
		for k, v := range fields {
			mw.WriteField(k, v)
		}
		mw.Close()
		resp, err := httpClient.Post(ts.url+"/v1/audio/transcriptions", mw.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if status, raw := post(ts, map[string]string{"model": "orchard", "response_format": "text"}); status != 200 || raw != strings.TrimSpace(want)+"\n" {
		t.Fatalf("text: HTTP %d %q", status, raw)
	}
	for _, tc := range []struct {
		fields map[string]string
		says   string
	}{
		{map[string]string{"model": "orchard", "response_format": "srt"}, "srt"},
		{map[string]string{"model": "orchard", "response_format": "verbose_json"}, "timestamps"},
		{map[string]string{"model": "whisper-1"}, "whisper-1"},
		{map[string]string{"model": "orchard", "language": "xx-nope"}, "xx-nope"},
		{map[string]string{"model": "orchard", "prompt": "earlier words"}, "prompt"},
	} {
		if status, raw := post(ts, tc.fields); status/100 != 4 || !strings.Contains(raw, tc.says) {
			t.Fatalf("%v: HTTP %d %s", tc.fields, status, raw)
		}
	}
	resp, err := httpClient.Post(ts.url+"/v1/audio/transcriptions", "application/json", strings.NewReader(`{"model": "orchard"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("a JSON body: HTTP %d", resp.StatusCode)
	}

	v2 := startServer(t, serverOpts{family: "v2", defaults: &capped})
	v2.instruction = short
	c2 := openAIClient(v2, "")
	_, err = c2.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{File: open(), Model: "orchard"})
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || !strings.Contains(ae.Message, "audio") || ae.Param != "file" {
		t.Fatalf("a bundle without an audio encoder: %v", err)
	}
}
