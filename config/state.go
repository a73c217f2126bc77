package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/orchard-llm/orchard/regfile"
)

// state is what orchard remembers between runs, in <data>/state.json.
type state struct {
	Model        string `json:"model,omitempty"`        // the bundle chosen in the picker
	Demo         string `json:"demo,omitempty"`         // or the demo's family, when the demo was chosen
	Conversation string `json:"conversation,omitempty"` // the bundle of the last conversation (the autosave)
}

// maxStateBytes bounds state.json, two paths.
const maxStateBytes = 1 << 20

// StateFile is where the remembered choices live.
func (c *Config) StateFile() string { return filepath.Join(c.Data.Dir, "state.json") }

// RememberModel records the bundle the user chose, as an absolute path, so
// the next run can offer it first.
func (c *Config) RememberModel(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("remember model: %w", err)
	}
	return c.updateState("remember model", func(st *state) { st.Model, st.Demo = abs, "" })
}

// RememberDemo records that the user chose the demo bundle of family: the
// demo is made again wherever and whenever it is needed, so its family is
// remembered rather than a folder of the cache.
func (c *Config) RememberDemo(family string) error {
	return c.updateState("remember the demo", func(st *state) { st.Model, st.Demo = "", family })
}

// RememberConversation records the bundle the last conversation (the
// autosave) was held with, so --continue opens it without asking.
func (c *Config) RememberConversation(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("remember the conversation's bundle: %w", err)
	}
	return c.updateState("remember the conversation's bundle", func(st *state) { st.Conversation = abs })
}

// RememberedConversation returns the bundle passed to
// RememberConversation last, or "". The path may no longer exist.
func (c *Config) RememberedConversation() (string, error) {
	st, err := c.readState()
	if err != nil {
		return "", err
	}
	return st.Conversation, nil
}

// updateState changes what state.json remembers.
func (c *Config) updateState(what string, set func(*state)) error {
	st, err := c.readState()
	if err != nil {
		st = state{} // a broken state file is replaced, not a reason to refuse the choice
	}
	set(&st)
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := writeAtomic(c.StateFile(), append(data, '\n'), true); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Remembered returns the bundle last passed to RememberModel, or "" when
// there is none. The path may no longer exist; the caller checks.
func (c *Config) Remembered() (string, error) {
	st, err := c.readState()
	if err != nil {
		return "", err
	}
	return st.Model, nil
}

// RememberedDemo returns the family passed to RememberDemo when the demo
// was the last choice, else "".
func (c *Config) RememberedDemo() (string, error) {
	st, err := c.readState()
	if err != nil {
		return "", err
	}
	return st.Demo, nil
}

func (c *Config) readState() (state, error) {
	var st state
	data, err := regfile.ReadFile(c.StateFile(), maxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("state: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("state %s: %w", c.StateFile(), err)
	}
	return st, nil
}
