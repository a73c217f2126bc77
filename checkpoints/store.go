package checkpoints

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orchard-llm/orchard/bundle"
)

// Store is a folder of checkpoints, one subfolder each. Any number of
// Stores, goroutines and processes may use one root: writers build a
// checkpoint in a locked temp folder and swap it in under the root's
// exclusive flock; readers open a checkpoint's files under the shared
// lock, so they see the old checkpoint or the new one, never a gap.
type Store struct {
	root   string
	nosync bool                    // benchmarks only: measure the copy without fsync
	fail   func(step string) error // tests only: fail a write at "files" or "swap"

	mu      sync.Mutex
	notices []string // what recovery did that the user should hear of
}

// inject returns the test failure for a step, if any.
func (s *Store) inject(step string) error {
	if s.fail == nil {
		return nil
	}
	return s.fail(step)
}

// Open opens the store at root, creating it (0700) if needed, and
// recovers from interrupted writes: a replacement cut short is finished
// or undone and abandoned temp folders are removed.
func Open(root string) (*Store, error) {
	if root == "" {
		return nil, errors.New("checkpoints: no store folder given")
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	s := &Store{root: root}
	if err := s.recover(); err != nil {
		return nil, err
	}
	return s, nil
}

// Root is the store's folder.
func (s *Store) Root() string { return s.root }

// Info is one checkpoint as List shows it, read from orchard.json alone.
type Info struct {
	Name     string        `json:"name"`
	Created  time.Time     `json:"created"`
	Turns    int           `json:"turns"` // user messages
	Tokens   int           `json:"tokens"`
	Bytes    int64         `json:"bytes"` // on disk
	Bundle   string        `json:"bundle"`
	BundleID string        `json:"bundle_id"`
	Family   bundle.Family `json:"family"`
	// Media counts the images and clips of the conversation; Thumbnail is
	// the first image's (PNG), for the chat's panel.
	Media     int    `json:"media,omitempty"`
	Thumbnail []byte `json:"-"`
	// Problem is set, and the figures are zero, when orchard.json cannot
	// be read; the checkpoint can still be deleted or renamed.
	Problem string `json:"problem,omitempty"`
}

// Save writes cp under cp.Meta.Name, replacing a checkpoint of that name.
// A crash or an error at any point leaves the previous checkpoint intact
// (or the new one complete) and nothing half-written visible. Save fills
// in cp.Meta's defaults (Created, OS, OrchardVersion) and computed fields;
// it does not keep references to cp's buffers.
func (s *Store) Save(cp *Checkpoint) error {
	name := normName(cp.Meta.Name)
	if err := checkName(name, false); err != nil {
		return err
	}
	return s.save(cp, name)
}

// SaveAutosave saves cp under the reserved name Autosave, whatever
// cp.Meta.Name says.
func (s *Store) SaveAutosave(cp *Checkpoint) error { return s.save(cp, Autosave) }

func (s *Store) save(cp *Checkpoint, name string) (err error) {
	defer func() {
		if full, ok := diskFull(s.root, err); ok {
			err = fmt.Errorf("save %q: %w", name, full)
		}
	}()
	c := *cp
	if err := c.check(true); err != nil {
		return fmt.Errorf("save %q: %w: %v", name, ErrInvalid, err)
	}
	files, err := bufferFiles(&c.Cache)
	if err != nil {
		return fmt.Errorf("save %q: %w: %v", name, ErrInvalid, err)
	}
	c.Meta.fillDefaults(time.Now())
	c.Meta.SchemaVersion = SchemaVersion
	c.Meta.TokenSHA256 = TokenSHA256(c.Tokens)
	c.Meta.CacheBytes = c.Cache.Bytes()
	jobs := make([]fileJob, len(c.Cache.Buffers))
	for i, b := range c.Cache.Buffers {
		jobs[i] = fileJob{files[i], b.Data}
	}
	if c.Cache.Family == bundle.R1 {
		m := coreLLMManifestOf(&c)
		data, err := m.encode()
		if err != nil {
			return fmt.Errorf("save %q: %w", name, err)
		}
		jobs = append(jobs, fileJob{coreLLMManifest, data})
	}

	t, err := s.newTemp()
	if err != nil {
		return fmt.Errorf("save %q: %w", name, err)
	}
	defer t.close()
	sums, err := writeFiles(t.path, jobs, !s.nosync)
	if err != nil {
		return fmt.Errorf("save %q: %w", name, err)
	}
	if err := s.inject("files"); err != nil {
		return fmt.Errorf("save %q: %w", name, err)
	}
	c.Meta.Files = sums
	meta, err := encodeMeta(&c, files)
	if err != nil {
		return fmt.Errorf("save %q: %w", name, err)
	}
	// orchard.json last: a folder that has it is complete.
	if _, err := writeFile(filepath.Join(t.path, metaFile), meta, !s.nosync); err != nil {
		return fmt.Errorf("save %q: %w", name, err)
	}
	if !s.nosync {
		if err := syncDir(t.path); err != nil {
			return fmt.Errorf("save %q: %w", name, err)
		}
	}
	if err := s.commit(t, name, true); err != nil {
		return fmt.Errorf("save %q: %w", name, err)
	}
	c.Meta.Bytes = int64(len(meta))
	for _, f := range sums {
		c.Meta.Bytes += f.Bytes
	}
	c.Meta.Name = name
	if name == Autosave {
		c.Meta.Name = cp.Meta.Name
	}
	cp.Meta = c.Meta
	return nil
}

// tempDir is a folder being written, locked so that recovery in another
// process leaves it alone.
type tempDir struct {
	path string // "" once committed
	lock *os.File
}

func (s *Store) newTemp() (*tempDir, error) {
	// The shared store lock keeps recovery out until the folder is locked.
	release, err := lockStore(s.root, false)
	if err != nil {
		return nil, err
	}
	defer release()
	p, err := os.MkdirTemp(s.root, tempPrefix)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		os.RemoveAll(p)
		return nil, err
	}
	if ok, err := tryLockDir(f); !ok {
		f.Close()
		os.RemoveAll(p)
		return nil, fmt.Errorf("lock %s: %v", p, err)
	}
	return &tempDir{path: p, lock: f}, nil
}

