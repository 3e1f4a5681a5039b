package streams

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/samsa-io/samsa/streams/state"
)

// The suppression buffer's changelog (Kafka logs its buffer too, in a
// format of its own; this one is ours): each buffered key's entry as it
// stands after a put, a tombstone when it is emitted. The runtime keeps the
// buffer in memory and restores it from the changelog when a task starts,
// so a buffered window survives a task's move, a restart and an aborted
// transaction.

var errBadBufferEntry = errors.New("streams: malformed suppression buffer changelog entry")

// logEntry writes e to the changelog.
func (b *timeOrderedBuffer) logEntry(e *bufferEntry) error {
	if b.logger == nil {
		return nil
	}
	v, err := b.encode(e)
	if err != nil {
		return err
	}
	b.logger([]byte(e.key), v, e.rec.ts)
	return nil
}

func (b *timeOrderedBuffer) encode(e *bufferEntry) ([]byte, error) {
	out := make([]byte, 0, 64)
	out = binary.BigEndian.AppendUint64(out, uint64(e.time))
	out = binary.BigEndian.AppendUint64(out, uint64(e.rec.ts))
	out = binary.BigEndian.AppendUint64(out, uint64(e.rec.newSize))
	out = binary.BigEndian.AppendUint64(out, uint64(e.rec.oldSize))
	out = binary.BigEndian.AppendUint64(out, uint64(e.priorSize))
	flag := byte(0)
	if e.priorIsOld {
		flag = 1
	}
	out = append(out, flag)
	out = binary.BigEndian.AppendUint32(out, uint32(e.rec.md.Partition))
	out = binary.BigEndian.AppendUint64(out, uint64(e.rec.md.Offset))
	out = appendBytes(out, []byte(e.rec.md.Topic))
	for _, v := range []any{e.rec.newV, e.rec.oldV, e.prior} {
		vb, err := b.def.valueSerde.serialize(b.def.name, v)
		if err != nil {
			return nil, err
		}
		if v != nil && vb == nil {
			vb = []byte{}
		}
		out = appendBytes(out, vb)
	}
	out = binary.BigEndian.AppendUint32(out, uint32(len(e.rec.headers)))
	for _, h := range e.rec.headers {
		out = appendBytes(out, []byte(h.Key))
		out = appendBytes(out, h.Value)
	}
	return out, nil
}

// appendBytes writes a length (-1 for nil) and the bytes.
func appendBytes(out, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(out, 0xffffffff)
	}
	out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
	return append(out, b...)
}

type entryReader struct {
	b   []byte
	err error
}

func (r *entryReader) u64() uint64 {
	if r.err != nil || len(r.b) < 8 {
		r.err = errBadBufferEntry
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *entryReader) u32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = errBadBufferEntry
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *entryReader) byte1() byte {
	if r.err != nil || len(r.b) < 1 {
		r.err = errBadBufferEntry
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *entryReader) bytes() []byte {
	n := r.u32()
	if r.err != nil || n == 0xffffffff {
		return nil
	}
	if uint64(n) > uint64(len(r.b)) {
		r.err = errBadBufferEntry
		return nil
	}
	v := append([]byte{}, r.b[:n]...)
	r.b = r.b[n:]
	return v
}

func (b *timeOrderedBuffer) decode(key []byte, v []byte) (*bufferEntry, error) {
	r := &entryReader{b: v}
	e := &bufferEntry{key: string(key)}
	e.time = int64(r.u64())
	e.rec.ts = int64(r.u64())
	e.rec.newSize = int64(r.u64())
	e.rec.oldSize = int64(r.u64())
	e.priorSize = int64(r.u64())
	e.priorIsOld = r.byte1() == 1
	e.rec.md.Partition = int32(r.u32())
	e.rec.md.Offset = int64(r.u64())
	e.rec.md.Topic = string(r.bytes())
	var vals [3]any
	for i := range vals {
		vb := r.bytes()
		if r.err != nil {
			return nil, r.err
		}
		x, err := b.def.valueSerde.deserialize(b.def.name, vb)
		if err != nil {
			return nil, err
		}
		vals[i] = x
	}
	e.rec.newV, e.rec.oldV, e.prior = vals[0], vals[1], vals[2]
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		e.rec.headers = append(e.rec.headers, Header{Key: string(r.bytes()), Value: r.bytes()})
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, errBadBufferEntry
	}
	k, err := b.def.keySerde.deserialize(b.def.name, key)
	if err != nil {
		return nil, err
	}
	e.rec.key = k
	e.size = e.estimate()
	return e, nil
}

// RestoreBatch applies changelog records (state.Restorer).
func (b *timeOrderedBuffer) RestoreBatch(records []state.ChangelogRecord) error {
	for _, rec := range records {
		b.drop(string(rec.Key))
		if rec.Value == nil {
			continue
		}
		e, err := b.decode(rec.Key, rec.Value)
		if err != nil {
			return fmt.Errorf("streams: store %s: %w", b.def.name, err)
		}
		b.insert(e)
	}
	return nil
}

// drop removes key's entry, if any.
func (b *timeOrderedBuffer) drop(key string) {
	e, ok := b.index[key]
	if !ok {
		return
	}
	delete(b.index, key)
	b.size -= e.size
	for i, o := range b.entries {
		if o == e {
			b.entries = append(b.entries[:i], b.entries[i+1:]...)
			break
		}
	}
}

// The buffer as a state.Store: it lives in memory; commits and aborts
// are the changelog's business (an abort rebuilds the task from it).
func (b *timeOrderedBuffer) Name() string     { return b.def.name }
func (b *timeOrderedBuffer) Persistent() bool { return false }
func (b *timeOrderedBuffer) Flush() error     { return nil }
func (b *timeOrderedBuffer) Commit() error    { return nil }
func (b *timeOrderedBuffer) Abort() error     { return nil }
func (b *timeOrderedBuffer) Close() error     { return nil }
