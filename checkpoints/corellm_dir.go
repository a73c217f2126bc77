package checkpoints

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
)

// statSize is a size function over a folder.
func statSize(dir string) func(string) (int64, error) {
	return func(name string) (int64, error) {
		st, err := os.Stat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return 0, errors.New("missing")
		}
		if err != nil {
			return 0, err
		}
		if !st.Mode().IsRegular() {
			return 0, errors.New("not a regular file")
		}
		return st.Size(), nil
	}
}

// ReadCoreLLM reads a corellm-chat --kv-save directory (or the folder of an
// r1 checkpoint, which is one) and runs corellm-chat's import checks, in
// its order: schemaVersion, identity (against want, unless nil), layer
// count, per layer head dim, rows and file sizes; plus the token hash. A
// bundleName difference is not an error (corellm-chat only warns); the
// caller compares Manifest.BundleName. Nothing is returned on failure.
// If a WriteCoreLLM to dir was interrupted while the previous directory
// was set aside, that directory is first put back.
func ReadCoreLLM(dir string, want *CoreLLMIdentity) (*CoreLLM, error) {
	recoverCoreLLMDir(dir)
	fail := func(e *FileError) error { e.Dir = dir; return e }
	data, err := readSmall(filepath.Join(dir, coreLLMManifest))
	if err != nil {
		return nil, fail(&FileError{File: coreLLMManifest, Reason: err.Error(), Err: ErrCorrupt})
	}
	m, err := parseCoreLLMManifest(data)
	if err != nil {
		return nil, fail(&FileError{File: coreLLMManifest, Reason: err.Error(), Err: ErrCorrupt})
	}
	if e := m.checkVersion(); e != nil {
		return nil, fail(e)
	}
	if want != nil {
		if d := m.Identity.diff(want); len(d) > 0 {
			return nil, &IdentityError{Name: dir, Made: fmt.Sprintf("%q (r1, convert_config.json sha256 %s)", m.BundleName, short(m.Identity.ConvertConfigSHA256)),
				Loaded: fmt.Sprintf("(r1, convert_config.json sha256 %s)", short(want.ConvertConfigSHA256)), Diffs: d}
		}
	}
	if e := m.checkLayout(statSize(dir)); e != nil {
		return nil, fail(e)
	}
	c := &CoreLLM{Manifest: *m, Cache: Cache{Family: bundle.R1, Position: m.Position}}
	bufs := make([]Buffer, 2*len(m.Layers))
	errs := make([]error, len(bufs))
	parallel(len(bufs), func(i int) {
		l := m.Layers[i/2]
		name, file, n := "k", l.KFile, l.KBytes
		if i%2 == 1 {
			name, file, n = "v", l.VFile, l.VBytes
		}
		data, err := readExactly(filepath.Join(dir, file), n)
		if err != nil {
			errs[i] = fail(&FileError{File: file, Reason: err.Error(), Err: ErrCorrupt})
			return
		}
		bufs[i] = Buffer{Name: fmt.Sprintf("%s_%d", name, l.Layer), Shape: []int{l.Rows, l.HeadDim}, DType: coreml.Float16, Data: data}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c.Cache.Buffers = bufs
	return c, nil
}

// Tokens returns the committed tokens and the pending one.
func (c *CoreLLM) Tokens() ([]int, *int) {
	return c.Manifest.ProcessedTokens, c.Manifest.PendingNextToken
}

// WriteCoreLLM writes an r1 checkpoint as a corellm-chat --kv-save
// directory: manifest.json and k_<i>.bin/v_<i>.bin, nothing else. The
// directory is written beside dir and swapped in as the store does, so an
// interrupted write leaves the previous directory; an existing dir must
// be empty or a corellm-chat KV directory (nothing else is replaced). The
// conversation is not part of the format.
func WriteCoreLLM(dir string, cp *Checkpoint) error {
	c := *cp
	if c.Cache.Family != bundle.R1 {
		return fmt.Errorf("write %s: %w: corellm-chat KV directories hold r1 caches, not %s", dir, ErrInvalid, c.Cache.Family)
	}
	if err := c.check(true); err != nil {
		return fmt.Errorf("write %s: %w: %v", dir, ErrInvalid, err)
	}
	c.Meta.fillDefaults(time.Now())
	dir = filepath.Clean(dir)
	recoverCoreLLMDir(dir)
	if err := replaceableKVDir(dir); err != nil {
		return err
	}
	parent, base := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	jobs, err := coreLLMJobs(&c)
	if err != nil {
		return err
	}
	if _, err := writeFiles(tmp, jobs, true); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := replaceDir(tmp, dir, coreLLMAside(dir), true, true, nil); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	return nil
}

// coreLLMJobs lists the files of an r1 checkpoint in corellm-chat's
// layout: k_<i>.bin, v_<i>.bin per own layer, then manifest.json.
func coreLLMJobs(cp *Checkpoint) ([]fileJob, error) {
	m := coreLLMManifestOf(cp)
	data, err := m.encode()
	if err != nil {
		return nil, err
	}
	have := map[string][]byte{}
	for _, b := range cp.Cache.Buffers {
		have[b.Name] = b.Data
	}
	var jobs []fileJob
	for _, l := range m.Layers {
		jobs = append(jobs, fileJob{l.KFile, have[fmt.Sprintf("k_%d", l.Layer)]}, fileJob{l.VFile, have[fmt.Sprintf("v_%d", l.Layer)]})
	}
	return append(jobs, fileJob{coreLLMManifest, data}), nil
}

// coreLLMAside is where WriteCoreLLM parks the previous directory.
func coreLLMAside(dir string) string {
	parent, base := filepath.Split(dir)
	return filepath.Join(parent, "."+base+".old")
}

// recoverCoreLLMDir undoes or finishes a WriteCoreLLM a crash interrupted.
func recoverCoreLLMDir(dir string) {
	aside := coreLLMAside(filepath.Clean(dir))
	if _, err := os.Lstat(aside); err == nil {
		recoverAside(aside, filepath.Clean(dir))
	}
}

// replaceableKVDir refuses to replace anything but a missing or empty
// folder or a corellm-chat KV directory.
func replaceableKVDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if n == coreLLMManifest || isLayerFile(n) {
			continue
		}
		return fmt.Errorf("write %s: %w: it holds %s, so it is not a corellm-chat KV directory; refusing to replace it", dir, ErrExists, n)
	}
	return nil
}

// isLayerFile matches k_<n>.bin and v_<n>.bin.
func isLayerFile(n string) bool {
	rest, ok := strings.CutSuffix(n, ".bin")
	if !ok || len(rest) < 3 || (rest[0] != 'k' && rest[0] != 'v') || rest[1] != '_' {
		return false
	}
	_, err := strconv.Atoi(rest[2:])
	return err == nil
}
