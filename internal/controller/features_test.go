package controller

import (
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// featureImage is a cluster at the bootstrap levels with broker 1
// (this controller) supporting what this version supports, then more.
func featureImage(t *testing.T, more ...metadata.Record) *metadata.Image {
	t.Helper()
	recs := []metadata.Record{metadata.ClusterRecord{ClusterID: "q1Sh-9_ISia_jp5c-5Ck4Q"},
		metadata.BrokerRegistration{NodeID: 1, Incarnation: "i1", Features: metadata.SupportedFeatures()}}
	for _, f := range metadata.BootstrapFeatures() {
		recs = append(recs, f)
	}
	recs = append(recs, more...)
	img, err := metadata.Empty().ApplyAt(1, recs...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func upgrade(name string, level int16) FeatureUpdate {
	return FeatureUpdate{Feature: name, Level: level, UpgradeType: UpgradeTypeUpgrade}
}

func safeDowngrade(name string, level int16) FeatureUpdate {
	return FeatureUpdate{Feature: name, Level: level, UpgradeType: UpgradeTypeSafeDowngrade}
}

func unsafeDowngrade(name string, level int16) FeatureUpdate {
	return FeatureUpdate{Feature: name, Level: level, UpgradeType: UpgradeTypeUnsafeDowngrade}
}

// TestPlanFeatureUpdates is every refusal of Kafka's FeatureControlManager
// that Samsa can meet, with Kafka's message, and the updates it lets
// through.
func TestPlanFeatureUpdates(t *testing.T) {
	const (
		mv = metadata.FeatureMetadataVersion
		tv = metadata.FeatureTransactionVersion
		gv = metadata.FeatureGroupVersion
	)
	narrow := metadata.BrokerRegistration{NodeID: 2, Incarnation: "i2", Features: []metadata.FeatureRange{
		{Name: mv, Min: 7, Max: 25}, {Name: tv, Min: 0, Max: 1}}}
	bare := metadata.BrokerRegistration{NodeID: 3, Incarnation: "i3"}
	for _, tc := range []struct {
		name    string
		more    []metadata.Record
		updates []FeatureUpdate
		want    string // the refusal, or the records as name=level
	}{
		{name: "unknown upgrade type 0", updates: []FeatureUpdate{{Feature: gv, Level: 1, UpgradeType: 0}},
			want: "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."},
		{name: "unknown upgrade type 4", updates: []FeatureUpdate{{Feature: gv, Level: 1, UpgradeType: 4}},
			want: "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."},
		{name: "negative level", updates: []FeatureUpdate{safeDowngrade(gv, -1)},
			want: "Invalid update version -1 for feature group.version. A feature version cannot be less than 0."},
		{name: "unknown feature", updates: []FeatureUpdate{upgrade("no.such.feature", 1)},
			want: "Invalid update version 1 for feature no.such.feature. Local controller 1 does not support this feature."},
		{name: "unknown feature at 0", updates: []FeatureUpdate{safeDowngrade("no.such.feature", 0)},
			want: "Invalid update version 0 for feature no.such.feature. Feature no.such.feature not found."},
		{name: "kraft.version 1: no dynamic quorum", updates: []FeatureUpdate{upgrade(metadata.FeatureKRaftVersion, 1)},
			want: "Invalid update version 1 for feature kraft.version. Local controller 1 does not support this feature."},
		{name: "share.version above what the controller supports", updates: []FeatureUpdate{upgrade(metadata.FeatureShareVersion, 2)},
			want: "Invalid update version 2 for feature share.version. Local controller 1 only supports versions 0-1"},
		{name: "streams.version above what the controller supports", updates: []FeatureUpdate{upgrade(metadata.FeatureStreamsVersion, 2)},
			want: "Invalid update version 2 for feature streams.version. Local controller 1 only supports versions 0-1"},
		{name: "eligible leader replicas", updates: []FeatureUpdate{upgrade(metadata.FeatureEligibleLeaderReplicasVersion, 1)},
			want: "Invalid update version 1 for feature eligible.leader.replicas.version. Local controller 1 does not support this feature."},
		{name: "a feature Kafka knows at 0 is a no-op", updates: []FeatureUpdate{upgrade(metadata.FeatureEligibleLeaderReplicasVersion, 0)},
			want: "eligible.leader.replicas.version=0"},
		{name: "group.version above what the controller supports", updates: []FeatureUpdate{upgrade(gv, 2)},
			want: "Invalid update version 2 for feature group.version. Local controller 1 only supports versions 0-1"},
		{name: "metadata.version above 4.0-IV3", updates: []FeatureUpdate{upgrade(mv, 26)},
			want: "Invalid update version 26 for feature metadata.version. Local controller 1 only supports versions 7-25"},
		{name: "metadata.version below 3.3-IV3", updates: []FeatureUpdate{safeDowngrade(mv, 6)},
			want: "Invalid update version 6 for feature metadata.version. Local controller 1 only supports versions 7-25"},
		{name: "a broker without the feature", more: []metadata.Record{narrow}, updates: []FeatureUpdate{safeDowngrade(gv, 0), upgrade(gv, 1)},
			want: "Invalid update version 1 for feature group.version. Broker 2 does not support this feature."},
		{name: "a broker with a narrower range", more: []metadata.Record{narrow}, updates: []FeatureUpdate{upgrade(tv, 2)},
			want: "Invalid update version 2 for feature transaction.version. Broker 2 only supports versions 0-1"},
		{name: "a broker that registered no features", more: []metadata.Record{bare}, updates: []FeatureUpdate{upgrade(mv, 25)},
			want: "Invalid update version 25 for feature metadata.version. Broker 3 does not support this feature."},
		{name: "a downgrade as an upgrade", updates: []FeatureUpdate{upgrade(tv, 1)},
			want: "Invalid update version 1 for feature transaction.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
		{name: "an upgrade as a downgrade", more: []metadata.Record{metadata.FeatureLevel{Name: tv, Level: 1}}, updates: []FeatureUpdate{safeDowngrade(tv, 2)},
			want: "Invalid update version 2 for feature transaction.version. Can't downgrade to a newer version."},
		{name: "an upgrade", more: []metadata.Record{metadata.FeatureLevel{Name: gv, Level: 0}, metadata.FeatureLevel{Name: mv, Level: 23}},
			updates: []FeatureUpdate{upgrade(gv, 1), upgrade(mv, 25)},
			want:    "group.version=1 metadata.version=25"},
		{name: "a name Kafka does not know, at 0", updates: []FeatureUpdate{unsafeDowngrade("x", 0)},
			want: "Invalid update version 0 for feature x. Feature x not found."},
		{name: "metadata.version down across a change", updates: []FeatureUpdate{safeDowngrade(mv, 22)},
			want: "Invalid metadata.version 22. Refusing to perform the requested downgrade because it might delete metadata information."},
		{name: "metadata.version unsafe downgrade", updates: []FeatureUpdate{unsafeDowngrade(mv, 22)},
			want: "Invalid metadata.version 22. Unsafe metadata downgrade is not supported in this version."},
		{name: "metadata.version safe downgrade", updates: []FeatureUpdate{safeDowngrade(mv, 23)},
			want: "metadata.version=23"},
		{name: "metadata.version unsafe downgrade where it is safe", updates: []FeatureUpdate{unsafeDowngrade(mv, 24)},
			want: "metadata.version=24"},
		{name: "downgrades and a removal", updates: []FeatureUpdate{safeDowngrade(tv, 1), unsafeDowngrade(gv, 0)},
			want: "transaction.version=1 group.version=0"},
		{name: "the same level again", updates: []FeatureUpdate{upgrade(gv, 1)},
			want: "group.version=1"},
		{name: "the last entry of a feature named twice", updates: []FeatureUpdate{upgrade(gv, 5), safeDowngrade(tv, 0), safeDowngrade(gv, 0)},
			want: "transaction.version=0 group.version=0"},
		{name: "all or nothing", updates: []FeatureUpdate{safeDowngrade(tv, 1), upgrade(gv, 2)},
			want: "Invalid update version 2 for feature group.version. Local controller 1 only supports versions 0-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, f := planFeatureUpdates(featureImage(t, tc.more...), 1, tc.updates)
			var got string
			if f != nil {
				if f.err != kerr.InvalidUpdateVersion {
					t.Errorf("code %v, want INVALID_UPDATE_VERSION", f.err)
				}
				got = f.msg
			} else {
				var levels []string
				for _, r := range recs {
					fl := r.(metadata.FeatureLevel)
					levels = append(levels, fl.Name+"="+strconv.Itoa(int(fl.Level)))
				}
				got = strings.Join(levels, " ")
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestUpdateFeatures goes through the controller: the prefix Kafka's
// controller puts on a refusal, validate-only, and levels that stay
// where the operator put them across a restart.
func TestUpdateFeatures(t *testing.T) {
	dir := t.TempDir()
	c := open(t, testConfig(dir))
	code, msg := c.UpdateFeatures(ctx(t), []FeatureUpdate{safeDowngrade(metadata.FeatureTransactionVersion, 1), upgrade("nope", 1)}, false)
	if code != kerr.InvalidUpdateVersion.Code || msg != "The update failed for all features since the following feature had an error: "+
		"Invalid update version 1 for feature nope. Local controller 1 does not support this feature." {
		t.Errorf("refusal: %d %q", code, msg)
	}
	if got := c.Image().Feature(metadata.FeatureTransactionVersion); got != 2 {
		t.Errorf("a refused request changed transaction.version to %d", got)
	}
	offset := c.Image().Offset()
	if code, msg := c.UpdateFeatures(ctx(t), []FeatureUpdate{safeDowngrade(metadata.FeatureGroupVersion, 0)}, true); code != 0 {
		t.Fatalf("validate only: %d %s", code, msg)
	}
	if c.Image().Offset() != offset || c.Image().Feature(metadata.FeatureGroupVersion) != 1 {
		t.Error("validate only wrote")
	}
	if code, msg := c.UpdateFeatures(ctx(t), []FeatureUpdate{safeDowngrade(metadata.FeatureGroupVersion, 0), safeDowngrade(metadata.FeatureMetadataVersion, 24)}, false); code != 0 {
		t.Fatalf("downgrade: %d %s", code, msg)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// A new election does not raise the levels back to this version's
	// defaults: they are the operator's.
	c = open(t, testConfig(dir))
	if got := c.Image().Features(); len(got) != 4 || got[metadata.FeatureGroupVersion] != 0 || got[metadata.FeatureMetadataVersion] != 24 ||
		got[metadata.FeatureShareVersion] != 1 || got[metadata.FeatureStreamsVersion] != 1 {
		t.Errorf("features after a restart: %v", got)
	}
}

// TestRegistrationNeedsTheFinalizedLevels: a broker that does not support
// a finalized level may not register, as in Kafka's ClusterControlManager.
func TestRegistrationNeedsTheFinalizedLevels(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	reg := func(id model.NodeID, features []metadata.FeatureRange) (*kerr.Error, string) {
		_, err, msg := c.RegisterBroker(ctx(t), Registration{NodeID: id, ClusterID: c.Image().ClusterID(), Incarnation: "i", Features: features})
		return err, msg
	}
	for _, tc := range []struct {
		name     string
		features []metadata.FeatureRange
		want     string
	}{
		{"transaction.version too low", []metadata.FeatureRange{{Name: "metadata.version", Min: 7, Max: 25}, {Name: "group.version", Max: 1}, {Name: "share.version", Max: 1}, {Name: "streams.version", Max: 1}, {Name: "transaction.version", Max: 1}},
			"Unable to register because the broker does not support finalized version 2 of transaction.version. The broker wants a version between 0 and 1, inclusive."},
		{"group.version not listed", []metadata.FeatureRange{{Name: "metadata.version", Min: 7, Max: 25}, {Name: "share.version", Max: 1}, {Name: "streams.version", Max: 1}, {Name: "transaction.version", Max: 2}},
			"Unable to register because the broker does not support finalized version 1 of group.version. The broker wants a version between 0 and 0, inclusive."},
		{"no features at all", nil,
			"Unable to register because the broker does not support finalized version 25 of metadata.version. The broker wants a version between 1 and 1, inclusive."},
	} {
		err, msg := reg(2, tc.features)
		if err != kerr.UnsupportedVersion || msg != tc.want {
			t.Errorf("%s: %v %q\nwant UNSUPPORTED_VERSION %q", tc.name, err, msg, tc.want)
		}
	}
	if _, ok := c.Image().Broker(2); ok {
		t.Error("a refused broker is registered")
	}
	if err, msg := reg(2, metadata.SupportedFeatures()); err != nil {
		t.Fatalf("register: %v %s", err, msg)
	}
	if b, _ := c.Image().Broker(2); len(b.Features) != len(metadata.SupportedFeatures()) {
		t.Errorf("registered features %v", b.Features)
	}
}

// TestStartRefusesUnsupportedLevels: metadata whose finalized levels this
// version does not support (a newer version's) stops the start.
func TestStartRefusesUnsupportedLevels(t *testing.T) {
	for _, tc := range []struct {
		level metadata.FeatureLevel
		want  string
	}{
		{metadata.FeatureLevel{Name: "metadata.version", Level: 26}, "finalizes metadata.version at level 26; this version supports 7-25"},
		{metadata.FeatureLevel{Name: "eligible.leader.replicas.version", Level: 1}, "finalizes eligible.leader.replicas.version at level 1, a feature this version does not support"},
	} {
		img, err := featureImage(t).Apply(tc.level)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkSupportedLevels(img); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.level, err, tc.want)
		}
	}
	if err := checkSupportedLevels(featureImage(t)); err != nil {
		t.Errorf("the bootstrap levels: %v", err)
	}

	// As a newer version would have left it: the next start fails.
	dir := t.TempDir()
	c, err := Open(ctx(t), testConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	c.writeMu.Lock()
	err = c.proposeLocked(ctx(t), []metadata.Record{metadata.FeatureLevel{Name: "group.version", Level: 2}})
	c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if c, err := Open(ctx(t), testConfig(dir)); err == nil || !strings.Contains(err.Error(), "finalizes group.version at level 2; this version supports 0-1") {
		if c != nil {
			c.Close()
		}
		t.Errorf("start on group.version 2: %v", err)
	}
}
