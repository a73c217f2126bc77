package config

import (
	"errors"
	"path/filepath"
	"strings"
)

// home returns $HOME from env; orchard reads everything through env so
// tests and callers decide what the process sees.
func home(env func(string) string) (string, error) {
	if h := env("HOME"); h != "" {
		return h, nil
	}
	return "", errors.New("cannot find the home folder: $HOME is not set")
}

// xdgHome returns $name when it is an absolute path (the XDG base
// directory spec says to ignore relative ones), else $HOME/fallback.
func xdgHome(env func(string) string, name, fallback string) (string, error) {
	if d := env(name); filepath.IsAbs(d) {
		return d, nil
	}
	h, err := home(env)
	if err != nil {
		return "", err
	}
	return filepath.Join(h, fallback), nil
}

// DefaultFile is the config file read when neither --config nor
// ORCHARD_CONFIG names one: $XDG_CONFIG_HOME/orchard/config.toml, by
// default ~/.config/orchard/config.toml.
func DefaultFile(env func(string) string) (string, error) {
	d, err := xdgHome(env, "XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "orchard", "config.toml"), nil
}

// DataDir is the default data folder: $XDG_DATA_HOME/orchard, by default
// ~/.local/share/orchard.
func DataDir(env func(string) string) (string, error) {
	d, err := xdgHome(env, "XDG_DATA_HOME", filepath.Join(".local", "share"))
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "orchard"), nil
}

// expandPath replaces a leading ~ with the home folder and resolves a
// relative path against base (the config file's folder; "" keeps it
// relative to the working folder, as for flags).
func expandPath(p, homeDir, base string) string {
	switch {
	case p == "":
		return ""
	case p == "~" && homeDir != "":
		return homeDir
	case strings.HasPrefix(p, "~/") && homeDir != "":
		return filepath.Join(homeDir, p[2:])
	case base != "" && !filepath.IsAbs(p):
		return filepath.Join(base, p)
	}
	return p
}

// tildePath is the inverse of expandPath for display: a path below the
// home folder is written ~/…, so a written config file stays portable.
func tildePath(p, homeDir string) string {
	if homeDir == "" {
		return p
	}
	if rel, err := filepath.Rel(homeDir, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel) {
		if rel == "." {
			return "~"
		}
		return "~/" + filepath.ToSlash(rel)
	}
	return p
}
