package checkpoints

import (
	"fmt"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
)

// bufferFiles names the file of each cache buffer. r1 buffers k_<i>/v_<i>
// become corellm-chat's k_<i>.bin/v_<i>.bin; a state buffer <chunk>/<state>
// becomes state_<chunk>_<state>.bin, any character outside [A-Za-z0-9._-]
// replaced by "-". The names are recorded in orchard.json, so readers never
// rebuild them; Save refuses names that collide (also by case, for macOS).
func bufferFiles(c *Cache) ([]string, error) {
	files := make([]string, len(c.Buffers))
	seen := map[string]string{}
	for i, b := range c.Buffers {
		var f string
		if c.Family == bundle.R1 {
			f = b.Name + ".bin"
		} else {
			chunk, state, ok := strings.Cut(b.Name, "/")
			f = "state_" + sanitize(chunk)
			if ok {
				f += "_" + sanitize(state)
			}
			f += ".bin"
		}
		if !validFileName(f) {
			return nil, fmt.Errorf("buffer %q: file name %q is not usable", b.Name, f)
		}
		key := strings.ToLower(f)
		if other, dup := seen[key]; dup {
			return nil, fmt.Errorf("buffers %q and %q would share the file %s", other, b.Name, f)
		}
		seen[key] = b.Name
		files[i] = f
	}
	return files, nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, s)
}
