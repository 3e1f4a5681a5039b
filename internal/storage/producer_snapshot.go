package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"strings"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// Producer-state snapshots, "<20-digit offset>.snapshot" in the partition
// directory as in Kafka: the table after every batch below offset (the
// log end when it was taken). Recovery loads the newest readable one at or
// below the log end and replays the batches from its offset on.
//
// The layout is ours (Kafka's keeps only each producer's last batch and no
// aborted index), big-endian:
//
//	version          int16   1
//	crc              uint32  CRC32C of every byte after this field
//	offset           int64   must match the file name
//	producer count   uint32, then producers by ascending ID:
//	  producer ID int64, epoch int16, coordinator epoch int32,
//	  last timestamp int64, transaction first offset int64 (-1: none),
//	  batch count uint8 (<= ProducerBatchesToRetain), per batch
//	  first seq int32, last seq int32, first offset int64, last offset int64, timestamp int64
//	aborted count    uint32
//	  producer ID int64, first offset int64, last offset int64, last stable offset int64
//
// The aborted-transaction index lives in the snapshot rather than in
// per-segment .txnindex files: it is small (32 bytes per abort still in
// the log), the snapshot is rewritten at every roll anyway, and one file
// keeps producer state and index consistent. TrimAborted drops entries
// below the log start so it does not grow forever.
//
// Snapshots are written atomically (temporary file, fsync, rename, fsync
// of the directory) and checked on load: a snapshot that is torn, garbled,
// of an unknown version or named for another offset is ignored and
// removed, and an older one (or none: a full replay) is used instead.
const (
	snapshotSuffix  = ".snapshot"
	snapshotVersion = 1
	snapshotHeader  = 2 + 4 // version, crc
	snapshotBatch   = 4 + 4 + 8 + 8 + 8
	snapshotEntry   = 8 + 2 + 4 + 8 + 8 + 1
	snapshotAborted = 4 * 8
)

// errSnapshotCorrupt marks a snapshot that failed its checks.
var errSnapshotCorrupt = errors.New("storage: producer snapshot corrupt")

var snapshotCRC = crc32.MakeTable(crc32.Castagnoli)

// SnapshotName is the path of the snapshot at offset in dir.
func SnapshotName(dir string, offset int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", offset, snapshotSuffix))
}

// ParseSnapshotName returns the offset of a snapshot file name
// ("00000000000000000042.snapshot"); ok is false for any other name.
func ParseSnapshotName(name string) (offset int64, ok bool) {
	digits, ok := strings.CutSuffix(name, snapshotSuffix)
	if !ok {
		return 0, false
	}
	return parseFileOffset(digits)
}

func (t *ProducerStateTable) encodeSnapshot(offset int64) []byte {
	b := make([]byte, snapshotHeader, snapshotHeader+8+4+len(t.producers)*(snapshotEntry+2*snapshotBatch)+4+len(t.aborted)*snapshotAborted)
	binary.BigEndian.PutUint16(b, snapshotVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(offset))
	b = binary.BigEndian.AppendUint32(b, uint32(len(t.producers)))
	for _, p := range t.Producers() {
		b = binary.BigEndian.AppendUint64(b, uint64(p.ProducerID))
		b = binary.BigEndian.AppendUint16(b, uint16(p.Epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(p.CoordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(p.LastTimestamp))
		b = binary.BigEndian.AppendUint64(b, uint64(p.TxnFirstOffset))
		b = append(b, byte(len(p.Batches)))
		for _, pb := range p.Batches {
			b = binary.BigEndian.AppendUint32(b, uint32(pb.FirstSeq))
			b = binary.BigEndian.AppendUint32(b, uint32(pb.LastSeq))
			b = binary.BigEndian.AppendUint64(b, uint64(pb.FirstOffset))
			b = binary.BigEndian.AppendUint64(b, uint64(pb.LastOffset))
			b = binary.BigEndian.AppendUint64(b, uint64(pb.Timestamp))
		}
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(t.aborted)))
	for _, a := range t.aborted {
		for _, v := range []int64{a.ProducerID, a.FirstOffset, a.LastOffset, a.LastStableOffset} {
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		}
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[snapshotHeader:], snapshotCRC))
	return b
}

