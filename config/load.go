package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/orchard-llm/orchard/regfile"
	"github.com/orchard-llm/orchard/termsafe"
)

// Options says where Load reads from.
type Options struct {
	// Env reads environment variables (os.Getenv); nil reads none. HOME and
	// the XDG variables that place the files are read through it too.
	Env func(string) string
	// Flags are the parsed command-line flags; nil means none.
	Flags *Flags
	// Actions are the TUI's key-binding actions (tui.KeyNames); when set,
	// a binding of any other action is an error naming its source.
	Actions []string
}

// ConfigEnv names the config file, like --config.
const ConfigEnv = "ORCHARD_CONFIG"

// Load builds the configuration: defaults, then the config file, then the
// environment, then the flags the user set. It reports every problem it
// finds, each an *Error naming the key and the source, joined.
func Load(o Options) (*Config, error) {
	env := o.Env
	if env == nil {
		env = func(string) string { return "" }
	}
	c := defaults(env)
	homeDir, _ := home(env) // only needed to expand ~; its absence is reported where it matters

	path, explicit, err := configFile(env, o.Flags)
	if err != nil {
		return nil, err
	}
	c.File = path
	var errs []error
	if path != "" {
		errs = append(errs, c.readFile(path, explicit, homeDir, o.Actions)...)
	}
	errs = append(errs, c.readEnv(env, homeDir, o.Actions)...)
	if o.Flags != nil {
		errs = append(errs, o.Flags.apply(c, homeDir, o.Actions)...)
	}
	errs = append(errs, c.check()...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// configFile picks the file: --config, else $ORCHARD_CONFIG, else the XDG
// default. A named file must exist; the default may not.
func configFile(env func(string) string, f *Flags) (path string, explicit bool, err error) {
	if f != nil && f.file != "" {
		return f.file, true, nil
	}
	if p := env(ConfigEnv); p != "" {
		return p, true, nil
	}
	p, err := DefaultFile(env)
	if err != nil {
		return "", false, fmt.Errorf("config file: %w (name one with --config or %s)", err, ConfigEnv)
	}
	return p, false, nil
}

// MaxFileBytes bounds the config file: it holds a few dozen settings, so
// anything larger (--config /dev/zero, a wrong path) is refused unread.
const MaxFileBytes = 1 << 20

// readFile applies the config file at path, a regular file of at most
// MaxFileBytes.
func (c *Config) readFile(path string, explicit bool, homeDir string, actions []string) []error {
	data, err := regfile.ReadFile(path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil
	}
	if errors.Is(err, regfile.ErrNotRegular) || errors.Is(err, regfile.ErrTooLarge) {
		return []error{&Error{Source: Source{Kind: FromFile, Name: path}, Err: fmt.Errorf("%w: the config file %s", ErrInvalid, regfile.Reason(err))}}
	}
	if err != nil {
		return []error{fmt.Errorf("config file: %w", err)}
	}
	c.FileFound = true
	base := filepath.Dir(path)
	if abs, err := filepath.Abs(base); err == nil {
		base = abs
	}
	return c.applyTOML(data, path, pathCtx{home: homeDir, base: base}, actions)
}

// applyTOML applies a TOML document; name is the file named in sources.
func (c *Config) applyTOML(data []byte, name string, pc pathCtx, actions []string) []error {
	// Editors on Windows start UTF-8 files with a byte order mark; TOML
	// does not allow one, but it means nothing, so it is skipped.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	ix := scanKeys(data)
	if ix.over > 0 {
		return []error{&Error{Source: Source{Kind: FromFile, Name: name, Line: ix.over},
			Err: fmt.Errorf("%w: the file has more than %d keys and tables, and orchard has about a hundred settings and key bindings: is it a config file? (orchard config init writes one)", ErrInvalid, MaxKeys)}}
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			msg := strings.TrimPrefix(de.Error(), "toml: ")
			return []error{&Error{Key: syntaxKey(data, line, de.Key()), Source: Source{Kind: FromFile, Name: name, Line: line}, Err: errors.New(msg)}}
		}
		return []error{fmt.Errorf("%s: %w", name, err)}
	}
	lines := ix.lines
	at := func(key string) Source { return Source{Kind: FromFile, Name: name, Line: lines[key]} }
	all := settings()

	// Walk in file order so errors and sources read top to bottom.
	byLine := func(m map[string]any, prefix string) []string {
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.SortFunc(ks, func(a, b string) int {
			return cmp.Or(cmp.Compare(lines[prefix+a], lines[prefix+b]), strings.Compare(a, b))
		})
		return ks
	}
	var errs []error
	for _, section := range byLine(doc, "") {
		v := doc[section]
		table, isTable := v.(map[string]any)
		if !isSection(all, section) {
			errs = append(errs, &Error{Key: section, Source: at(section), Err: unknownKey(all, section)})
			continue
		}
		if !isTable {
			errs = append(errs, &Error{Key: section, Source: at(section), Err: wrongType("a table ["+section+"]", v)})
			continue
		}
		if section == mcpKey {
			errs = append(errs, c.applyMCP(table, at, byLine, pc)...)
			continue
		}
		for _, k := range byLine(table, section+".") {
			key := section + "." + k
			src := at(key)
			if section == keysKey {
				keys, err := bindingFromTOML(k, table[k])
				if err == nil {
					err = knownAction(k, actions)
				}
				if err != nil {
					errs = append(errs, &Error{Key: key, Source: src, Err: err})
					continue
				}
				c.Keys[k] = keys
				c.sources[key] = src
				continue
			}
			errs = c.applySetting(all, key, table[k], pc, at, byLine, errs)
		}
	}
	return errs
}

// applySetting sets key from v; a table whose keys are settings below key
// ([chat.tools], or tools = {…} in [chat]) is walked in.
func (c *Config) applySetting(all []setting, key string, v any, pc pathCtx, at func(string) Source, byLine func(map[string]any, string) []string, errs []error) []error {
	s := lookup(all, key)
	if s == nil {
		if sub, ok := v.(map[string]any); ok && isSection(all, key) {
			for _, k := range byLine(sub, key+".") {
				errs = c.applySetting(all, key+"."+k, sub[k], pc, at, byLine, errs)
			}
			return errs
		}
		return append(errs, &Error{Key: key, Source: at(key), Err: unknownKey(all, key)})
	}
	if err := s.set(c, v, pc); err != nil {
		return append(errs, &Error{Key: key, Source: at(key), Err: err})
	}
	c.sources[key] = at(key)
	return errs
}

// syntaxKey names the key a TOML syntax error is about, which the decoder
// reports only for some errors: the table header on that line ("[sampling"
// without its bracket), or the key before "=" inside the table the lines
// above opened. The parser stopped there, so the document is read line by
// line as plain text.
func syntaxKey(data []byte, line int, key []string) string {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return strings.Join(key, ".")
	}
	table := ""
	for _, l := range lines[:line-1] {
		if h, ok := tableHeader(l); ok {
			table = h
		}
	}
	l := strings.TrimSpace(lines[line-1])
	if strings.HasPrefix(l, "[") {
		h := strings.Trim(strings.TrimSpace(strings.Trim(l, "[]")), `"' `)
		return cutKey(h)
	}
	k := strings.Join(key, ".")
	if k == "" {
		before, _, ok := strings.Cut(l, "=")
		if !ok {
			return cutKey(table)
		}
		k = strings.Trim(strings.TrimSpace(before), `"'`)
	}
	if table != "" {
		k = table + "." + k
	}
	return cutKey(k)
}

