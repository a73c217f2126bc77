package config

import (
	"flag"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Flags are the command-line flags of every key, plus --config. Register
// them, parse the FlagSet, then pass them to Load, which applies the ones
// the user set over the file and the environment.
type Flags struct {
	file string
	set  []flagUse // in command-line order, so the last use wins
}

type flagUse struct {
	s     *setting // nil for --key
	name  string
	value string
}

// RegisterFlags adds --config and the flags of the keys named in only
// (e.g. "model.search_dirs", "keys"), or of every key when only is empty.
func RegisterFlags(fs *flag.FlagSet, only ...string) *Flags {
	f := &Flags{}
	want := func(key string) bool { return len(only) == 0 || slices.Contains(only, key) }
	fs.StringVar(&f.file, "config", "", "config `file` (default $XDG_CONFIG_HOME/orchard/config.toml, or $"+ConfigEnv+")")
	for _, s := range settings() {
		if want(s.key) {
			fs.Var(&flagValue{f: f, s: &s, name: s.flag}, s.flag, s.doc)
		}
		if s.key == "speculation.mode" && want(s.key) {
			// orchard run's and corellm-chat's switches
			fs.Var(&flagValue{f: f, s: &s, name: "no-spec", fixed: string(SpecOff)}, "no-spec", "same as --spec off")
			fs.Var(&flagValue{f: f, s: &s, name: "no-mtp", fixed: string(SpecOff)}, "no-mtp", "same as --spec off (corellm-chat's name)")
		}
	}
	if want(keysKey) {
		fs.Var(&flagValue{f: f, name: "key"}, "key", "key binding override ACTION=KEY[,KEY…] (repeatable)")
	}
	return f
}

// File is the --config value, "" if not given.
func (f *Flags) File() string { return f.file }

// apply sets c from the flags the user gave, last use winning; list flags
// (--models-dir) and --key accumulate.
func (f *Flags) apply(c *Config, homeDir string, actions []string) []error {
	pc := pathCtx{home: homeDir}
	var errs []error
	lists := map[string][]string{}
	for _, u := range f.set {
		src := Source{Kind: FromFlag, Name: u.name}
		if u.s == nil {
			if err := c.setBindingsText(u.value, src, actions); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		v := u.value
		if u.s.list {
			lists[u.s.key] = append(lists[u.s.key], v)
			v = strings.Join(lists[u.s.key], string(filepath.ListSeparator))
		}
		if err := u.s.set(c, text(v), pc); err != nil {
			errs = append(errs, &Error{Key: u.s.key, Source: src, Err: err})
			continue
		}
		c.sources[u.s.key] = src
	}
	return errs
}

// flagValue records a use of a config flag; Load parses it, so a bad value
// is reported like any other source, naming the flag and the key.
type flagValue struct {
	f     *Flags
	s     *setting // nil for --key
	name  string
	fixed string // for a switch such as --no-spec: the value it sets
}

func (v *flagValue) String() string { return "" }

func (v *flagValue) Set(s string) error {
	if v.fixed != "" {
		on, err := strconv.ParseBool(s)
		if err != nil || !on {
			return err
		}
		s = v.fixed
	}
	v.f.set = append(v.f.set, flagUse{s: v.s, name: v.name, value: s})
	return nil
}

// IsBoolFlag lets --thinking, --debug and --no-spec stand alone.
func (v *flagValue) IsBoolFlag() bool { return v.fixed != "" || v.s != nil && v.s.isBool }
