package darwin

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
)

func TestCompiledPath(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"/b/lmhead.mlpackage", "/b/lmhead.mlmodelc"},
		{"/b/lmhead.mlpackage/", "/b/lmhead.mlmodelc"},
		{"/b/Old.MLModel", "/b/Old.mlmodelc"},
		{"/b/chunk_1.mlmodelc", "/b/chunk_1.mlmodelc"},
		{"rel/x.mlpackage", "rel/x.mlmodelc"},
	} {
		if got := CompiledPath(tt.src); got != tt.want {
			t.Errorf("CompiledPath(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

// writeTree creates files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func checkTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != content {
			t.Errorf("%s: %q, %v; want %q", name, b, err, content)
		}
	}
}

var compiledFiles = map[string]string{
	"coremldata.bin":           "cd",
	"model.mil":                "program(1.3)",
	"weights/weight.bin":       "w",
	"analytics/coremldata.bin": "a",
}

func TestInstallCompiled(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp", "lmhead.mlmodelc")
	writeTree(t, tmp, compiledFiles)
	dst := filepath.Join(dir, "bundle", "lmhead.mlmodelc")
	if err := os.Mkdir(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := installCompiled(tmp, dst); err != nil {
		t.Fatal(err)
	}
	checkTree(t, dst, compiledFiles)
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary model left behind: %v", err)
	}
}

func TestCopyTree(t *testing.T) {
	// The path taken when the temporary directory is on another volume.
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeTree(t, src, compiledFiles)
	dst := filepath.Join(dir, "dst")
	if err := copyTree(dst, src); err != nil {
		t.Fatal(err)
	}
	checkTree(t, dst, compiledFiles)
	if err := copyTree(dst, src); err == nil {
		t.Error("copyTree over an existing tree succeeded")
	}
}

func TestCompileModelUsesCache(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "lmhead.mlpackage")
	writeTree(t, pkg, map[string]string{"Manifest.json": "{}"})
	writeTree(t, filepath.Join(dir, "lmhead.mlmodelc"), compiledFiles)
	var msgs []string
	got, err := CompileModel(pkg, func(m string) { msgs = append(msgs, m) })
	if err != nil || got != filepath.Join(dir, "lmhead.mlmodelc") || len(msgs) != 0 {
		t.Errorf("CompileModel = %q, %v, messages %q; want the cached twin, silently", got, err, msgs)
	}
	if got, err := CompileModel(got, nil); err != nil || got != filepath.Join(dir, "lmhead.mlmodelc") {
		t.Errorf("CompileModel(.mlmodelc) = %q, %v", got, err)
	}
}

func TestCompileModelOffDarwin(t *testing.T) {
	if coreMLBuilt {
		t.Skip("Core ML can compile here")
	}
	dir := t.TempDir()
	pkg := filepath.Join(dir, "lmhead.mlpackage")
	writeTree(t, pkg, map[string]string{"Manifest.json": "{}"})
	var msgs []string
	_, err := CompileModel(pkg, func(m string) { msgs = append(msgs, m) })
	if !errors.Is(err, coreml.ErrUnavailable) || len(msgs) != 1 {
		t.Errorf("CompileModel = %v, messages %q; want ErrUnavailable after one progress message", err, msgs)
	}
	if _, err := CompileModel(filepath.Join(dir, "missing.mlpackage"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing package: %v", err)
	}
}
