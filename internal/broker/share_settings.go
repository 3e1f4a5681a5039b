package broker

import (
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"

	"github.com/samsa-io/samsa/internal/share"
)

// shareSettings are a share group's settings that the share-partitions
// and share fetches use: the group's configs (share.*) over the broker's
// group.share.* defaults.
type shareSettings struct {
	lock          time.Duration
	deliveryLimit int16
	maxInFlight   int64
	autoReset     config.ShareAutoOffsetReset
	readCommitted bool
	// renew is share.renew.acknowledge.enable (KIP-1222): whether RENEW
	// acknowledgements are taken.
	renew bool
}

func (s shareSettings) partitionConfig() share.Config {
	return share.Config{LockDuration: s.lock, DeliveryCountLimit: s.deliveryLimit, MaxInFlight: s.maxInFlight}
}

// shareSettingsCache keeps each group's resolved settings for the image
// they were resolved in: resolving costs a broker config rebuild, too
// much for every share fetch, and the image changes rarely.
type shareSettingsCache struct {
	mu     sync.Mutex
	img    *metadata.Image
	groups map[string]shareSettings
}

// shareSettings resolves a group's share settings.
func (b *Broker) shareSettings(group string) shareSettings {
	img := b.meta.Load()
	c := &b.shareSettingsCache
	c.mu.Lock()
	if c.img != img {
		c.img, c.groups = img, map[string]shareSettings{}
	}
	s, ok := c.groups[group]
	c.mu.Unlock()
	if ok {
		return s
	}
	v := b.groupConfig(group)
	reset, err := config.ParseShareAutoOffsetReset(v.String("share.auto.offset.reset"))
	if err != nil { // the catalog validated it: not reached
		reset = config.ShareAutoOffsetReset{Strategy: "latest"}
	}
	s = shareSettings{
		lock:          time.Duration(v.Int("share.record.lock.duration.ms")) * time.Millisecond,
		deliveryLimit: int16(v.Int("share.delivery.count.limit")),
		maxInFlight:   int64(v.Int("share.partition.max.record.locks")),
		autoReset:     reset,
		readCommitted: v.String("share.isolation.level") == "read_committed",
		renew:         v.Bool("share.renew.acknowledge.enable"),
	}
	c.mu.Lock()
	if c.img == img {
		c.groups[group] = s
	}
	c.mu.Unlock()
	return s
}