func (t *tempDir) close() {
	if t.path != "" {
		os.RemoveAll(t.path)
	}
	t.lock.Close()
}

// commit moves a finished temp folder into place as name.
func (s *Store) commit(t *tempDir, name string, replace bool) error {
	release, err := s.lockWrite()
	if err != nil {
		return err
	}
	defer release()
	folder := s.locate(name)
	var ino uint64
	if st, err := os.Lstat(t.path); err == nil {
		ino = inodeOf(st)
	}
	err = replaceDir(t.path, filepath.Join(s.root, folder), filepath.Join(s.root, asideName(folder, ino)), replace, !s.nosync,
		func() error { return s.inject("swap") })
	if errors.Is(err, ErrExists) {
		return fmt.Errorf("%w: %q", ErrExists, name)
	}
	if err == nil {
		t.path = ""
	}
	return err
}

// Load reads a checkpoint and verifies all of it before returning:
// orchard.json's schema version and checksum, the bundle identity against
// want (a checkpoint of another bundle is an *IdentityError), every file's
// size and sha256, the token hash, and for r1 that manifest.json agrees.
// Refusals are *FileError values naming the file and the reason. Load
// changes nothing on disk.
func (s *Store) Load(name string, want bundle.Identity) (*Checkpoint, error) {
	snap, err := s.open(name, true)
	if err != nil {
		return nil, err
	}
	defer snap.close()
	cp := snap.rec.cp
	if err := checkIdentity(name, cp.Meta.BundleName, cp.Meta.Identity, want); err != nil {
		return nil, err
	}
	data, err := snap.readFiles(true)
	if err != nil {
		return nil, err
	}
	for i := range cp.Cache.Buffers {
		cp.Cache.Buffers[i].Data = data[snap.rec.bufFiles[i]]
	}
	return cp, nil
}

