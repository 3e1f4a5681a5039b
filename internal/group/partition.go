package group

import (
	"math"
	"unicode/utf16"
)

// OffsetsTopic is the internal topic holding committed offsets and group
// metadata.
const OffsetsTopic = "__consumer_offsets"

// PartitionFor returns the __consumer_offsets partition that holds groupID:
// abs(groupID.hashCode()) % numPartitions with Java's String.hashCode, as
// Kafka computes it, so a group lives in the same partition as it would on
// an Apache Kafka cluster with the same offsets.topic.num.partitions (which
// matters to anyone reading the topic with Kafka's tools).
func PartitionFor(groupID string, numPartitions int32) int32 {
	if numPartitions <= 0 {
		return 0
	}
	h := javaStringHash(groupID)
	// Kafka's Utils.abs maps MinInt32 to 0 rather than letting it overflow.
	if h == math.MinInt32 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % numPartitions
}

// javaStringHash is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over UTF-16 code units with int32 wrap-around. Kafka decodes group IDs
// from UTF-8, so a character outside the BMP counts as its two surrogates.
// Invalid UTF-8 counts as U+FFFD per bad byte, where Java's decoder may
// replace a longer bad sequence with a single U+FFFD; no real client sends
// such a group ID.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}
