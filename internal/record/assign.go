package record

import "encoding/binary"

// AssignOffsets rewrites a validated batch in place as the partition leader
// appends it, as Kafka's LogValidator does without recompressing: base
// offset and partition leader epoch always (the CRC does not cover them).
//
// With logAppendTimeMs >= 0 (message.timestamp.type=LogAppendTime) it sets
// the timestamp-type bit and MaxTimestamp to that time and recomputes the
// CRC. BaseTimestamp and the record deltas stay as the producer wrote them:
// readers report MaxTimestamp for every record of such a batch.
//
// With logAppendTimeMs < 0 (CreateTime) the CRC is left alone, except in
// the rare batch whose producer set the LogAppendTime bit: Kafka rewrites
// it to CreateTime, so the bit is cleared and the CRC recomputed.
//
// The batch must have passed Validate (it is at least HeaderSize bytes).
func AssignOffsets(batch []byte, baseOffset int64, leaderEpoch int32, logAppendTimeMs int64) {
	SetBaseOffset(batch, baseOffset)
	SetPartitionLeaderEpoch(batch, leaderEpoch)
	attrs := binary.BigEndian.Uint16(batch[offAttributes:])
	lat := attrs&TimestampTypeMask != 0
	switch {
	case logAppendTimeMs >= 0:
		if lat && int64(binary.BigEndian.Uint64(batch[offMaxTimestamp:])) == logAppendTimeMs {
			return
		}
		binary.BigEndian.PutUint16(batch[offAttributes:], attrs|TimestampTypeMask)
		binary.BigEndian.PutUint64(batch[offMaxTimestamp:], uint64(logAppendTimeMs))
	case lat:
		binary.BigEndian.PutUint16(batch[offAttributes:], attrs&^TimestampTypeMask)
	default:
		return
	}
	binary.BigEndian.PutUint32(batch[offCRC:], ComputeCRC(batch))
}
