package version

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestDescribe(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	vcs := func(revision, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: revision}, {Key: "vcs.modified", Value: modified}}
	}
	cases := []struct {
		name   string
		linked string
		bi     *debug.BuildInfo
		want   string
	}{
		{"linker wins", "v1.2.3", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.0.0"}},
			"v1.2.3 (go1.26.8 " + platform + ")"},
		{"go install module@version", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.0.0"}},
			"v1.0.0 (go1.26.8 " + platform + ")"},
		{"a clean checkout", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: vcs("0123456789abcdef0123", "false")},
			"(devel) (commit 0123456789ab, go1.26.8 " + platform + ")"},
		{"uncommitted changes", "v1.2.3-4-gabc", &debug.BuildInfo{GoVersion: "go1.26.8", Settings: vcs("0123456789abcdef", "true")},
			"v1.2.3-4-gabc (commit 0123456789ab-dirty, go1.26.8 " + platform + ")"},
		{"no build info", "", nil, "(devel) (" + runtime.Version() + " " + platform + ")"},
	}
	for _, c := range cases {
		if got := describe(c.linked, c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestStringIsTheRelease(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	Version = "v9.9.9"
	if got := String(); got != "v9.9.9" {
		t.Fatalf("String() = %q with Version stamped", got)
	}
}
