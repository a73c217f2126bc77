package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestCheckSettings: the one rule every front end gets: values out of
// range are invalid; what the bundle cannot do is refused naming the
// capability; the rest is accepted with its defaults filled in.
func TestCheckSettings(t *testing.T) {
	r1 := ModelInfo{Family: "r1", VerifyWidths: []int{4}}
	v2 := ModelInfo{Family: "v2", VerifyWidths: []int{2, 4, 8, 16}}
	s3 := ModelInfo{Family: "stateful3"}
	logits := ModelInfo{Family: "stateful3-logits", Logits: true}
	def := DefaultSettings()
	with := func(edit func(*Settings)) Settings { s := def; edit(&s); return s }
	for _, tc := range []struct {
		name string
		info ModelInfo
		next Settings
		err  error  // nil: accepted
		want string // in the message
	}{
		{"defaults on r1", r1, def, nil, ""},
		{"defaults on stateful3", s3, def, nil, ""},
		{"temperature on r1", r1, with(func(s *Settings) { s.Sampling.Temperature = 0.7 }), ErrSettingUnsupported, "temperature 0.7: this r1 bundle emits argmax token ids only (no logits)"},
		{"top-k on r1", r1, with(func(s *Settings) { s.Sampling.TopK = 40 }), ErrSettingUnsupported, "top-k 40"},
		{"top-p on stateful3", s3, with(func(s *Settings) { s.Sampling.TopP = 0.9 }), ErrSettingUnsupported, "top-p 0.9"},
		{"min-p on r1", r1, with(func(s *Settings) { s.Sampling.MinP = 0.1 }), ErrSettingUnsupported, "min-p"},
		{"seed on r1", r1, with(func(s *Settings) { s.Sampling.Seed = 42 }), ErrSettingUnsupported, "seed 42"},
		{"repetition penalty on r1", r1, with(func(s *Settings) { s.Sampling.RepetitionPenalty = 1.2 }), ErrSettingUnsupported, "repetition penalty 1.2"},
		{"sampling on logits", logits, with(func(s *Settings) { s.Sampling = Sampling{Temperature: 0.8, TopK: 40, TopP: 0.9, Seed: 3} }), nil, ""},
		{"draft 16 on width 4", r1, with(func(s *Settings) { s.DraftLen = 16 }), ErrSettingUnsupported, "verifies at most 4 tokens per call (verify width 4); use 4 or less"},
		{"draft 16 on width 16", v2, with(func(s *Settings) { s.DraftLen = 16 }), nil, ""},
		{"spec on without verify", s3, with(func(s *Settings) { s.Speculation = SpecModeOn }), ErrSettingUnsupported, "no verify function"},
		{"draft change without verify", logits, with(func(s *Settings) { s.DraftLen = 8 }), ErrSettingUnsupported, "draft length 8"},
		{"spec off without verify", s3, with(func(s *Settings) { s.Speculation = SpecModeOff }), nil, ""},
		{"draft 40", v2, with(func(s *Settings) { s.DraftLen = 40 }), ErrSettingInvalid, "draft length 40: want 1…16"},
		{"speculation maybe", r1, with(func(s *Settings) { s.Speculation = "maybe" }), ErrSettingInvalid, `speculation "maybe"`},
		{"negative temperature", logits, with(func(s *Settings) { s.Sampling.Temperature = -1 }), ErrSettingInvalid, "temperature -1"},
		{"top-p above 1", logits, with(func(s *Settings) { s.Sampling.TopP = 2 }), ErrSettingInvalid, "top-p 2"},
		{"negative max tokens", r1, with(func(s *Settings) { s.MaxTokens = -1 }), ErrSettingInvalid, "max tokens -1"},
		{"ngram max 100", r1, with(func(s *Settings) { s.NGramMax = 100 }), ErrSettingInvalid, "ngram max 100: want ngram min…8"},
		{"ngram max 8", r1, with(func(s *Settings) { s.NGramMax = 8 }), nil, ""},
		{"ngram min 9", r1, with(func(s *Settings) { s.NGramMin = 9 }), ErrSettingInvalid, "ngram min 9: want 1…8"},
		{"negative ngram min", r1, with(func(s *Settings) { s.NGramMin = -1 }), ErrSettingInvalid, "ngram min -1"},
		{"ngram min 8 alone", r1, with(func(s *Settings) { s.NGramMin, s.NGramMax = 8, 0 }), nil, ""},
		{"20 MB system prompt", r1, with(func(s *Settings) { s.System = strings.Repeat("x", 20<<20) }), ErrSettingInvalid, "system prompt of 20,971,520 bytes: orchard takes at most 1 MiB"},
		{"1 MiB system prompt", r1, with(func(s *Settings) { s.System = strings.Repeat("x", MaxSystemBytes) }), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckSettings(tc.info, def, tc.next)
			if tc.err == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got.DraftLen == 0 || got.NGramMin == 0 || got.Speculation == "" {
					t.Fatalf("defaults not filled in: %+v", got)
				}
				return
			}
			var se *SettingError
			if !errors.Is(err, tc.err) || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.err, tc.want)
			}
			if tc.err == ErrSettingUnsupported && se.Capability == "" {
				t.Fatalf("the missing capability is not named: %+v", se)
			}
			if got != def {
				t.Fatalf("a refusal returned other settings: %+v", got)
			}
		})
	}
	// A session applies the same rule and keeps its settings on a refusal.
	s := newSession(t, testbundle.Tiny(t, "r1"), Settings{})
	before := s.Settings()
	if err := s.SetSettings(with(func(s *Settings) { s.Sampling.TopK = 40 })); !errors.Is(err, ErrSettingUnsupported) || s.Settings() != before {
		t.Fatalf("session: %v, settings %+v", err, s.Settings())
	}
}

// TestSystemPromptMustFit: a session refuses a system prompt that fills
// its context on its own (every turn would fail), in a sentence, and
// keeps the settings it had; one that leaves room is taken.
func TestSystemPromptMustFit(t *testing.T) {
	s := newSession(t, testbundle.Tiny(t, "r1"), Settings{}) // a 128-token context
	before := s.Settings()
	for _, tc := range []struct {
		system string
		want   string // "" accepted
	}{
		{"Be brief.", ""},
		{strings.Repeat("word ", 20), ""},
		{strings.Repeat("word ", 400), "the context holds 128, so no message would fit after it; shorten it"},
	} {
		next := before
		next.System = tc.system
		err := s.SetSettings(next)
		if tc.want == "" {
			if err != nil || s.Settings().System != tc.system {
				t.Fatalf("%d bytes: %v", len(tc.system), err)
			}
			if _, err := s.PromptIDs("hi"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var se *SettingError
		if !errors.As(err, &se) || !errors.Is(err, ErrSettingInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "system prompt of ") {
			t.Fatalf("%d bytes: err = %v, want %q", len(tc.system), err, tc.want)
		}
		if s.Settings().System == tc.system {
			t.Fatal("the refused system prompt is in force")
		}
	}
}
