package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
)

// keysKey is the [keys] table: action = "key" or ["key", ...]. Its
// actions belong to the TUI; Load checks them against Options.Actions when
// given, the key spellings are the TUI's to judge.
const keysKey = "keys"

// validAction accepts names such as quit, scroll-up or checkpoint_save.
func validAction(a string) bool { return isBare(a) }

// bindingFromTOML reads one action's keys from the file.
func bindingFromTOML(action string, v any) ([]string, error) {
	if !validAction(action) {
		return nil, invalid("%s is not an action name (letters, digits, - and _)", termsafe.Quote(action))
	}
	var keys []string
	switch v := v.(type) {
	case string:
		keys = []string{v}
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, wrongType("a string or an array of strings", e)
			}
			keys = append(keys, s)
		}
	default:
		return nil, wrongType("a string or an array of strings", v)
	}
	if len(keys) == 0 || slices.Contains(keys, "") {
		return nil, invalid("no key given (every action needs at least one)")
	}
	return keys, nil
}

// bindingsFromText reads "quit=ctrl+c,ctrl+q;help=?" (ORCHARD_KEYS, --key).
func bindingsFromText(s string) ([][2]string, error) {
	var out [][2]string
	for part := range strings.SplitSeq(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		action, keys, ok := strings.Cut(part, "=")
		action = strings.TrimSpace(action)
		if !ok || !validAction(action) || len(splitKeys(keys)) == 0 {
			return nil, invalid("%q: want ACTION=KEY[,KEY…][;ACTION=…]", part)
		}
		out = append(out, [2]string{action, keys})
	}
	if len(out) == 0 {
		return nil, invalid("%q: want ACTION=KEY[,KEY…][;ACTION=…]", s)
	}
	return out, nil
}

// splitKeys splits the keys of one text binding.
func splitKeys(s string) []string {
	keys := []string{}
	for k := range strings.SplitSeq(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// setBindingsText applies a text binding list to c with source src.
func (c *Config) setBindingsText(s string, src Source, actions []string) error {
	bs, err := bindingsFromText(s)
	if err != nil {
		return &Error{Key: keysKey, Source: src, Err: err}
	}
	for _, b := range bs {
		if err := knownAction(b[0], actions); err != nil {
			return &Error{Key: keysKey + "." + b[0], Source: src, Err: err}
		}
	}
	for _, b := range bs {
		c.Keys[b[0]] = splitKeys(b[1])
		c.sources[keysKey+"."+b[0]] = src
	}
	return nil
}

// knownAction checks action against the TUI's actions when they are known.
func knownAction(action string, actions []string) error {
	if actions == nil || slices.Contains(actions, action) {
		return nil
	}
	return fmt.Errorf("%w: no action %s (known: %s)", ErrUnknownKey, termsafe.Quote(action), strings.Join(actions, ", "))
}
