package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// epochs hides the epoch, which is the metadata offset of the run.
var epochs = regexp.MustCompile(`Epoch: [0-9]+`)

// TestFeatureDescribeUpgradeDowngrade runs kafka-features.sh's forms
// against a real Samsa broker.
func TestFeatureDescribeUpgradeDowngrade(t *testing.T) {
	b := newSamsaBroker(t)
	describe := func() string {
		return epochs.ReplaceAllString(b.ok("", "feature", "describe"), "Epoch: E")
	}
	want := "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\tEpoch: E\n" +
		"Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.0-IV3\tFinalizedVersionLevel: 4.0-IV3\tEpoch: E\n" +
		"Feature: share.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\tEpoch: E\n" +
		"Feature: streams.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\tEpoch: E\n" +
		"Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\tFinalizedVersionLevel: 2\tEpoch: E\n"
	if got := describe(); got != want {
		t.Fatalf("feature describe:\n%s\nwant:\n%s", got, want)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"downgrade", "--feature", "group.version=0", "--dry-run"}, "group.version can be downgraded to 0.\n"},
		{[]string{"downgrade", "--feature", "group.version=0", "--metadata", "4.0-IV1"},
			"group.version was downgraded to 0.\nmetadata.version was downgraded to 23.\n"},
		{[]string{"upgrade", "--metadata", "4.0"}, "metadata.version was upgraded to 25.\n"},
		{[]string{"disable", "--feature", "transaction.version"}, "transaction.version was disabled.\n"},
		{[]string{"upgrade", "--feature", "transaction.version=2", "--feature", " group.version = 1"},
			"group.version was upgraded to 1.\ntransaction.version was upgraded to 2.\n"},
	} {
		if out := b.ok("", append([]string{"feature"}, c.args...)...); out != c.want {
			t.Errorf("feature %v:\n%s\nwant:\n%s", c.args, out, c.want)
		}
	}
	if got := describe(); got != want {
		t.Errorf("feature describe after going back up:\n%s\nwant:\n%s", got, want)
	}

	// The cluster's refusals, a line per feature, and a one-line error.
	for _, c := range []struct {
		args      []string
		out, fail string
	}{
		{[]string{"upgrade", "--feature", "group.version=2"},
			"Could not upgrade group.version to 2. invalid update version: The update failed for all features since the following feature had an error: " +
				"Invalid update version 2 for feature group.version. Local controller 1 only supports versions 0-1\n",
			"1 out of 1 operation(s) failed"},
		{[]string{"downgrade", "--metadata", "3.9", "--unsafe", "--dry-run"},
			"Can not downgrade metadata.version to 21. invalid update version: The update failed for all features since the following feature had an error: " +
				"Invalid metadata.version 21. Unsafe metadata downgrade is not supported in this version.\n",
			"1 out of 1 operation(s) failed"},
		{[]string{"upgrade", "--feature", "share.version=2", "--feature", "group.version=1"},
			"Could not upgrade group.version to 1. invalid update version: The update failed for all features since the following feature had an error: " +
				"Invalid update version 2 for feature share.version. Local controller 1 only supports versions 0-1\n" +
				"Could not upgrade share.version to 2. invalid update version: The update failed for all features since the following feature had an error: " +
				"Invalid update version 2 for feature share.version. Local controller 1 only supports versions 0-1\n",
			"2 out of 2 operation(s) failed"},
	} {
		r := b.run("", append([]string{"feature"}, c.args...)...)
		if r.stdout != c.out || r.err == nil || r.err.Error() != c.fail {
			t.Errorf("feature %v:\n%s(error %v)\nwant:\n%s(error %s)", c.args, r.stdout, r.err, c.out, c.fail)
		}
	}

	var rows []featureRow
	if err := json.Unmarshal([]byte(b.ok("", "feature", "describe", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[1].Feature != "metadata.version" || rows[1].SupportedMinVersion != 7 || rows[1].FinalizedVersionLevel != 25 ||
		rows[1].Epoch == nil || *rows[1].Epoch <= 0 {
		t.Errorf("feature describe --json: %+v", rows)
	}
}

// TestFeatureFlags: what the command refuses before it asks the cluster.
func TestFeatureFlags(t *testing.T) {
	c := newTestCluster(t)
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"nothing to upgrade: give --feature NAME=LEVEL or --metadata", []string{"upgrade"}},
		{"nothing to disable: give --feature", []string{"disable"}},
		{`invalid --feature "group.version": want NAME=LEVEL`, []string{"upgrade", "--feature", "group.version"}},
		{`invalid --feature "group.version=x": the level "x" is not a 16-bit integer`, []string{"downgrade", "--feature", "group.version=x"}},
		{`invalid --feature "group.version=40000": the level "40000" is not a 16-bit integer`, []string{"upgrade", "--feature", "group.version=40000"}},
		{"the feature group.version is given more than once", []string{"upgrade", "--feature", "group.version=1", "--feature", "group.version=1"}},
		{"the feature metadata.version is given more than once", []string{"upgrade", "--metadata", "4.0", "--feature", "metadata.version=25"}},
		{`unknown metadata.version "4.0-IV9": want one of 3.3-IV3, 3.4-IV0`, []string{"upgrade", "--metadata", "4.0-IV9"}},
		{`unknown metadata.version "5": want one of`, []string{"downgrade", "--metadata", "5"}},
		{"unknown flag: --unsafe", []string{"upgrade", "--feature", "group.version=1", "--unsafe"}},
		{"unknown flag: --metadata", []string{"disable", "--metadata", "4.0"}},
		{`unknown command "list" for "samsa feature"`, []string{"list"}},
	} {
		c.fails(tc.want, append([]string{"feature"}, tc.args...)...)
	}
}

func TestMetadataVersionNames(t *testing.T) {
	for s, want := range map[string]int16{"3.3-IV3": 7, "3.3": 7, "3.7": 19, "3.7-IV1": 16, "4.0": 25, "4.0-IV3": 25, "4.1": 27} {
		if got, err := parseMetadataVersion(s); err != nil || got != want {
			t.Errorf("parseMetadataVersion(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for level, want := range map[int16]string{7: "3.3-IV3", 25: "4.0-IV3", 6: "UNKNOWN 6", 99: "UNKNOWN 99", 0: "UNKNOWN 0"} {
		if got := featureLevelText("metadata.version", level); got != want {
			t.Errorf("featureLevelText(%d) = %q, want %q", level, got, want)
		}
	}
	if got := featureLevelText("group.version", 1); got != "1" || strings.Contains(got, "UNKNOWN") {
		t.Errorf("group.version 1 printed %q", got)
	}
}
