package record

import "encoding/binary"

// ClearProducer rewrites a whole batch in place to carry no producer state
// (producer ID, epoch and base sequence -1, the transactional bit cleared)
// and re-seals its CRC. The offset-preserving mirror sends batches this way
// so the target's producer state never holds another cluster's producer
// IDs; everything else in the batch is kept byte for byte.
func ClearProducer(batch []byte) {
	attrs := binary.BigEndian.Uint16(batch[offAttributes:])
	binary.BigEndian.PutUint16(batch[offAttributes:], attrs&^uint16(TransactionalMask))
	binary.BigEndian.PutUint64(batch[offProducerID:], ^uint64(0))
	binary.BigEndian.PutUint16(batch[offProducerEpoch:], ^uint16(0))
	binary.BigEndian.PutUint32(batch[offBaseSequence:], ^uint32(0))
	binary.BigEndian.PutUint32(batch[offCRC:], ComputeCRC(batch))
}
