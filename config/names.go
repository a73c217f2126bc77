package config

import (
	"net"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
)

// namesSetting holds a list of names: an array of strings in the file, a
// comma-separated list in a variable or a flag (origins hold colons, so
// the path list separator will not do). check validates one name and
// returns it as kept (lower-cased where case does not matter).
func namesSetting(key, flag, doc string, check func(string) (string, error), field func(*Config) *[]string) setting {
	return setting{key: key, flag: flag, doc: doc,
		set: func(c *Config, v any, _ pathCtx) error {
			var items []string
			switch v := v.(type) {
			case text:
				for s := range strings.SplitSeq(string(v), ",") {
					if s = strings.TrimSpace(s); s != "" {
						items = append(items, s)
					}
				}
			case []any:
				for _, e := range v {
					s, ok := e.(string)
					if !ok {
						return wrongType("an array of strings", e)
					}
					items = append(items, strings.TrimSpace(s))
				}
			default:
				return wrongType("an array of strings", v)
			}
			out := make([]string, 0, len(items))
			for _, s := range items {
				n, err := check(s)
				if err != nil {
					return err
				}
				out = append(out, n)
			}
			*field(c) = out
			return nil
		},
		get: func(c *Config) any { return slices.Clone(*field(c)) },
	}
}

// validHost accepts a host name as the Host header carries it, without
// scheme or port: "mac.lan", "*.example.com", an IP address, or "*".
func validHost(s string) (string, error) {
	h := strings.TrimSuffix(strings.ToLower(s), ".")
	if h == "*" || net.ParseIP(strings.Trim(h, "[]")) != nil {
		return h, nil
	}
	name := strings.TrimPrefix(h, "*.")
	ok := name != ""
	for label := range strings.SplitSeq(name, ".") {
		ok = ok && label != "" && strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-_") == ""
	}
	if !ok {
		return "", invalid("%s is not a host name: want a name such as mac.lan or *.example.com, without scheme or port", termsafe.Quote(s))
	}
	return h, nil
}

// validOrigin accepts a browser origin: scheme://host[:port] (the host may
// hold a * wildcard), "null", or "*".
func validOrigin(s string) (string, error) {
	o := strings.TrimSuffix(strings.ToLower(s), "/")
	if o == "*" || o == "null" {
		return o, nil
	}
	scheme, rest, found := strings.Cut(o, "://")
	ok := found && scheme != "" && rest != "" && !strings.ContainsAny(rest, "/?#@ \t")
	for i, r := range scheme {
		ok = ok && (r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'))
	}
	if !ok {
		return "", invalid("%s is not an origin: want scheme://host[:port], such as http://localhost:3000 or https://*.example.com, or *", termsafe.Quote(s))
	}
	return o, nil
}

// validAlias accepts a model name: printable, without spaces.
func validAlias(s string) (string, error) {
	if s == "" || len(s) > 256 || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", invalid("%s is not a model name: want printable text without spaces", termsafe.Quote(s))
	}
	return s, nil
}
