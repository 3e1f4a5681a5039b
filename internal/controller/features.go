package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// Upgrade types of UpdateFeatures v1+ (KIP-778), Kafka's
// FeatureUpdate.UpgradeType codes; any other code is Kafka's UNKNOWN.
const (
	UpgradeTypeUpgrade         int8 = 1
	UpgradeTypeSafeDowngrade   int8 = 2
	UpgradeTypeUnsafeDowngrade int8 = 3
)

// FeatureUpdate is one entry of UpdateFeatures: a feature's new finalized
// level (0 removes the feature) and how it may move.
type FeatureUpdate struct {
	Feature     string
	Level       int16
	UpgradeType int8
}

// UpdateFeatures changes finalized feature levels, as Kafka's
// FeatureControlManager.updateFeatures: all or nothing. The first update
// it refuses fails the whole request with INVALID_UPDATE_VERSION and
// Kafka's message, after "The update failed for all features since the
// following feature had an error: "; otherwise every level is committed
// in one batch (none with validateOnly). A level must be one this
// controller and every registered broker supports; a lower level needs a
// downgrade type and a higher one the upgrade type; metadata.version may
// only go down where no level in between changed the metadata records,
// and never with UNSAFE_DOWNGRADE, which Kafka 4 does not support. A
// feature named twice keeps its last entry, as Kafka's map of the request
// does. It returns the error code and message of the whole request.
func (c *Controller) UpdateFeatures(ctx context.Context, updates []FeatureUpdate, validateOnly bool) (int16, string) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		f := proposeFailure(err)
		return f.code(), f.message()
	}
	recs, f := planFeatureUpdates(c.Image(), c.cfg.NodeID, updates)
	if f != nil {
		c.log.Warn("feature update refused", "reason", f.msg)
		return f.code(), "The update failed for all features since the following feature had an error: " + f.msg
	}
	if validateOnly || len(recs) == 0 {
		return 0, ""
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		f := proposeFailure(err)
		return f.code(), f.message()
	}
	for _, r := range recs {
		fl := r.(metadata.FeatureLevel)
		c.log.Info("finalized feature level changed", "feature", fl.Name, "level", fl.Level)
	}
	return 0, ""
}

// planFeatureUpdates checks updates against img, as the active controller
// (node self) of Kafka's FeatureControlManager.updateFeature would, in
// the order of the request, and returns the records of them all, or the
// first refusal.
func planFeatureUpdates(img *metadata.Image, self model.NodeID, updates []FeatureUpdate) ([]metadata.Record, *failure) {
	last := map[string]int{}
	for i, u := range updates {
		last[u.Feature] = i
	}
	var recs []metadata.Record
	for i, u := range updates {
		if last[u.Feature] != i {
			continue
		}
		if f := checkFeatureUpdate(img, self, u); f != nil {
			return nil, f
		}
		recs = append(recs, metadata.FeatureLevel{Name: u.Feature, Level: u.Level})
	}
	return recs, nil
}

// checkFeatureUpdate is one update's checks, in Kafka's order: the
// upgrade type, the level's sign, support by this controller and by every
// registered broker, the direction, then metadata.version's own rules or
// the feature's existence.
func checkFeatureUpdate(img *metadata.Image, self model.NodeID, u FeatureUpdate) *failure {
	invalid := func(format string, args ...any) *failure {
		return fail(kerr.InvalidUpdateVersion, "Invalid update version %d for feature %s. %s", u.Level, u.Feature, fmt.Sprintf(format, args...))
	}
	if u.UpgradeType < UpgradeTypeUpgrade || u.UpgradeType > UpgradeTypeUnsafeDowngrade {
		return invalid("The controller does not support the given upgrade type.")
	}
	current := img.Feature(u.Feature)
	if u.Level < 0 {
		return invalid("A feature version cannot be less than 0.")
	}
	local, _ := metadata.SupportedFeature(u.Feature) // absent: 0-0, Kafka's DISABLED
	if reason := notSupported(u.Level, fmt.Sprintf("Local controller %d", self), local); reason != "" {
		return invalid("%s", reason)
	}
	for _, b := range img.Brokers() {
		r, _ := b.Supports(u.Feature)
		if reason := notSupported(u.Level, fmt.Sprintf("Broker %d", b.NodeID), r); reason != "" {
			return invalid("%s", reason)
		}
	}
	switch {
	case u.Level < current && u.UpgradeType == UpgradeTypeUpgrade:
		return invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
	case u.Level > current && u.UpgradeType != UpgradeTypeUpgrade:
		return invalid("Can't downgrade to a newer version.")
	}
	if u.Feature == metadata.FeatureMetadataVersion {
		return checkMetadataVersion(current, u)
	}
	if !metadata.KnownFeature(u.Feature) {
		// Only level 0 gets here (every other level is unsupported):
		// Kafka's Feature.featureFromName refuses a name it does not know.
		return invalid("Feature %s not found.", u.Feature)
	}
	// Kafka 4's transaction.version and group.version levels depend on no
	// other feature (KIP-1022), so there is no dependency to check.
	return nil
}

