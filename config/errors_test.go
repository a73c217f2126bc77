package config

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// TestErrors checks that every kind of bad value is reported with its key
// and its source: the file and line, the variable or the flag.
func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		file  string
		env   map[string]string
		flags []string
		is    error    // nil: no sentinel (a TOML syntax error)
		want  []string // substrings of the message
	}{
		{name: "unknown key", file: "[sampling]\n\ntopp = 0.9\n", is: ErrUnknownKey,
			want: []string{"config.toml:3: sampling.topp: unknown key (did you mean sampling.top_p?)"}},
		{name: "unknown table", file: "# x\n[colors]\nfg = 1\n", is: ErrUnknownKey,
			want: []string{"config.toml:2: colors: unknown key"}},
		{name: "key outside its table", file: "top_p = 0.9\n", is: ErrUnknownKey,
			want: []string{"config.toml:1: top_p: unknown key (did you mean sampling.top_p?)"}},
		{name: "dotted unknown key", file: "sampling.topk = 3\n", is: ErrUnknownKey,
			want: []string{"config.toml:1: sampling.topk: unknown key (did you mean sampling.top_k?)"}},
		{name: "inline table unknown key", file: "[model]\npath = \"/m\"\n\n[chat]\nx = { y = 1 }\n", is: ErrUnknownKey,
			want: []string{"config.toml:5: chat.x: unknown key"}},
		{name: "string for integer", file: "[sampling]\ntop_k = \"40\"\n", is: ErrWrongType,
			want: []string{`config.toml:2: sampling.top_k: wrong type: want an integer, got the string "40"`}},
		{name: "float for integer", file: "[speculation]\ndraft_length = 4.5\n", is: ErrWrongType,
			want: []string{"config.toml:2: speculation.draft_length: wrong type: want an integer, got the float 4.5"}},
		{name: "size below its least", file: "[media]\nmax_file_size = 0\n", is: ErrInvalid,
			want: []string{"config.toml:2: media.max_file_size: invalid value: 0B is below 1B"}},
		{name: "size with a bad unit", env: map[string]string{"ORCHARD_MEDIA_KEEP_ENCODED": "2 parsecs"}, is: ErrInvalid,
			want: []string{"env ORCHARD_MEDIA_KEEP_ENCODED: media.keep_encoded: invalid value"}},
		{name: "string for bool", file: "[chat]\nthinking = \"yes\"\n", is: ErrWrongType,
			want: []string{"config.toml:2: chat.thinking"}},
		{name: "table is a value", file: "model = \"/m\"\n", is: ErrWrongType,
			want: []string{"config.toml:1: model: wrong type: want a table [model]"}},
		{name: "array of mixed", file: "[model]\nsearch_dirs = [\"/a\", 1]\n", is: ErrWrongType,
			want: []string{"config.toml:2: model.search_dirs: wrong type: want an array of strings, got the integer 1"}},
		{name: "date", file: "[chat]\nsystem_prompt = 2024-01-01\n", is: ErrWrongType,
			want: []string{"config.toml:2: chat.system_prompt: wrong type: want a string, got a date or time"}},
		{name: "binding type", file: "[keys]\nquit = 3\n", is: ErrWrongType,
			want: []string{"config.toml:2: keys.quit: wrong type"}},
		{name: "binding without keys", file: "[keys]\nquit = []\n", is: ErrInvalid,
			want: []string{"config.toml:2: keys.quit: invalid value: no key given"}},
		{name: "binding action", file: "[keys]\n\"bad action\" = \"x\"\n", is: ErrInvalid,
			want: []string{`config.toml:2: keys.bad action: invalid value: "bad action" is not an action name`}},
		{name: "draft length too long", file: "[speculation]\ndraft_length = 17\n", is: ErrInvalid,
			want: []string{"config.toml:2: speculation.draft_length: invalid value: 17 is outside 1…16"}},
		{name: "draft length zero", file: "[speculation]\ndraft_length = 0\n", is: ErrInvalid,
			want: []string{"speculation.draft_length", "0 is outside 1…16"}},
		{name: "negative temperature", file: "[sampling]\ntemperature = -0.5\n", is: ErrInvalid,
			want: []string{"config.toml:2: sampling.temperature: invalid value: -0.5 is below 0"}},
		{name: "top_p zero", file: "[sampling]\ntop_p = 0\n", is: ErrInvalid,
			want: []string{"config.toml:2: sampling.top_p: invalid value: 0 is outside 0 < top_p ≤ 1"}},
		{name: "top_p above one", file: "[sampling]\ntop_p = 1.5\n", is: ErrInvalid,
			want: []string{"sampling.top_p: invalid value: 1.5 is outside"}},
		{name: "nan", file: "[sampling]\nmin_p = nan\n", is: ErrInvalid,
			want: []string{"config.toml:2: sampling.min_p"}},
		{name: "unknown policy", file: "[chat]\ncontext_full = \"wrap\"\n", is: ErrInvalid,
			want: []string{`config.toml:2: chat.context_full: invalid value: "wrap" is not one of "compact", "drop-oldest" or "stop"`}},
		{name: "unknown compute units", file: "[model]\ncompute_units = \"npu\"\n", is: ErrInvalid,
			want: []string{`config.toml:2: model.compute_units: invalid value: unknown compute units "npu"`}},
		{name: "negative seed", file: "[sampling]\nseed = -1\n", is: ErrInvalid,
			want: []string{"sampling.seed: invalid value: -1 is negative"}},
		{name: "syntax", file: "[sampling\n",
			want: []string{"config.toml:1"}},
		{name: "duplicate key", file: "[chat]\nthinking = true\nthinking = false\n",
			want: []string{"config.toml:3"}},
		{name: "every error at once", file: "[sampling]\ntop_k = -1\ntop_p = 2\nbogus = 1\n", is: ErrInvalid,
			want: []string{"config.toml:2: sampling.top_k", "config.toml:3: sampling.top_p", "config.toml:4: sampling.bogus: unknown key"}},
		{name: "ngram range", file: "[speculation]\nngram_min = 5\n", is: ErrInvalid,
			want: []string{"config.toml:2: speculation.ngram_min: invalid value: 5 exceeds speculation.ngram_max = 3 (default)"}},

		{name: "env not an integer", env: map[string]string{"ORCHARD_SAMPLING_TOP_K": "many"}, is: ErrWrongType,
			want: []string{`env ORCHARD_SAMPLING_TOP_K: sampling.top_k: wrong type: want an integer, got "many"`}},
		{name: "env out of range", env: map[string]string{"ORCHARD_SPECULATION_DRAFT_LENGTH": "0"}, is: ErrInvalid,
			want: []string{"env ORCHARD_SPECULATION_DRAFT_LENGTH: speculation.draft_length: invalid value: 0 is outside 1…16"}},
		{name: "env bool", env: map[string]string{"ORCHARD_CHAT_THINKING": "maybe"}, is: ErrWrongType,
			want: []string{"env ORCHARD_CHAT_THINKING: chat.thinking"}},
		{name: "env policy", env: map[string]string{"ORCHARD_CHAT_CONTEXT_FULL": "forget"}, is: ErrInvalid,
			want: []string{"env ORCHARD_CHAT_CONTEXT_FULL: chat.context_full"}},
		{name: "env pld", env: map[string]string{"CORELLM_MTP_PLD": "maybe"}, is: ErrWrongType,
			want: []string{`env CORELLM_MTP_PLD: speculation.mode: wrong type: want 1, true or yes (on), or 0, false or no (off), got "maybe"`}},
		{name: "env draft len", env: map[string]string{"CORELLM_MTP_DRAFT_LEN": "four"}, is: ErrWrongType,
			want: []string{"env CORELLM_MTP_DRAFT_LEN: speculation.draft_length"}},
		{name: "env verify head", env: map[string]string{"CORELLM_VERIFY_HEAD_CU": "npu"}, is: ErrInvalid,
			want: []string{"env CORELLM_VERIFY_HEAD_CU: model.verify_head_units"}},
		{name: "env keys", env: map[string]string{"ORCHARD_KEYS": "quit"}, is: ErrInvalid,
			want: []string{"env ORCHARD_KEYS: keys: invalid value"}},
		{name: "env top_p", env: map[string]string{"ORCHARD_SAMPLING_TOP_P": "0"}, is: ErrInvalid,
			want: []string{"env ORCHARD_SAMPLING_TOP_P: sampling.top_p"}},
		{name: "env ngram range", env: map[string]string{"ORCHARD_SPECULATION_NGRAM_MAX": "1"}, is: ErrInvalid,
			want: []string{"speculation.ngram_min: invalid value: 2 exceeds speculation.ngram_max = 1 (env ORCHARD_SPECULATION_NGRAM_MAX)"}},

		{name: "flag out of range", flags: []string{"--top-p", "2"}, is: ErrInvalid,
			want: []string{"flag --top-p: sampling.top_p: invalid value: 2 is outside 0 < top_p ≤ 1"}},
		{name: "flag not a number", flags: []string{"--temp=hot"}, is: ErrWrongType,
			want: []string{`flag --temp: sampling.temperature: wrong type: want a number, got "hot"`}},
		{name: "flag bool", flags: []string{"--thinking=maybe"}, is: ErrWrongType,
			want: []string{"flag --thinking: chat.thinking"}},
		{name: "flag theme", flags: []string{"--theme", "neon"}, is: ErrInvalid,
			want: []string{`flag --theme: ui.theme: invalid value: "neon" is not one of "auto", "dark" or "light"`}},
		{name: "flag key", flags: []string{"--key", "=x"}, is: ErrInvalid,
			want: []string{"flag --key: keys: invalid value"}},
		{name: "flag key without keys", flags: []string{"--key", "quit="}, is: ErrInvalid,
			want: []string{"flag --key: keys: invalid value"}},
		{name: "explicit file missing", env: map[string]string{"ORCHARD_CONFIG": "/nonexistent/orchard.toml"}, is: fs.ErrNotExist,
			want: []string{"config file: open /nonexistent/orchard.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := load(t, tt.file, tt.env, tt.flags...)
			if err == nil {
				t.Fatalf("no error; config %+v", c)
			}
			if c != nil {
				t.Errorf("a config came back with the error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			var ce *Error
			if tt.is != fs.ErrNotExist && !errors.As(err, &ce) {
				t.Errorf("error %q holds no *Error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n  %s\nlacks\n  %s", err, w)
				}
			}
		})
	}
}

func TestNoHome(t *testing.T) {
	_, err := Load(Options{Env: mapEnv(map[string]string{"XDG_CONFIG_HOME": "/x"})})
	if err == nil || !strings.Contains(err.Error(), "data.dir") {
		t.Errorf("no home, no data dir: %v", err)
	}
	c, err := Load(Options{Env: mapEnv(map[string]string{"XDG_CONFIG_HOME": "/x", "ORCHARD_DATA_DIR": "/d"})})
	if err != nil || c.Data.Dir != "/d" {
		t.Errorf("no home, data dir set: %v", err)
	}
	if _, err := Load(Options{}); err == nil || !strings.Contains(err.Error(), "HOME") {
		t.Errorf("no environment at all: %v", err)
	}
}
