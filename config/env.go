package config

import (
	"fmt"
	"strconv"
	"strings"
)

// alias is a published runtime's variable that means the same as one of
// orchard's keys. translate turns its value into the key's text form, with
// a note when the meaning needed translating.
type alias struct {
	name      string
	key       string
	translate func(v string) (text string, note string, err error)
}

// aliases are the seeds' variables (okayuji runtime §1.4, §4.3). They
// apply before ORCHARD_* so orchard's own variable wins when both are set.
func aliases() []alias {
	return []alias{
		{name: "CORELLM_MTP_PLD", key: "speculation.mode", translate: func(v string) (string, string, error) {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "1", "true", "yes":
				return string(SpecOn), "", nil
			case "0", "false", "no":
				return string(SpecOff), "", nil
			}
			return "", "", wrongType("1, true or yes (on), or 0, false or no (off)", text(v))
		}},
		// The published runtime clamps the draft length to 4…16; honour
		// that so the variable means here what it means there.
		{name: "CORELLM_MTP_DRAFT_LEN", key: "speculation.draft_length", translate: func(v string) (string, string, error) {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return "", "", wrongType("an integer", text(v))
			}
			c := min(max(n, 4), 16)
			if c != n {
				return strconv.Itoa(c), fmt.Sprintf("clamped from %d to 4…16 as the published runtime does", n), nil
			}
			return v, "", nil
		}},
		{name: "CORELLM_MTP_PLD_MINN", key: "speculation.ngram_min", translate: func(v string) (string, string, error) {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return "", "", wrongType("an integer", text(v))
			}
			if n < 1 {
				return "1", fmt.Sprintf("raised from %d to 1 as the published runtime does", n), nil
			}
			return v, "", nil
		}},
		// The API key's short name, as the issue and most servers spell it.
		{name: "ORCHARD_API_KEY", key: "server.api_key", translate: func(v string) (string, string, error) {
			return v, "", nil
		}},
		// The allowed browser origins, as ollama's OLLAMA_ORIGINS.
		{name: "ORCHARD_ORIGINS", key: "server.origins", translate: func(v string) (string, string, error) {
			return v, "", nil
		}},
		{name: "CORELLM_VERIFY_HEAD_CU", key: "model.verify_head_units", translate: func(v string) (string, string, error) {
			return v, "", nil
		}},
		{name: "CORELLM_V2_HEAD_CU", key: "model.head_units", translate: func(v string) (string, string, error) {
			if strings.EqualFold(strings.TrimSpace(v), "chunks") {
				return "default", "chunks: the head runs with the chunks", nil
			}
			return v, "", nil
		}},
	}
}

// readEnv applies the seeds' variables, then ORCHARD_* (one per key, and
// ORCHARD_KEYS for key bindings). An empty variable counts as unset.
func (c *Config) readEnv(env func(string) string, homeDir string, actions []string) []error {
	all := settings()
	pc := pathCtx{home: homeDir}
	var errs []error
	for _, a := range aliases() {
		v := env(a.name)
		if v == "" {
			continue
		}
		src := Source{Kind: FromEnv, Name: a.name}
		t, note, err := a.translate(v)
		if err == nil {
			err = lookup(all, a.key).set(c, text(t), pc)
		}
		if err != nil {
			errs = append(errs, &Error{Key: a.key, Source: src, Err: err})
			continue
		}
		src.Note = note
		c.sources[a.key] = src
	}
	for _, s := range all {
		name := envName(s.key)
		v := env(name)
		if v == "" {
			continue
		}
		src := Source{Kind: FromEnv, Name: name}
		if err := s.set(c, text(v), pc); err != nil {
			errs = append(errs, &Error{Key: s.key, Source: src, Err: err})
			continue
		}
		c.sources[s.key] = src
	}
	if v := env(envName(keysKey)); v != "" {
		if err := c.setBindingsText(v, Source{Kind: FromEnv, Name: envName(keysKey)}, actions); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
