package controller

import (
	"context"

	"github.com/samsa-io/samsa/internal/metadata"
)

// ProducerIDBlockSize is how many producer IDs one allocation hands out, as
// Kafka's controller does (KIP-730).
const ProducerIDBlockSize = 1000

// AllocateProducerIDs reserves the next block of producer IDs, [first,
// first+count). The block is committed before it is returned, so no ID is
// ever handed out twice, across restarts too; a block a broker does not use
// up is simply skipped.
func (c *Controller) AllocateProducerIDs(ctx context.Context) (first int64, count int, err error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		return 0, 0, err
	}
	first = c.Image().NextProducerID()
	rec := metadata.ProducerIDsRecord{NodeID: c.cfg.NodeID, NextProducerID: first + ProducerIDBlockSize}
	if err := c.proposeLocked(ctx, []metadata.Record{rec}); err != nil {
		return 0, 0, err
	}
	return first, ProducerIDBlockSize, nil
}
