package memledger

import (
	"testing"

	"github.com/orchard-llm/orchard/internal/crosscheck"
)

// TestDarwinFilesTypecheck type-checks package memledger, tests included,
// as GOOS=darwin GOARCH=arm64 over darwinkit's real source (the thermal
// state comes from NSProcessInfo) and checks every C name of
// memory_darwin.go against its preamble.
func TestDarwinFilesTypecheck(t *testing.T) {
	crosscheck.NeedModule(t, "github.com/progrium/darwinkit")
	crosscheck.DarwinFiles(t, ".", []string{"uint64_t"}, "memory_darwin.go", "memory_darwin_test.go")
}