// notSupported is Kafka's QuorumFeatures.reasonNotSupported: why a node
// (what) whose supported range is r cannot take level, "" when it can.
func notSupported(level int16, what string, r metadata.FeatureRange) string {
	switch {
	case r.Contains(level):
		return ""
	case r.Max == 0:
		return what + " does not support this feature."
	}
	return what + " only supports versions " + r.String()
}

// checkMetadataVersion is Kafka's FeatureControlManager.updateMetadataVersion.
func checkMetadataVersion(current int16, u FeatureUpdate) *failure {
	invalid := func(msg string) *failure {
		return fail(kerr.InvalidUpdateVersion, "Invalid metadata.version %d. %s", u.Level, msg)
	}
	if _, ok := metadata.MetadataVersionName(u.Level); !ok {
		return invalid("Unknown metadata.version.")
	}
	if u.Level < current && metadata.MetadataChanged(current, u.Level) {
		if u.UpgradeType == UpgradeTypeUnsafeDowngrade {
			return invalid("Unsafe metadata downgrade is not supported in this version.")
		}
		return invalid("Refusing to perform the requested downgrade because it might delete metadata information.")
	}
	return nil
}

// checkSupportedLevels refuses an image whose finalized levels this
// version cannot run at: a level outside what it supports, or a feature
// it does not know finalized above 0 (written by a newer version, before
// a downgrade of the software). Kafka's controller fails to replay such a
// FeatureLevelRecord.
func checkSupportedLevels(img *metadata.Image) error {
	for name, level := range img.Features() {
		r, ok := metadata.SupportedFeature(name)
		switch {
		case !ok:
			return fmt.Errorf("controller: the metadata finalizes %s at level %d, a feature this version does not support", name, level)
		case !r.Contains(level):
			return fmt.Errorf("controller: the metadata finalizes %s at level %d; this version supports %s", name, level, r)
		}
	}
	return nil
}

// registrationFeatureFailure is Kafka's
// ClusterControlManager.processRegistrationFeature: a broker may register
// only when it supports every finalized level, including those of features
// it did not list (as 0-0), and metadata.version (a broker that lists none
// is taken to support Kafka's first KRaft version only).
func registrationFeatureFailure(img *metadata.Image, features []metadata.FeatureRange) *failure {
	listed := map[string]metadata.FeatureRange{}
	for _, f := range features {
		listed[f.Name] = f
	}
	if _, ok := listed[metadata.FeatureMetadataVersion]; !ok {
		listed[metadata.FeatureMetadataVersion] = metadata.FeatureRange{Name: metadata.FeatureMetadataVersion, Min: 1, Max: 1}
	}
	// metadata.version first, then by name: the answer names the same
	// feature every time.
	finalized := img.Features()
	names := slices.Sorted(maps.Keys(finalized))
	if i := slices.Index(names, metadata.FeatureMetadataVersion); i > 0 {
		names = append([]string{metadata.FeatureMetadataVersion}, slices.Delete(names, i, i+1)...)
	}
	for _, name := range names {
		level := finalized[name]
		r, ok := listed[name]
		if !ok {
			r = metadata.FeatureRange{Name: name}
		}
		if !r.Contains(level) {
			return fail(kerr.UnsupportedVersion, "Unable to register because the broker does not support finalized version %d of %s. "+
				"The broker wants a version between %d and %d, inclusive.", level, name, r.Min, r.Max)
		}
	}
	return nil
}
