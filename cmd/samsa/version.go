package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is the release this binary was built as, set by the linker:
// go build -ldflags "-X main.version=v1.2.3" (make build passes git
// describe). Without it the module version from the build info is used
// (go install ...@v1.2.3), else "(devel)".
var version string

// versionString is what samsa version and samsa --version print after
// "samsa ": the version, then the commit the build info records (with
// "-dirty" for a tree with uncommitted changes), the Go version and the
// platform.
func versionString(linked string, bi *debug.BuildInfo) string {
	v := linked
	if v == "" && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
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
	return v + " (" + strings.Join(details, ", ") + ")"
}

func buildVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return versionString(version, bi)
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this binary (as --version does)",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "samsa", buildVersion())
		},
	}
}
