package checkpoints

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/orchard-llm/orchard/bundle"
)

var (
	// ErrNotFound: no checkpoint of that name.
	ErrNotFound = errors.New("no such checkpoint")
	// ErrExists: the target name is taken (rename, import).
	ErrExists = errors.New("checkpoint already exists")
	// ErrInvalidName: the name breaks the naming rules (see CheckName).
	ErrInvalidName = errors.New("invalid checkpoint name")
	// ErrCorrupt: a file is damaged, truncated, missing or inconsistent.
	ErrCorrupt = errors.New("checkpoint is damaged")
	// ErrNewerVersion: written by a newer orchard with a schema this one
	// cannot read.
	ErrNewerVersion = errors.New("checkpoint schema is newer than this orchard")
	// ErrInvalid: a checkpoint handed to Save or WriteCoreLLM is
	// inconsistent (a programming error in the caller, not a disk problem).
	ErrInvalid = errors.New("inconsistent checkpoint")
	// ErrDiskFull: a write failed for want of space (or of quota).
	ErrDiskFull = errors.New("the disk is full")
)

// DiskFullError is a write that failed for want of space: one sentence
// naming the folder and what to do, rather than every file that could not
// be written. Nothing was changed: what was there before is intact. It
// wraps ErrDiskFull and the first error.
type DiskFullError struct {
	Dir string
	Err error
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("the disk holding %s is full: free some space there and try again (nothing was changed)", e.Dir)
}

func (e *DiskFullError) Unwrap() []error { return []error{ErrDiskFull, e.Err} }

// diskFull returns a *DiskFullError about dir when err is a write that
// failed for want of space.
func diskFull(dir string, err error) (*DiskFullError, bool) {
	var full *DiskFullError
	if err == nil || errors.As(err, &full) || !(errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) {
		return nil, false
	}
	return &DiskFullError{Dir: dir, Err: err}, true
}

// FileError is a refused file: it names the checkpoint (or directory),
// the file and the reason, and wraps ErrCorrupt or ErrNewerVersion.
type FileError struct {
	Name   string // the checkpoint's name; "" for a directory outside the store
	Dir    string
	File   string // base name within Dir
	Reason string
	Err    error
}

func (e *FileError) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("checkpoint %q: %s: %s", e.Name, e.File, e.Reason)
	}
	return fmt.Sprintf("%s: %s", filepath.Join(e.Dir, e.File), e.Reason)
}

func (e *FileError) Unwrap() error { return e.Err }

// IdentityError refuses a checkpoint made with another bundle. It names
// the bundle the checkpoint was made with (as recorded in it) and the
// loaded one, and lists what differs.
type IdentityError struct {
	Name   string // the checkpoint's name, or its directory
	Made   string // the bundle it was made with
	Loaded string // the bundle now loaded (see DescribeBundle)
	Diffs  []string
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("checkpoint %q was made with bundle %s, not with the loaded bundle %s (%s)",
		e.Name, e.Made, e.Loaded, strings.Join(e.Diffs, "; "))
}

// DescribeBundle names a bundle for messages: its name (when known), its
// family, its config file and the start of its identity hash. Load knows
// only the loaded bundle's identity; a caller that knows its name may set
// IdentityError.Loaded = DescribeBundle(name, identity).
func DescribeBundle(name string, id bundle.Identity) string {
	s := fmt.Sprintf("%s %s, id %s", id.Family, id.ConfigFile, short(id.ID))
	if name != "" {
		return fmt.Sprintf("%q (%s)", name, s)
	}
	return "(" + s + ")"
}

// checkIdentity compares the identity a checkpoint was made with to the
// loaded bundle's.
func checkIdentity(name, bundleName string, have, want bundle.Identity) error {
	if have.ID == want.ID && have.ConfigSHA256 == want.ConfigSHA256 && bundle.SameCache(have.Family, want.Family) {
		return nil
	}
	var diffs []string
	if !bundle.SameCache(have.Family, want.Family) {
		diffs = append(diffs, fmt.Sprintf("family %s ≠ %s", have.Family, want.Family))
	}
	if have.ConfigSHA256 != want.ConfigSHA256 {
		diffs = append(diffs, fmt.Sprintf("%s sha256 %s ≠ %s", want.ConfigFile, short(have.ConfigSHA256), short(want.ConfigSHA256)))
	}
	if len(diffs) == 0 {
		diffs = append(diffs, "geometry differs")
	}
	return &IdentityError{Name: name, Made: DescribeBundle(bundleName, have), Loaded: DescribeBundle("", want), Diffs: diffs}
}
