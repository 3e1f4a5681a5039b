package mirror

import (
	"errors"
	"fmt"
	"math"

	"github.com/samsa-io/samsa/connect"
)

// The connectors' checks of an offsets alter or reset (KIP-875), as
// Kafka's (MirrorUtils.validateSourcePartitionString and its siblings,
// with their messages): a tombstone is always fine, so garbage can be
// cleaned up; otherwise the source partition must have the connector's
// keys and the offset its "offset". The connectors keep nothing elsewhere
// (the source consumer commits no offsets), so the change is complete.

func (c *SourceConnector) AlterOffsets(_ map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	return alterOffsets(offsets, false, func(p map[string]any) error {
		return errors.Join(partitionString(p, partitionCluster), partitionString(p, partitionTopic), partitionNumberCheck(p))
	})
}

func (c *CheckpointConnector) AlterOffsets(_ map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	return alterOffsets(offsets, true, func(p map[string]any) error {
		return errors.Join(partitionString(p, "group"), partitionString(p, partitionTopic), partitionNumberCheck(p))
	})
}

func (c *HeartbeatConnector) AlterOffsets(_ map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	return alterOffsets(offsets, true, func(p map[string]any) error {
		return errors.Join(partitionString(p, "sourceClusterAlias"), partitionString(p, "targetClusterAlias"))
	})
}

var (
	_ connect.SourceOffsetAlterer = (*SourceConnector)(nil)
	_ connect.SourceOffsetAlterer = (*CheckpointConnector)(nil)
	_ connect.SourceOffsetAlterer = (*HeartbeatConnector)(nil)
)

func alterOffsets(offsets []connect.SourcePartitionOffset, onlyZero bool, checkPartition func(map[string]any) error) (bool, error) {
	for _, o := range offsets {
		if o.Offset == nil {
			continue
		}
		if o.Partition == nil {
			return false, errors.New("Source partitions may not be null")
		}
		if err := checkPartition(o.Partition); err != nil {
			return false, firstErr(err)
		}
		if err := offsetCheck(o.Partition, o.Offset, onlyZero); err != nil {
			return false, err
		}
	}
	return true, nil
}

// firstErr is the first of joined errors: Kafka throws at the first check.
func firstErr(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return j.Unwrap()[0]
	}
	return err
}

func partitionString(p map[string]any, key string) error {
	v, ok := p[key]
	if !ok {
		return fmt.Errorf("Source partition %v is missing the '%s' key, which is required", p, key)
	}
	if _, ok := v.(string); !ok {
		return fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which must be a string", p, v, key)
	}
	return nil
}

func partitionNumberCheck(p map[string]any) error {
	v, ok := p[partitionNumber]
	if !ok {
		return fmt.Errorf("Source partition %v is missing the '%s' key, which is required", p, partitionNumber)
	}
	n, ok := v.(int64)
	if !ok || n > math.MaxInt32 {
		return fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which must be an integer", p, v, partitionNumber)
	}
	if n < 0 {
		return fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which cannot be negative", p, v, partitionNumber)
	}
	return nil
}

func offsetCheck(p, o map[string]any, onlyZero bool) error {
	v, ok := o[offsetKey]
	if !ok {
		return fmt.Errorf("Source offset %v for source partition %v is missing the '%s' key, which is required", o, p, offsetKey)
	}
	n, ok := v.(int64)
	if !ok {
		return fmt.Errorf("Source offset %v for source partition %v has an invalid value %v for the '%s' key, which must be an integer", o, p, v, offsetKey)
	}
	if onlyZero && n != 0 {
		return fmt.Errorf("Source offset %v for source partition %v has an invalid value %v for the '%s' key; the only accepted value is 0", o, p, v, offsetKey)
	}
	if !onlyZero && n < 0 {
		return fmt.Errorf("Source offset %v for source partition %v has an invalid value %v for the '%s' key, which cannot be negative", o, p, v, offsetKey)
	}
	return nil
}
