package config

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/orchard-llm/orchard/regfile"
)

// maxLogSize is where OpenLog starts a fresh log, keeping one old one, so
// a long-lived --debug habit cannot fill the disk.
const maxLogSize = 16 << 20

// OpenLog opens <dataDir>/logs/orchard.log (0600, its folder 0700) for
// appending and returns a text logger over it: Info and above, Debug too
// when debug is set. Nothing goes to stderr, which belongs to the TUI.
// Close the Closer when the program ends.
func OpenLog(dataDir string, debug bool) (*slog.Logger, io.Closer, error) {
	if dataDir == "" {
		return nil, nil, fmt.Errorf("log: no data folder")
	}
	dir := filepath.Join(dataDir, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("log: %w", err)
	}
	path := filepath.Join(dir, "orchard.log")
	if st, err := os.Stat(path); err == nil && st.Size() > maxLogSize {
		os.Rename(path, path+".1") // best effort; appending to the big file is the fallback
	}
	f, err := regfile.OpenAppend(path, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("log: %w", err)
	}
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level})), f, nil
}
