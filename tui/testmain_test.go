package tui

import (
	"testing"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

func TestMain(m *testing.M) { testbundle.Main(m) }
