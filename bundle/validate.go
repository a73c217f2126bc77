package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// validator collects every problem instead of stopping at the first, so
// one inspect shows all that is wrong with a download.
type validator struct {
	b        *Bundle
	problems []string
}

func (v *validator) fail(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// note records something that does not stop the bundle.
func (v *validator) note(format string, args ...any) {
	v.b.Notes = append(v.b.Notes, fmt.Sprintf(format, args...))
}

// file checks that rel exists with exactly want bytes (want 0: any size).
func (v *validator) file(rel, role string, want int64) bool {
	return v.fileAny(rel, role, want)
}

// fileAny accepts any of the wanted sizes (e.g. fp32 or fp16 norm weights).
func (v *validator) fileAny(rel, role string, wants ...int64) bool {
	f := File{Path: rel, Role: role}
	if len(wants) > 0 {
		f.Want = wants[0]
	}
	st, err := os.Stat(filepath.Join(v.b.Dir, rel))
	switch {
	case err != nil:
		f.Status = "missing"
		v.fail("%s (%s): missing", rel, role)
	case st.IsDir():
		f.Status = "is a folder"
		v.fail("%s (%s): is a folder, want a file", rel, role)
	case !st.Mode().IsRegular():
		f.Status = "not a file"
		v.fail("%s (%s): is not a regular file (%s)", rel, role, st.Mode().Type())
	default:
		f.Size = st.Size()
		f.Status = "ok"
		if f.Want > 0 {
			ok := false
			for _, w := range wants {
				if st.Size() == w {
					ok, f.Want = true, w
				}
			}
			if !ok {
				f.Status = "wrong size"
				f.Detail = fmt.Sprintf("want %d bytes", wants[0])
				v.fail("%s (%s): size %d bytes, want %d", rel, role, st.Size(), wants[0])
			}
		}
	}
	v.b.Files = append(v.b.Files, f)
	return f.Status == "ok"
}

// dir checks that a chunk folder exists and records its size.
func (v *validator) dir(path, role string) bool {
	rel, _ := filepath.Rel(v.b.Dir, path)
	f := File{Path: rel, Role: role}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		f.Status = "missing"
		v.fail("%s (%s): missing", rel, role)
	case !st.IsDir():
		f.Status = "not a folder"
		v.fail("%s (%s): not a folder", rel, role)
	default:
		f.Status = "ok"
		f.Size = dirSize(path)
	}
	v.b.Files = append(v.b.Files, f)
	return f.Status == "ok"
}

// readConfig reads a config file and records it.
func (v *validator) readConfig(rel string) []byte {
	data, err := readConfigFile(filepath.Join(v.b.Dir, rel))
	if err != nil {
		v.fail("%s: %s", rel, regfileReason(err))
		return nil
	}
	v.b.Files = append(v.b.Files, File{Path: rel, Role: "config", Size: int64(len(data)), Status: "ok"})
	v.b.ConfigFile = rel
	v.b.configBytes = data
	return data
}

// functions reads the functions a chunk's metadata.json lists. The list
// replaces the config's guess; a function the config names but the file
// does not list is noted (the engine then does without it), never a
// failure: metadata.json is a hint, and the loaded model decides.
func (v *validator) functions(c *Chunk) {
	m, err := ReadModelMeta(c.Path)
	if err != nil || len(m.Functions) == 0 {
		return
	}
	for _, f := range c.Functions {
		if has, _ := m.HasFunction(f); !has {
			v.note("%s: the config names function %q, but its metadata.json lists %v", c.Name, f, m.Functions)
		}
	}
	c.Functions = m.Functions
}

// bounds checks chunk bounds are contiguous over [0, layers) and that no
// chunk straddles the first shared layer.
func (v *validator) bounds(bounds [][2]int, layers, firstShared int) {
	next := 0
	for i, b := range bounds {
		if b[0] != next || b[1] <= b[0] {
			v.fail("chunk_bounds[%d] = %v: chunks must cover layers 0…%d in order", i, b, layers)
			return
		}
		if firstShared > 0 && b[0] < firstShared && b[1] > firstShared {
			v.fail("chunk_bounds[%d] = %v straddles the first KV-shared layer %d", i, b, firstShared)
		}
		next = b[1]
	}
	if next != layers {
		v.fail("chunk_bounds end at layer %d, the model has %d", next, layers)
	}
}

func dirSize(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func modTime(p string) time.Time {
	st, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// union merges id lists keeping first-seen order.
func union(lists ...[]int) []int {
	seen := map[int]bool{}
	var out []int
	for _, l := range lists {
		for _, id := range l {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}
