package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the release this binary was built as, set by the linker:
// go build -ldflags "-X github.com/samsa-io/samsa/internal/version.Version=v1.2.3"
// (make build passes git describe). Without it the module version from the
// build info is used (go install ...@v1.2.3), else "(devel)".
var Version string

// String is the version alone: what the broker's start-up line reports.
func String() string {
	bi, _ := debug.ReadBuildInfo()
	return release(Version, bi)
}

// Describe is what samsa --version prints after "samsa ": the version,
// then the commit the build info records (with "-dirty" for a tree with
// uncommitted changes), the Go version and the platform.
func Describe() string {
	bi, _ := debug.ReadBuildInfo()
	return describe(Version, bi)
}

func release(linked string, bi *debug.BuildInfo) string {
	switch {
	case linked != "":
		return linked
	case bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		return bi.Main.Version
	}
	return "(devel)"
}

func describe(linked string, bi *debug.BuildInfo) string {
	var details []string
	goVersion := runtime.Version()
	if bi != nil {
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		var revision, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if revision != "" {
			commit := "commit " + revision[:min(12, len(revision))]
			if modified == "true" {
				commit += "-dirty"
			}
			details = append(details, commit)
		}
	}
	details = append(details, goVersion+" "+runtime.GOOS+"/"+runtime.GOARCH)
	return release(linked, bi) + " (" + strings.Join(details, ", ") + ")"
}
