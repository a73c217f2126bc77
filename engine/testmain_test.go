package engine

import (
	"os"
	"sync"
	"testing"
)

// Synthetic bundles are shared by the tests of one run and removed at exit.
var (
	tempMu   sync.Mutex
	tempDirs []string
)

func mkdirTemp(pattern string) (string, error) {
	d, err := os.MkdirTemp("", pattern)
	if err == nil {
		tempMu.Lock()
		tempDirs = append(tempDirs, d)
		tempMu.Unlock()
	}
	return d, err
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
