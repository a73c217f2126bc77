package darwin

import (
	"fmt"
	"time"

	"github.com/orchard-llm/orchard/coreml"
)

// FunctionsTimeout is how long listing a model's functions may take before
// orchard gives up and learns them by loading instead. Core ML answers
// through a completion handler on its own queue; a handler that never runs
// (a damaged model, a stuck daemon) must not hang opening a bundle.
const FunctionsTimeout = 20 * time.Second

// listed is what a function-listing completion handler reports.
type listed struct {
	names []string
	err   error
}

// awaitFunctions waits for a listing handler's answer, at most timeout. On
// timeout the error names the model and wraps ErrFunctionsUnknown, so the
// caller learns the functions by loading them; a late answer is dropped
// (the channel must be buffered).
func awaitFunctions(done <-chan listed, timeout time.Duration, path string) ([]string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.names, r.err
	case <-t.C:
		return nil, fmt.Errorf("%s did not list its functions within %v (Core ML never answered): %w", path, timeout, coreml.ErrFunctionsUnknown)
	}
}
