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
	version, commit, date := "(devel)", "unknown", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			version = v
		}
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
