package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// versionInfo is what `orchard version` prints: the module version, the
// commit it was built from (with "+dirty" for uncommitted changes), the Go
// version and the platform.
func versionInfo() string {
	version, commit, date := moduleVersion(), "unknown", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
				if len(commit) > 12 {
					commit = commit[:12]
				}
			case "vcs.time":
				date = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty {
			commit += "+dirty"
		}
	}
	if date != "" {
		commit += " (" + date + ")"
	}
	return fmt.Sprintf("orchard %s\ncommit %s\n%s %s/%s\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "orchard version: unexpected argument %q\n", args[0])
		return exitUsage
	}
	fmt.Fprint(stdout, versionInfo())
	return exitOK
}

// moduleVersion is orchard's module version as the build recorded it
// (a tag, or a pseudo-version naming the commit), else "(devel)".
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
