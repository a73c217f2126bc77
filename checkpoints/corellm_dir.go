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
	"github.com/orchard-llm/orchard/regfile"
)

// statSize is a size function over a folder.
func statSize(dir string) func(string) (int64, error) {
	return func(name string) (int64, error) {
		f, err := regfile.Open(filepath.Join(dir, name))
		if err != nil {
			return 0, errors.New(regfile.Reason(err))
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return 0, err
		}
		return st.Size(), nil
	}
}

// ReadCoreLLM reads a corellm-chat --kv-save directory (or the folder of an
// r1 checkpoint, which is one) and runs corellm-chat's import checks, in
// its order: schemaVersion, identity (against want, unless nil), layer
// count, per layer head dim, rows and file sizes; plus the token hash. A
// bundleName difference is not an error (corellm-chat only warns); the
// caller compares Manifest.BundleName. Nothing is returned on failure,
// and nothing on disk is changed: if dir is missing because a
// WriteCoreLLM was interrupted, the error names the folder it set aside.
func ReadCoreLLM(dir string, want *CoreLLMIdentity) (*CoreLLM, error) {
	fail := func(e *FileError) error { e.Dir = dir; return e }
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if asides := coreLLMAsides(dir); len(asides) > 0 {
			return nil, fmt.Errorf("%s: missing; an interrupted --kv-save left its previous contents in %s (rename it back to use it)", dir, asides[len(asides)-1])
		}
		return nil, fmt.Errorf("%s: missing", dir)
	}
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
func WriteCoreLLM(dir string, cp *Checkpoint) (err error) {
	defer func() {
		if full, ok := diskFull(filepath.Dir(filepath.Clean(dir)), err); ok {
			err = fmt.Errorf("write %s: %w", dir, full)
		}
	}()
	c := *cp
	if c.Cache.Family != bundle.R1 {
		return fmt.Errorf("write %s: %w: corellm-chat KV directories hold r1 caches, not %s", dir, ErrInvalid, c.Cache.Family)
	}
	if err := c.check(true); err != nil {
		return fmt.Errorf("write %s: %w: %v", dir, ErrInvalid, err)
	}
	c.Meta.fillDefaults(time.Now())
	if dir, err = kvDirPath(dir); err != nil {
		return err
	}
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

// coreLLMAside is where one WriteCoreLLM parks the previous directory: a
// name of its own, so that it never removes what another left.
func coreLLMAside(dir string) string {
	parent, base := filepath.Split(dir)
	return filepath.Join(parent, "."+base+asideInfix+randomSuffix())
}

const asideInfix = ".orchard-old-"

// coreLLMAsides lists the asides interrupted writes of dir left, oldest
// name first.
func coreLLMAsides(dir string) []string {
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	m, _ := filepath.Glob(filepath.Join(parent, "."+globEscape(base)+asideInfix+"*"))
	return m
}

func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

// kvDirPath makes dir absolute and refuses folders a whole-folder swap
// must not touch: the file system root, the current folder and those
// holding it (renaming them aside would pull the folder out from under
// the shell that runs orchard).
func kvDirPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", dir, err)
	}
	refuse := func(what string) error {
		return fmt.Errorf("write %s: it is %s; orchard replaces a KV folder whole, so name a folder of its own, such as %s",
			dir, what, filepath.Join(dir, "kv"))
	}
	if filepath.Dir(abs) == abs {
		return "", refuse("the root of the file system")
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(abs, wd); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
			return "", refuse("the current folder or holds it")
		}
	}
	return abs, nil
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