// tableHeader reads "[name]" or "[[name]]" (a comment may follow).
func tableHeader(l string) (string, bool) {
	l = strings.TrimSpace(l)
	if !strings.HasPrefix(l, "[") {
		return "", false
	}
	end := strings.Index(l, "]")
	if end < 0 {
		return "", false
	}
	return strings.Trim(strings.TrimSpace(strings.Trim(l[:end], "[")), `"'`), true
}

// cutKey keeps a key from a broken line short and printable.
func cutKey(k string) string {
	if len(k) > termsafe.MaxQuote || !termsafe.SafeLine(k) {
		return termsafe.Quote(k)
	}
	return k
}

// isSection reports whether name is a table of the schema: [keys], [mcp],
// or a prefix of settings' keys ("chat", "chat.tools").
func isSection(all []setting, name string) bool {
	if name == keysKey || name == mcpKey {
		return true
	}
	for _, s := range all {
		if strings.HasPrefix(s.key, name+".") {
			return true
		}
	}
	return false
}

// unknownKey suggests the key the user probably meant: the same name in
// another table, or a known key a couple of edits away.
func unknownKey(all []setting, key string) error {
	_, last, _ := strings.Cut(key, ".")
	if last == "" {
		last = key
	}
	keys := make([]string, len(all))
	for i, s := range all {
		keys[i] = s.key
		if _, name, _ := strings.Cut(s.key, "."); name == last || s.key == key {
			return fmt.Errorf("%w (did you mean %s?)", ErrUnknownKey, s.key)
		}
	}
	if best := Nearest(key, keys); best != "" {
		return fmt.Errorf("%w (did you mean %s?)", ErrUnknownKey, best)
	}
	return ErrUnknownKey
}

// Nearest is the choice closest to word and at most two edits away (a
// typo), for a "did you mean" hint; "" when none is that close.
func Nearest(word string, choices []string) string {
	best, bestD := "", 3
	for _, c := range choices {
		// Lengths apart by bestD or more are at least that many edits
		// apart: a long word costs no quadratic distance.
		if abs(len(word)-len(c)) >= bestD {
			continue
		}
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// check applies the rules that span keys, once every layer is in.
func (c *Config) check() []error {
	var errs []error
	if c.Speculation.NgramMin > c.Speculation.NgramMax {
		errs = append(errs, &Error{
			Key:    "speculation.ngram_min",
			Source: c.Source("speculation.ngram_min"),
			Err: invalid("%d exceeds speculation.ngram_max = %d (%s)",
				c.Speculation.NgramMin, c.Speculation.NgramMax, c.Source("speculation.ngram_max")),
		})
	}
	if c.Data.Dir == "" {
		errs = append(errs, &Error{Key: "data.dir", Source: c.Source("data.dir"),
			Err: errors.New("no data folder: $HOME and $XDG_DATA_HOME are not set; set data.dir")})
	}
	return errs
}
