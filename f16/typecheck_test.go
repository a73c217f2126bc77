package f16

import (
	"testing"

	"github.com/orchard-llm/orchard/internal/crosscheck"
)

// TestDarwinFilesTypecheck type-checks package f16, tests included, as
// GOOS=darwin GOARCH=arm64 and checks every C name of cosf_darwin.go
// against its preamble: the libm path cannot be built here.
func TestDarwinFilesTypecheck(t *testing.T) {
	crosscheck.DarwinFiles(t, ".", []string{"float"}, "cosf_darwin.go")
}
