package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// state is what orchard remembers between runs, in <data>/state.json.
type state struct {
	Model string `json:"model,omitempty"` // the bundle chosen in the picker
}

// StateFile is where the remembered choices live.
func (c *Config) StateFile() string { return filepath.Join(c.Data.Dir, "state.json") }

// RememberModel records the bundle the user chose, as an absolute path, so
// the next run can offer it first.
func (c *Config) RememberModel(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("remember model: %w", err)
	}
	st, err := c.readState()
	if err != nil {
		st = state{} // a broken state file is replaced, not a reason to refuse the choice
	}
	st.Model = abs
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("remember model: %w", err)
	}
	if err := writeAtomic(c.StateFile(), append(data, '\n'), true); err != nil {
		return fmt.Errorf("remember model: %w", err)
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

func (c *Config) readState() (state, error) {
	var st state
	data, err := os.ReadFile(c.StateFile())
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
