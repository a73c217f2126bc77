package config

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/termsafe"
)

// text is a value from an environment variable or a flag; values from the
// file arrive as the TOML decoder's types (string, int64, float64, bool,
// []any, map[string]any).
type text string

// pathCtx resolves path values: ~ is homeDir, relative paths are relative
// to base (the config file's folder; "" for variables and flags).
type pathCtx struct{ home, base string }

// setting is one key of the schema; the file, env, flags, show and init
// all work from the same table so they cannot drift apart.
type setting struct {
	key    string // dotted key in the file; its variable is ORCHARD_ + KEY with _ for .
	flag   string // flag name without dashes
	doc    string // one line: the init comment and the flag usage
	isBool bool   // the flag needs no value
	list   bool   // repeated flags accumulate
	// set parses v and assigns it to c; the error says what was wanted.
	set func(c *Config, v any, pc pathCtx) error
	// get returns the effective value in a JSON-friendly type.
	get func(c *Config) any
}

// envName is the ORCHARD_* variable of a key.
func envName(key string) string {
	return "ORCHARD_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// settings is the schema, in the order show and init present it.
func settings() []setting {
	return []setting{
		pathSetting("model.path", "model", "bundle folder to open; empty: choose one in the model picker",
			func(c *Config) *string { return &c.Model.Path }),
		pathsSetting("model.search_dirs", "models-dir", "folders searched for bundles, besides the Hugging Face cache (flag repeatable)",
			func(c *Config) *[]string { return &c.Model.SearchDirs }),
		unitsSetting("model.compute_units", "compute", "where Core ML runs the chunks: default (the bundle's choice), all, cpuAndGPU, cpuAndNeuralEngine or cpuOnly",
			func(c *Config) *coreml.ComputeUnits { return &c.Model.ComputeUnits }),
		unitsSetting("model.verify_head_units", "verify-head-cu", "where r1's batched verify head runs: default (CPU when the chain may use the Neural Engine), cpu, gpu, ane or all",
			func(c *Config) *coreml.ComputeUnits { return &c.Model.VerifyHeadUnits }),
		unitsSetting("model.head_units", "v2-head-cu", "where v2's lm head runs: default (with the chunks), cpu, gpu, ane or all",
			func(c *Config) *coreml.ComputeUnits { return &c.Model.HeadUnits }),
		unitsSetting("model.vision_units", "vision-cu", "where the vision encoder runs: default (cpuAndGPU: 0.10 s an image against 0.71 s on all), cpu, gpu, ane or all",
			func(c *Config) *coreml.ComputeUnits { return &c.Model.VisionUnits }),
		enumSetting("model.warm_up", "warm-up", "run every function of the bundle once while it opens, so no reply waits for Core ML's compiling: auto (on Core ML), on or off",
			[]WarmUp{WarmAuto, WarmOn, WarmOff}, func(c *Config) *WarmUp { return &c.Model.WarmUp }),
		boolSetting("model.prefill_past_window", "prefill-past-window", "stateful3: keep the batched prefill on past the sliding window (causal, but each batch row sees up to 7 fewer positions: not exact)",
			func(c *Config) *bool { return &c.Model.PrefillPastWindow }),
		unitsSetting("model.audio_units", "audio-cu", "where the audio encoder runs: default (cpuAndGPU: its fp16 overflows on the Neural Engine), cpu, gpu, ane or all",
			func(c *Config) *coreml.ComputeUnits { return &c.Model.AudioUnits }),

		enumSetting("speculation.mode", "spec", "prompt-lookup speculation: auto (where the bundle supports it), on or off",
			[]SpecMode{SpecAuto, SpecOn, SpecOff}, func(c *Config) *SpecMode { return &c.Speculation.Mode }),
		intSetting("speculation.draft_length", "draft-len", "tokens drafted per speculation round, 1…16",
			1, 16, func(c *Config) *int { return &c.Speculation.DraftLength }),
		intSetting("speculation.ngram_min", "ngram-min", "shortest n-gram looked up in the conversation, 1…8",
			1, 8, func(c *Config) *int { return &c.Speculation.NgramMin }),
		intSetting("speculation.ngram_max", "ngram-max", "longest n-gram looked up in the conversation, ngram_min…8",
			1, 8, func(c *Config) *int { return &c.Speculation.NgramMax }),

		floatSetting("sampling.temperature", "temp", "sampling temperature for bundles that emit logits; 0 is greedy",
			func(c *Config) *float64 { return &c.Sampling.Temperature },
			func(v float64) error { return atLeast(v, 0) }),
		intSetting("sampling.top_k", "top-k", "keep the k most likely tokens; 0: no limit",
			0, math.MaxInt32, func(c *Config) *int { return &c.Sampling.TopK }),
		floatSetting("sampling.top_p", "top-p", "nucleus sampling mass, 0 < top_p ≤ 1",
			func(c *Config) *float64 { return &c.Sampling.TopP },
			func(v float64) error {
				if !(v > 0 && v <= 1) {
					return invalid("%v is outside 0 < top_p ≤ 1", v)
				}
				return nil
			}),
		floatSetting("sampling.min_p", "min-p", "drop tokens less likely than min_p × the top token's probability, 0…1",
			func(c *Config) *float64 { return &c.Sampling.MinP },
			func(v float64) error {
				if !(v >= 0 && v <= 1) {
					return invalid("%v is outside 0…1", v)
				}
				return nil
			}),
		floatSetting("sampling.repetition_penalty", "repeat-penalty", "penalise recently seen tokens by this factor; 1: none",
			func(c *Config) *float64 { return &c.Sampling.RepetitionPenalty },
			func(v float64) error {
				if !(v > 0) || math.IsInf(v, 0) {
					return invalid("%v is not a positive number", v)
				}
				return nil
			}),
		seedSetting("sampling.seed", "seed", "sampling seed: the same seed and settings give the same reply",
			func(c *Config) *uint64 { return &c.Sampling.Seed }),

		stringSetting("chat.system_prompt", "system", "system prompt of new conversations; empty: none",
			func(c *Config) *string { return &c.Chat.SystemPrompt }),
		boolSetting("chat.thinking", "thinking", "ask for the model's thinking where the bundle's template supports it",
			func(c *Config) *bool { return &c.Chat.Thinking }),
		enumSetting("chat.context_full", "context-full", "when a message does not fit: compact (the model summarises the oldest turns), drop-oldest turns, or stop",
			[]ContextPolicy{ContextCompact, ContextDropOldest, ContextStop}, func(c *Config) *ContextPolicy { return &c.Chat.ContextFull }),
		toolNameSetting("chat.tools.allow", "allow-tool", "tools that run without asking: server.tool, or server.* for all of a server's (flag repeatable)",
			func(c *Config) *[]string { return &c.Chat.Tools.Allow }),
		intSetting("chat.tools.max_calls", "max-tool-calls", "tool calls the model may make in one turn, 1…100",
			1, 100, func(c *Config) *int { return &c.Chat.Tools.MaxCalls }),

		pathSetting("data.dir", "data-dir", "data folder: checkpoints/, metrics.jsonl, autosave, logs/, state.json",
			func(c *Config) *string { return &c.Data.Dir }),
		boolSetting("log.debug", "debug", "log debug detail to <data.dir>/logs/orchard.log",
			func(c *Config) *bool { return &c.Log.Debug }),
		stringSetting("server.listen", "listen", "TCP address orchard serve listens on; beyond loopback it needs an API key",
			func(c *Config) *string { return &c.Server.Listen }),
		sizeSetting("server.max_media_size", "max-media-size", "largest picture or clip one request to orchard serve may carry (a body may carry two of that size)",
			1, func(c *Config) *int64 { return &c.Server.MaxMediaSize }),
		secretSetting("server.api_key", "api-key", "API key orchard serve requires (Authorization: Bearer KEY) and the chat sends when it attaches",
			func(c *Config) *string { return &c.Server.APIKey }),
		namesSetting("server.allowed_hosts", "allowed-hosts", "more host names requests to orchard serve may be addressed to (the Host header), besides loopback, this machine's name and the listen address: a name, *.example.com, or * for any (comma-separated in the variable and the flag)",
			validHost, func(c *Config) *[]string { return &c.Server.AllowedHosts }),
		namesSetting("server.origins", "origins", "browser origins allowed to call orchard serve, such as http://localhost:3000 or https://*.example.com (* for any); none by default (comma-separated in the variable and the flag)",
			validOrigin, func(c *Config) *[]string { return &c.Server.Origins }),
		boolSetting("server.strict_sampling", "strict-sampling", "refuse API requests whose sampling parameters an argmax bundle cannot honour (400), instead of decoding greedily and naming them in X-Orchard-Ignored",
			func(c *Config) *bool { return &c.Server.StrictSampling }),
		namesSetting("server.aliases", "aliases", "more names API requests may give the served model, besides its own name and orchard (comma-separated in the variable and the flag)",
			validAlias, func(c *Config) *[]string { return &c.Server.Aliases }),
		enumSetting("ui.theme", "theme", "colours: auto (from the terminal background), dark or light",
			Themes(), func(c *Config) *string { return &c.UI.Theme }),

		boolSetting("history.enabled", "history", "keep every conversation in the history (<data.dir>/history), to search and resume",
			func(c *Config) *bool { return &c.History.Enabled }),
		intSetting("history.keep_kv", "history-keep-kv", "the most recent conversations of the history that keep their cache and resume without a prefill; 0 keeps text only",
			0, 10000, func(c *Config) *int { return &c.History.KeepKV }),
		sizeSetting("history.kv_budget", "history-kv-budget", "disk space the caches of the history may take together, such as \"2GiB\" or \"500MB\"",
			0, func(c *Config) *int64 { return &c.History.KVBudget }),

		sizeSetting("media.max_file_size", "media-max-size", "largest picture or audio file read, such as \"256MiB\"",
			1, func(c *Config) *int64 { return &c.Media.MaxFileSize }),
		intSetting("media.max_megapixels", "media-max-megapixels", "largest picture decoded, in millions of pixels, 1…1000",
			1, 1000, func(c *Config) *int { return &c.Media.MaxMegapixels }),
		sizeSetting("media.max_decode_size", "media-max-decode-size", "memory one picture may take to decode, judged from its header, such as \"256MiB\" (large JPEGs are decoded scaled down and take a fraction)",
			1, func(c *Config) *int64 { return &c.Media.MaxDecodeSize }),
		intSetting("media.max_audio_seconds", "media-max-seconds", "longest clip read, in seconds (each 30 s takes 750 tokens of context), 1…86400",
			1, 86400, func(c *Config) *int { return &c.Media.MaxAudioSeconds }),
		sizeSetting("media.keep_encoded", "media-keep-encoded", "memory kept for the encodings of pictures and clips, so that one sent again skips its encoder; 0 keeps none",
			0, func(c *Config) *int64 { return &c.Media.KeepEncoded }),
	}
}

// lookup returns the setting of key, or nil.
func lookup(all []setting, key string) *setting {
	for i := range all {
		if all[i].key == key {
			return &all[i]
		}
	}
	return nil
}

func stringSetting(key, flag, doc string, field func(*Config) *string) setting {
	return setting{key: key, flag: flag, doc: doc,
		set: func(c *Config, v any, _ pathCtx) error {
			s, err := asString(v)
			if err == nil {
				*field(c) = s
			}
			return err
		},
		get: func(c *Config) any { return *field(c) },
	}
}

// secretSetting is a string that show and init never print.
func secretSetting(key, flag, doc string, field func(*Config) *string) setting {
	st := stringSetting(key, flag, doc, field)
	st.get = func(c *Config) any {
		if *field(c) == "" {
			return ""
		}
		return "(set, not shown)"
	}
	return st
}

func pathSetting(key, flag, doc string, field func(*Config) *string) setting {
	return setting{key: key, flag: flag, doc: doc,
		set: func(c *Config, v any, pc pathCtx) error {
			s, err := asString(v)
			if err == nil {
				*field(c) = expandPath(s, pc.home, pc.base)
			}
			return err
		},
		get: func(c *Config) any { return *field(c) },
	}
}

// pathsSetting holds a list of paths: an array in the file, a
// list-separated string (like PATH) in a variable or a flag.
func pathsSetting(key, flag, doc string, field func(*Config) *[]string) setting {
	return setting{key: key, flag: flag, doc: doc, list: true,
		set: func(c *Config, v any, pc pathCtx) error {
			var items []string
			switch v := v.(type) {
			case text:
				for _, p := range filepath.SplitList(string(v)) {
					if p != "" {
						items = append(items, p)
					}
				}
			default:
				var err error
				if items, err = stringArray(v); err != nil {
					return err
				}
			}
			out := make([]string, 0, len(items))
			for _, p := range items {
				out = append(out, expandPath(p, pc.home, pc.base))
			}
			*field(c) = out
			return nil
		},
		get: func(c *Config) any { return slices.Clone(*field(c)) },
	}
}

func enumSetting[T ~string](key, flag, doc string, allowed []T, field func(*Config) *T) setting {
	return setting{key: key, flag: flag, doc: doc,
		set: func(c *Config, v any, _ pathCtx) error {
			s, err := asString(v)
			if err != nil {
				return err
			}
			if !slices.Contains(allowed, T(s)) {
				return invalid("%s is not one of %s", termsafe.Quote(s), joinQuoted(allowed))
			}
			*field(c) = T(s)
			return nil
		},
		get: func(c *Config) any { return string(*field(c)) },
	}
}

func intSetting(key, flag, doc string, lo, hi int, field func(*Config) *int) setting {
	return setting{key: key, flag: flag, doc: doc,
		set: func(c *Config, v any, _ pathCtx) error {
			n, err := asInt(v)
			if err != nil {
				return err
			}
			if n < int64(lo) || n > int64(hi) {
				return invalid("%d is outside %d…%d", n, lo, hi)
			}
			*field(c) = int(n)
			return nil
		},
		get: func(c *Config) any { return *field(c) },
	}
}

// seedSetting holds a non-negative integer; TOML integers are int64.
func seedSetting(key, flag, doc string, field func(*Config) *uint64) setting {
	return setting{key: key, flag: flag, doc: doc,
		set: func(c *Config, v any, _ pathCtx) error {
			n, err := asInt(v)
			if err != nil {
				return err
			}
			if n < 0 {
				return invalid("%d is negative", n)
			}
			*field(c) = uint64(n)
			return nil
		},
		get: func(c *Config) any { return *field(c) },
	}
}

func floatSetting(key, flag, doc string, field func(*Config) *float64, check func(float64) error) setting {
	return setting{key: key, flag: flag, doc: doc,
		set: func(c *Config, v any, _ pathCtx) error {
			f, err := asFloat(v)
			if err != nil {
				return err
			}
			if err := check(f); err != nil {
				return err
			}
			*field(c) = f
			return nil
		},
		get: func(c *Config) any { return *field(c) },
	}
}

func boolSetting(key, flag, doc string, field func(*Config) *bool) setting {
	return setting{key: key, flag: flag, doc: doc, isBool: true,
		set: func(c *Config, v any, _ pathCtx) error {
			b, err := asBool(v)
			if err == nil {
				*field(c) = b
			}
			return err
		},
		get: func(c *Config) any { return *field(c) },
	}
}

func unitsSetting(key, flag, doc string, field func(*Config) *coreml.ComputeUnits) setting {
	return setting{key: key, flag: flag, doc: doc,
		set: func(c *Config, v any, _ pathCtx) error {
			s, err := asString(v)
			if err != nil {
				return err
			}
			u, err := coreml.ParseComputeUnits(s)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			*field(c) = u
			return nil
		},
		get: func(c *Config) any { return field(c).String() },
	}
}

// sizeSetting holds a number of bytes: an integer, or a string with a
// unit (B, KB/MB/GB/TB in powers of 1000, K/M/G/T or KiB/MiB/GiB/TiB in
// powers of 1024), of at least least bytes.
func sizeSetting(key, flag, doc string, least int64, field func(*Config) *int64) setting {
	return setting{key: key, flag: flag, doc: doc,
		set: func(c *Config, v any, _ pathCtx) error {
			var n int64
			switch v := v.(type) {
			case int64:
				n = v
			case text, string:
				s, _ := asString(v)
				var err error
				if n, err = ParseSize(s); err != nil {
					return fmt.Errorf("%w: %v", ErrInvalid, err)
				}
			default:
				return wrongType("a size such as \"2GiB\" or a number of bytes", v)
			}
			if n < 0 {
				return invalid("%d is negative", n)
			}
			if n < least {
				return invalid("%s is below %s", FormatSize(n), FormatSize(least))
			}
			*field(c) = n
			return nil
		},
		get: func(c *Config) any { return FormatSize(*field(c)) },
	}
}

var sizeUnits = []struct {
	name string
	mult float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseSize reads a size such as "2GiB", "500 MB", "1.5G" or "4096".
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(t, u.name); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a size (such as 2GiB, 500MB or a number of bytes)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	if f*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(f * mult), nil
}

// FormatSize spells a size as ParseSize reads it, in the largest binary
// unit that divides it.
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

func atLeast(v, lo float64) error {
	if !(v >= lo) || math.IsInf(v, 0) {
		return invalid("%v is below %v", v, lo)
	}
	return nil
}

func asString(v any) (string, error) {
	switch v := v.(type) {
	case text:
		return string(v), nil
	case string:
		return v, nil
	}
	return "", wrongType("a string", v)
}

func asInt(v any) (int64, error) {
	switch v := v.(type) {
	case text:
		n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		if err != nil {
			return 0, wrongType("an integer", v)
		}
		return n, nil
	case int64:
		return v, nil
	}
	return 0, wrongType("an integer", v)
}

func asFloat(v any) (float64, error) {
	switch v := v.(type) {
	case text:
		f, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64)
		if err != nil || math.IsNaN(f) {
			return 0, wrongType("a number", v)
		}
		return f, nil
	case float64:
		if math.IsNaN(v) {
			return 0, invalid("nan is not a number")
		}
		return v, nil
	case int64:
		return float64(v), nil
	}
	return 0, wrongType("a number", v)
}

func asBool(v any) (bool, error) {
	switch v := v.(type) {
	case text:
		switch strings.ToLower(strings.TrimSpace(string(v))) {
		case "1", "true", "yes", "on":
			return true, nil
		case "0", "false", "no", "off":
			return false, nil
		}
		return false, wrongType("true or false", v)
	case bool:
		return v, nil
	}
	return false, wrongType("true or false", v)
}

// describe names a value's type for errors.
func describe(v any) string {
	switch v := v.(type) {
	case text:
		return termsafe.Quote(string(v))
	case string:
		return "the string " + termsafe.Quote(v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return fmt.Sprintf("the float %v", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case nil:
		return "nothing"
	}
	return "a date or time" // the decoder's only other types

}

func joinQuoted[T ~string](xs []T) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(string(x))
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
