package record

import (
	"encoding/binary"
	"fmt"
)

// ControlType is the type field of a control record's key.
type ControlType int16

// Control record types Kafka defines. Only ABORT and COMMIT (transaction
// markers) are written by this broker; the KRaft ones are listed so a
// reader can name what it skips.
const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
)

// Sizes of the version 0 control key (version int16, type int16) and end
// transaction marker value (version int16, coordinator epoch int32).
const (
	controlKeySize   = 4
	endTxnMarkerSize = 6
)

// EndTxnMarker returns the single record of a transaction marker batch.
// The caller sets Offset and Timestamp and puts it in a Batch with Control
// and Transactional set and the producer's ID and epoch.
func EndTxnMarker(commit bool, coordinatorEpoch int32) Record {
	typ := ControlAbort
	if commit {
		typ = ControlCommit
	}
	key := make([]byte, controlKeySize)
	binary.BigEndian.PutUint16(key[2:], uint16(typ))
	value := make([]byte, endTxnMarkerSize)
	binary.BigEndian.PutUint32(value[2:], uint32(coordinatorEpoch))
	return Record{Key: key, Value: value}
}

// ParseControlKey returns the type of a control record from its key. Like
// Kafka it reads keys of a newer version as version 0 and refuses a
// negative version, which can only be corruption.
func ParseControlKey(key []byte) (ControlType, error) {
	if len(key) < controlKeySize {
		return 0, fmt.Errorf("%w: control key of %d bytes", ErrCorrupt, len(key))
	}
	if v := int16(binary.BigEndian.Uint16(key)); v < 0 {
		return 0, fmt.Errorf("%w: control key version %d", ErrCorrupt, v)
	}
	return ControlType(binary.BigEndian.Uint16(key[2:])), nil
}

// ParseEndTxnMarker decodes a transaction marker record: whether it
// commits, and the coordinator epoch that wrote it.
func ParseEndTxnMarker(key, value []byte) (commit bool, coordinatorEpoch int32, err error) {
	typ, err := ParseControlKey(key)
	if err != nil {
		return false, 0, err
	}
	if typ != ControlAbort && typ != ControlCommit {
		return false, 0, fmt.Errorf("%w: control type %d is not a transaction marker", ErrCorrupt, typ)
	}
	if len(value) < endTxnMarkerSize {
		return false, 0, fmt.Errorf("%w: transaction marker value of %d bytes", ErrCorrupt, len(value))
	}
	if v := int16(binary.BigEndian.Uint16(value)); v < 0 {
		return false, 0, fmt.Errorf("%w: transaction marker version %d", ErrCorrupt, v)
	}
	return typ == ControlCommit, int32(binary.BigEndian.Uint32(value[2:])), nil
}
