package config

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/orchard-llm/orchard/atomicfile"
)

// writeAtomic replaces path with data atomically (package atomicfile).
// Without overwrite, an existing path is an error wrapping fs.ErrExist.
func writeAtomic(path string, data []byte, overwrite bool) error {
	if !overwrite {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("%s: %w (use --force to replace it)", path, fs.ErrExist)
		}
	}
	return atomicfile.Write(path, data)
}