// snapshotDecoder reads big-endian fields; the first short read sticks.
type snapshotDecoder struct {
	b   []byte
	bad bool
}

func (d *snapshotDecoder) take(n int) []byte {
	if d.bad || len(d.b) < n {
		d.bad = true
		return make([]byte, n)
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *snapshotDecoder) u8() uint8   { return d.take(1)[0] }
func (d *snapshotDecoder) i16() int16  { return int16(binary.BigEndian.Uint16(d.take(2))) }
func (d *snapshotDecoder) i32() int32  { return int32(binary.BigEndian.Uint32(d.take(4))) }
func (d *snapshotDecoder) u32() uint32 { return binary.BigEndian.Uint32(d.take(4)) }
func (d *snapshotDecoder) i64() int64  { return int64(binary.BigEndian.Uint64(d.take(8))) }

func decodeSnapshot(b []byte, offset int64) (*ProducerStateTable, error) {
	if len(b) < snapshotHeader {
		return nil, fmt.Errorf("%w: %d bytes", errSnapshotCorrupt, len(b))
	}
	if v := binary.BigEndian.Uint16(b); v != snapshotVersion {
		return nil, fmt.Errorf("%w: version %d", errSnapshotCorrupt, v)
	}
	if crc32.Checksum(b[snapshotHeader:], snapshotCRC) != binary.BigEndian.Uint32(b[2:]) {
		return nil, fmt.Errorf("%w: crc mismatch", errSnapshotCorrupt)
	}
	d := &snapshotDecoder{b: b[snapshotHeader:]}
	if off := d.i64(); off != offset {
		return nil, fmt.Errorf("%w: holds offset %d, named %d", errSnapshotCorrupt, off, offset)
	}
	t := NewProducerStateTable()
	n := d.u32()
	if uint64(n)*snapshotEntry > uint64(len(d.b)) {
		return nil, fmt.Errorf("%w: %d producers in %d bytes", errSnapshotCorrupt, n, len(d.b))
	}
	prev := int64(math.MinInt64)
	for range n {
		p := &ProducerState{ProducerID: d.i64(), Epoch: d.i16(), CoordinatorEpoch: d.i32(), LastTimestamp: d.i64(), TxnFirstOffset: d.i64()}
		nb := int(d.u8())
		if nb > ProducerBatchesToRetain || p.ProducerID <= prev {
			return nil, fmt.Errorf("%w: producer %d", errSnapshotCorrupt, p.ProducerID)
		}
		prev = p.ProducerID
		for range nb {
			p.Batches = append(p.Batches, ProducerBatch{FirstSeq: d.i32(), LastSeq: d.i32(), FirstOffset: d.i64(), LastOffset: d.i64(), Timestamp: d.i64()})
		}
		t.producers[p.ProducerID] = p
		t.syncOngoing(p)
	}
	na := d.u32()
	if uint64(na)*snapshotAborted != uint64(len(d.b)) {
		return nil, fmt.Errorf("%w: %d aborted transactions in %d bytes", errSnapshotCorrupt, na, len(d.b))
	}
	t.aborted = make([]AbortedTxn, 0, na)
	for range na {
		a := AbortedTxn{ProducerID: d.i64(), FirstOffset: d.i64(), LastOffset: d.i64(), LastStableOffset: d.i64()}
		if k := len(t.aborted); k > 0 && t.aborted[k-1].LastOffset > a.LastOffset {
			return nil, fmt.Errorf("%w: aborted index out of order", errSnapshotCorrupt)
		}
		t.aborted = append(t.aborted, a)
	}
	if d.bad || len(d.b) != 0 {
		return nil, fmt.Errorf("%w: bad length", errSnapshotCorrupt)
	}
	return t, nil
}

// WriteSnapshot writes the table as the snapshot at offset (the log end
// offset: the table must reflect every batch below it), atomically and
// durably. Call it under the Log's mu so no append runs meanwhile.
func (t *ProducerStateTable) WriteSnapshot(fsys vfs.FS, dir string, offset int64) error {
	if err := vfs.WriteFileAtomic(fsys, SnapshotName(dir, offset), t.encodeSnapshot(offset)); err != nil {
		return fmt.Errorf("storage: write producer snapshot %d in %s: %w", offset, dir, err)
	}
	return nil
}

// ListSnapshots returns the offsets of the snapshots in dir, ascending.
func ListSnapshots(fsys vfs.FS, dir string) ([]int64, error) {
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var offs []int64
	for _, name := range names { // sorted, and the names are fixed width
		if off, ok := ParseSnapshotName(name); ok {
			offs = append(offs, off)
		}
	}
	return offs, nil
}

// LoadLatestSnapshot loads the newest readable snapshot at or below upTo
// (math.MaxInt64 for any). Unreadable snapshots (torn, garbled, unknown
// version) are removed and the next older one tried. With none it returns
// an empty table and offset -1: replay from the log start. Snapshots above
// upTo are left alone (DeleteSnapshotsAfter).
func LoadLatestSnapshot(fsys vfs.FS, dir string, upTo int64) (*ProducerStateTable, int64, error) {
	offs, err := ListSnapshots(fsys, dir)
	if err != nil {
		return nil, -1, fmt.Errorf("storage: list producer snapshots in %s: %w", dir, err)
	}
	for i := len(offs) - 1; i >= 0; i-- {
		if offs[i] > upTo {
			continue
		}
		name := SnapshotName(dir, offs[i])
		b, err := vfs.ReadFile(fsys, name)
		if err != nil {
			return nil, -1, fmt.Errorf("storage: read producer snapshot %s: %w", name, err)
		}
		t, err := decodeSnapshot(b, offs[i])
		if err == nil {
			return t, offs[i], nil
		}
		if err := fsys.Remove(name); err != nil && !errors.Is(err, vfs.ErrNotExist) {
			return nil, -1, fmt.Errorf("storage: remove corrupt producer snapshot %s: %w", name, err)
		}
	}
	return NewProducerStateTable(), -1, nil
}

// DeleteSnapshotsBefore removes snapshots below offset (the log start, or
// the base of the oldest segment), except the newest snapshot, which is
// always kept: producer state outlives the batches that built it.
func DeleteSnapshotsBefore(fsys vfs.FS, dir string, offset int64) error {
	offs, err := ListSnapshots(fsys, dir)
	if err != nil {
		return err
	}
	for i, off := range offs {
		if off < offset && i < len(offs)-1 {
			if err := removeSnapshot(fsys, dir, off); err != nil {
				return err
			}
		}
	}
	return nil
}

// DeleteSnapshotsAfter removes snapshots above offset: on truncation to
// offset they describe batches that are gone.
func DeleteSnapshotsAfter(fsys vfs.FS, dir string, offset int64) error {
	offs, err := ListSnapshots(fsys, dir)
	if err != nil {
		return err
	}
	for _, off := range offs {
		if off > offset {
			if err := removeSnapshot(fsys, dir, off); err != nil {
				return err
			}
		}
	}
	return nil
}

func removeSnapshot(fsys vfs.FS, dir string, off int64) error {
	if err := fsys.Remove(SnapshotName(dir, off)); err != nil && !errors.Is(err, vfs.ErrNotExist) {
		return fmt.Errorf("storage: remove producer snapshot %d in %s: %w", off, dir, err)
	}
	return nil
}

// ReplayBatches brings the table up to date with a run of whole batches
// as read from a segment (recovery, or reload after truncation): every
// batch that ends at or after from (the snapshot's offset) is applied
// with UpdateBatch, without the leader's checks, as Kafka replays its
// log. It returns the offset after the last batch seen (from, if none).
func (t *ProducerStateTable) ReplayBatches(data []byte, from int64) (int64, error) {
	next := from
	for pos := 0; pos < len(data); {
		h, err := record.ParseHeader(data[pos:])
		if err == nil {
			err = record.CheckComplete(&h, data[pos:])
		}
		if err != nil {
			return next, fmt.Errorf("storage: replay producer state at %d: %w", next, err)
		}
		batch := data[pos : pos+h.Size()]
		pos += h.Size()
		if h.LastOffset() < from {
			continue
		}
		if err := t.UpdateBatch(batch); err != nil {
			return next, fmt.Errorf("storage: replay producer state at %d: %w", h.BaseOffset, err)
		}
		next = max(next, h.NextOffset())
	}
	return next, nil
}
