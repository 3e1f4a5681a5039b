package metadata

import (
	"slices"
	"strconv"
)

// FeatureRange is the range of levels of a feature a node supports, as a
// broker advertises it in its registration and in ApiVersions (KIP-584):
// Kafka's BrokerRegistrationRecord.Features entry.
type FeatureRange struct {
	Name string `json:"name"`
	Min  int16  `json:"minSupportedVersion"`
	Max  int16  `json:"maxSupportedVersion"`
}

// Contains reports whether level is in the range.
func (r FeatureRange) Contains(level int16) bool { return level >= r.Min && level <= r.Max }

// String is the range as Kafka's VersionRange prints it: "1" for one
// level, "0-2" for several.
func (r FeatureRange) String() string {
	if r.Min == r.Max {
		return strconv.Itoa(int(r.Min))
	}
	return strconv.Itoa(int(r.Min)) + "-" + strconv.Itoa(int(r.Max))
}

// Feature names Kafka 4 defines that Samsa does not implement: kraft.version
// 1 is KIP-853's voter set kept in the log (Samsa's dynamic quorum is
// Raft's own configuration instead, docs/DESIGN-controller.md),
// eligible.leader.replicas.version KIP-966. Samsa does not advertise it,
// so it stays at level 0. streams.version (KIP-1071's streams groups) is
// implemented: level 1 turns StreamsGroupHeartbeat and StreamsGroupDescribe on.
const (
	FeatureKRaftVersion                  = "kraft.version"
	FeatureEligibleLeaderReplicasVersion = "eligible.leader.replicas.version"
	FeatureStreamsVersion                = "streams.version"
)

// FeatureShareVersion is KIP-932's share.version: at 1 share groups are on
// (ShareGroupHeartbeat, ShareFetch and the share admin APIs), at 0 they
// answer UNSUPPORTED_VERSION, as Kafka's ShareVersion.
const FeatureShareVersion = "share.version"

// supportedFeatures are the features this version implements, by name:
// metadata.version from Kafka 4.0's minimum (3.3-IV3) to 4.0-IV3; every
// level of transaction.version (the client picks transactions v1 or v2 by
// the finalized level, and the coordinator answers either by the versions
// of the requests it gets); group.version 0 and 1 (1 turns the KIP-848
// consumer protocol on); share.version 0 and 1 (1 turns KIP-932's share
// groups on); streams.version 0 and 1 (1 turns KIP-1071's streams
// protocol on). Sorted by name.
var supportedFeatures = []FeatureRange{
	{Name: FeatureGroupVersion, Min: 0, Max: 1},
	{Name: FeatureMetadataVersion, Min: MinMetadataVersion, Max: LatestMetadataVersion},
	{Name: FeatureShareVersion, Min: 0, Max: 1},
	{Name: FeatureStreamsVersion, Min: 0, Max: 1},
	{Name: FeatureTransactionVersion, Min: 0, Max: 2},
}

// SupportedFeatures returns the features this version implements, sorted
// by name.
func SupportedFeatures() []FeatureRange { return slices.Clone(supportedFeatures) }

// SupportedFeature returns the range of one feature this version
// implements; false for one it does not.
func SupportedFeature(name string) (FeatureRange, bool) {
	i := slices.IndexFunc(supportedFeatures, func(r FeatureRange) bool { return r.Name == name })
	if i < 0 {
		return FeatureRange{}, false
	}
	return supportedFeatures[i], true
}

// KnownFeature reports whether Kafka defines a feature of this name
// (metadata.version and Kafka's Feature enum), whether or not Samsa
// implements it: Kafka accepts level 0 of such a feature, and refuses any
// level of a name it does not know.
func KnownFeature(name string) bool {
	switch name {
	case FeatureMetadataVersion, FeatureTransactionVersion, FeatureGroupVersion, FeatureKRaftVersion,
		FeatureEligibleLeaderReplicasVersion, FeatureShareVersion, FeatureStreamsVersion:
		return true
	}
	return false
}

// BootstrapFeatures are the levels a new cluster starts at, Kafka 4.0's
// defaults for metadata.version 4.0-IV3: transactions v2 (KIP-890) and the
// consumer group protocol (KIP-848) on; share groups (KIP-932) on, as
// Kafka 4.2 starts new clusters (share.version 1; Kafka makes it depend on
// metadata.version 4.1-IV1, above this version's highest, which is not
// checked); and streams.version 1 (KIP-1071's streams groups), Kafka 4.2's
// default for a new cluster (StreamsVersion SV_1, the latest production
// level).
func BootstrapFeatures() []FeatureLevel {
	return []FeatureLevel{
		{Name: FeatureMetadataVersion, Level: LatestMetadataVersion},
		{Name: FeatureTransactionVersion, Level: 2},
		{Name: FeatureGroupVersion, Level: 1},
		{Name: FeatureShareVersion, Level: 1},
		{Name: FeatureStreamsVersion, Level: 1},
	}
}

// Metadata versions: the lowest Kafka 4 supports (3.3-IV3) and the highest
// this version implements (4.0-IV3).
const (
	MinMetadataVersion    int16 = 7
	LatestMetadataVersion int16 = 25
)

// metadataVersions are Kafka's MetadataVersion levels from 3.3-IV3 to
// 4.0-IV3, each with its release name and whether it changed the metadata
// records (Kafka's didMetadataChange): a downgrade across such a level
// could lose metadata, and Kafka refuses it.
var metadataVersions = []struct {
	name    string
	changed bool
}{
	7: {"3.3-IV3", true}, 8: {"3.4-IV0", true}, 9: {"3.5-IV0", false}, 10: {"3.5-IV1", false},
	11: {"3.5-IV2", true}, 12: {"3.6-IV0", false}, 13: {"3.6-IV1", true}, 14: {"3.6-IV2", true},
	15: {"3.7-IV0", true}, 16: {"3.7-IV1", false}, 17: {"3.7-IV2", true}, 18: {"3.7-IV3", false},
	19: {"3.7-IV4", false}, 20: {"3.8-IV0", false}, 21: {"3.9-IV0", false}, 22: {"4.0-IV0", false},
	23: {"4.0-IV1", true}, 24: {"4.0-IV2", false}, 25: {"4.0-IV3", false},
}

// MetadataVersionName returns a metadata.version level's release name
// ("4.0-IV3"); false for a level this version does not know.
func MetadataVersionName(level int16) (string, bool) {
	if level < MinMetadataVersion || int(level) >= len(metadataVersions) {
		return "", false
	}
	return metadataVersions[level].name, true
}

// MetadataChanged reports whether the metadata records changed between two
// known metadata.version levels, as Kafka's
// MetadataVersion.checkIfMetadataChanged: walking down from the higher,
// a level that changed them is met before the lower is reached.
func MetadataChanged(a, b int16) bool {
	high, low := max(a, b), min(a, b)
	if low < MinMetadataVersion || int(high) >= len(metadataVersions) {
		return true // a level this version does not know: assume the worst
	}
	for v := high; v > low; v-- {
		if metadataVersions[v].changed {
			return true
		}
	}
	return false
}
