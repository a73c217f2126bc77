package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/orchard-llm/orchard/reference"
)

// templates holds one synthetic bundle per family, made once for the test
// binary; tests copy them into the trees they scan.
var templates = map[string]string{}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orchard-config-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, f := range []string{"r1", "v2", "stateful3", "stateful3-logits"} {
		root, err := reference.Synthesize(reference.SynthOptions{Family: f, Preset: "tiny", Seed: 1, Out: filepath.Join(dir, f)})
		if err != nil {
			fmt.Fprintln(os.Stderr, "synthesize:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		templates[f] = root
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// mapEnv is an environment made of m alone.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// copyTree copies the files below src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		return copyFile(p, out)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// hfSnapshot lays src out as huggingface_hub does: each file stored once
// in the repo's blobs/ and linked from snapshots/REV/SUB by a relative symlink.
func hfSnapshot(t *testing.T, src, repo, rev, sub string) string {
	t.Helper()
	snap := filepath.Join(repo, "snapshots", rev, sub)
	n := 0
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		link := filepath.Join(snap, rel)
		if d.IsDir() {
			return os.MkdirAll(link, 0o755)
		}
		n++
		blob := filepath.Join(repo, "blobs", fmt.Sprintf("%s-%s-%04d", rev, filepath.Base(sub), n))
		if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
			return err
		}
		if err := copyFile(p, blob); err != nil {
			return err
		}
		target, _ := filepath.Rel(filepath.Dir(link), blob)
		return os.Symlink(target, link)
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// treeSize adds up the file sizes below dir, following no links.
func treeSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			n += info.Size()
		}
		return nil
	})
	return n
}
