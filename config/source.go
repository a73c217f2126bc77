package config

import (
	"errors"
	"fmt"
)

// SourceKind says which layer set a value.
type SourceKind uint8

const (
	FromDefault SourceKind = iota // built into orchard
	FromFile                      // the config file
	FromEnv                       // an environment variable
	FromFlag                      // a command-line flag
)

func (k SourceKind) String() string {
	switch k {
	case FromFile:
		return "file"
	case FromEnv:
		return "env"
	case FromFlag:
		return "flag"
	}
	return "default"
}

// Source is where a value came from: the default, a line of the config
// file, an environment variable or a flag.
type Source struct {
	Kind SourceKind
	Name string // file path, variable name or flag name (without dashes)
	Line int    // config file line, 1-based
	Note string // e.g. how a published runtime's variable was translated
}

// String reads "default", "/path/config.toml:12", "env ORCHARD_X" or
// "flag --x", followed by the note in parentheses.
func (s Source) String() string {
	var t string
	switch s.Kind {
	case FromFile:
		t = s.Name
		if s.Line > 0 {
			t = fmt.Sprintf("%s:%d", s.Name, s.Line)
		}
	case FromEnv:
		t = "env " + s.Name
	case FromFlag:
		t = "flag --" + s.Name
	default:
		t = "default"
	}
	if s.Note != "" {
		t += " (" + s.Note + ")"
	}
	return t
}

// Errors wrapped by *Error, for errors.Is.
var (
	ErrUnknownKey = errors.New("unknown key")
	ErrWrongType  = errors.New("wrong type")
	ErrInvalid    = errors.New("invalid value")
)

// Error is a configuration value orchard cannot use. It names the key and
// where the value came from, so the user knows what to fix and where.
type Error struct {
	Key    string
	Source Source
	Err    error
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Source, cutKey(e.Key), e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// wrongType says what a key wanted and what it got.
func wrongType(want string, got any) error {
	return fmt.Errorf("%w: want %s, got %s", ErrWrongType, want, describe(got))
}

// invalid reports a well-typed value outside what the key accepts.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
