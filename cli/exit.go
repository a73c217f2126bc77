package cli

import (
	"errors"
	"fmt"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine"
)

// Exit codes of every command.
const (
	exitOK      = 0
	exitFailure = 1 // the command was right but something failed at run time
	exitUsage   = 2 // bad usage or bad input: the user fixes the command line or its files
)

// inputError marks an error in what the user gave (a path that is no
// bundle, a family that does not exist): the command exits with 2.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// badInput wraps err as the user's to fix.
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return inputError{err}
}

// exitCode is the exit status for err: 2 when the user's input is at
// fault (a bundle path, a bundle that fails validation, a setting the
// bundle refuses), 1 for anything else.
func exitCode(err error) int {
	var ie inputError
	var ve *bundle.ValidationError
	var fe *engine.FileError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ie), errors.As(err, &ve), errors.As(err, &fe), errors.Is(err, engine.ErrNoEncoder), errors.Is(err, bundle.ErrNotBundle),
		errors.Is(err, engine.ErrSettingInvalid), errors.Is(err, engine.ErrSettingUnsupported):
		return exitUsage
	}
	return exitFailure
}

// families lists the bundle families, for messages.
const families = "r1, v2, stateful3, stateful3-logits"

// checkFamily refuses a --family value that names no family.
func checkFamily(family string) error {
	if _, ok := bundle.ParseFamily(family); !ok {
		return badInput(fmt.Errorf("--family %q is not a bundle family (want %s)", family, families))
	}
	return nil
}