// Verify checks a checkpoint as Load does, except the bundle identity.
func (s *Store) Verify(name string) error {
	snap, err := s.open(name, true)
	if err != nil {
		return err
	}
	defer snap.close()
	_, err = snap.readFiles(false)
	return err
}

// Show returns a checkpoint's metadata, conversation and tokens and its
// cache index (buffers without data), from orchard.json alone.
func (s *Store) Show(name string) (*Checkpoint, error) {
	snap, err := s.open(name, false)
	if err != nil {
		return nil, err
	}
	snap.close()
	return snap.rec.cp, nil
}

// List returns every checkpoint, newest first, reading only orchard.json
// of each. Folders that are not checkpoints are skipped.
func (s *Store) List() ([]Info, error) {
	release, err := s.lockRead()
	if err != nil {
		return nil, err
	}
	defer release()
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return nil, fmt.Errorf("checkpoints %s: %w", s.root, err)
	}
	var out []Info
	for _, e := range ents {
		name, ok := nameOf(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		info := Info{Name: name}
		rec, err := readMeta(filepath.Join(s.root, e.Name()))
		if err != nil {
			var fe *FileError
			if errors.As(err, &fe) {
				info.Problem = fe.File + ": " + fe.Reason
			} else {
				info.Problem = err.Error()
			}
			out = append(out, info)
			continue
		}
		cp := rec.cp
		info.Created, info.Turns, info.Tokens, info.Bytes = cp.Meta.Created, cp.Conversation.Turns(), len(cp.Tokens), cp.Meta.Bytes
		info.Media, info.Thumbnail = cp.Conversation.MediaCount()
		info.Bundle, info.BundleID, info.Family = cp.Meta.BundleName, cp.Meta.Identity.ID, cp.Cache.Family
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b Info) int {
		return cmp.Or(b.Created.Compare(a.Created), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}

// Delete removes a checkpoint. It disappears at once (one rename); its
// files are removed after.
func (s *Store) Delete(name string) error {
	name = normName(name)
	if err := checkName(name, true); err != nil {
		return err
	}
	release, err := s.lockWrite()
	if err != nil {
		return err
	}
	dest := filepath.Join(s.root, s.locate(name))
	if _, err := os.Lstat(dest); err != nil {
		release()
		return s.notFound(name, err)
	}
	gone := filepath.Join(s.root, tempPrefix+randomSuffix())
	if err := os.Rename(dest, gone); err != nil {
		release()
		return fmt.Errorf("delete %q: %w", name, err)
	}
	err = s.syncRoot()
	release()
	// A crash before this leaves a temp folder that the next Open removes.
	return errors.Join(err, os.RemoveAll(gone))
}

// Rename gives a checkpoint a new name; it refuses to overwrite one. The
// autosave may be renamed (to keep it), but nothing may be renamed to it.
func (s *Store) Rename(oldName, newName string) error {
	oldName, newName = normName(oldName), normName(newName)
	if err := checkName(oldName, true); err != nil {
		return err
	}
	if err := checkName(newName, false); err != nil {
		return err
	}
	release, err := s.lockWrite()
	if err != nil {
		return err
	}
	defer release()
	from, to := filepath.Join(s.root, s.locate(oldName)), filepath.Join(s.root, s.locate(newName))
	if _, err := os.Lstat(from); err != nil {
		return s.notFound(oldName, err)
	}
	if from == to {
		return nil
	}
	if _, err := os.Lstat(to); err == nil {
		return fmt.Errorf("rename %q: %w: %q", oldName, ErrExists, newName)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rename %q: %w", oldName, err)
	}
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("rename %q: %w", oldName, err)
	}
	return s.syncRoot()
}

func (s *Store) notFound(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w named %q in %s", ErrNotFound, name, s.root)
	}
	return fmt.Errorf("checkpoint %q: %w", name, err)
}

func (s *Store) syncRoot() error {
	if s.nosync {
		return nil
	}
	return syncDir(s.root)
}

func randomSuffix() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
