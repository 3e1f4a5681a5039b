package streams

import (
	"encoding/binary"
	"fmt"

	"github.com/samsa-io/samsa/streams/state"
)

// The changelogs of the joins' in-memory stores (formats of our own): the
// runtime keeps the stores in memory, logs each entry's change, and
// restores them when a task starts, so unmatched outer-join records and
// foreign-key subscriptions survive a task's move, a restart and an
// aborted transaction, as Kafka's logged stores do.

// log writes an outer-join entry (its store key, its values).
func (m *memOuterJoin) log(k string, e *outerEntry) error {
	if m.logger == nil {
		return nil
	}
	vs := m.def.valueSerde
	if !e.left {
		vs = m.def.otherValueSerde
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(e.values)))
	for _, v := range e.values {
		b, err := vs.serialize(m.def.name, v)
		if err != nil {
			return err
		}
		out = appendBytes(out, b)
	}
	m.logger([]byte(k), out, e.ts)
	return nil
}

// RestoreBatch applies changelog records (state.Restorer).
func (m *memOuterJoin) RestoreBatch(records []state.ChangelogRecord) error {
	for _, rec := range records {
		k := string(rec.Key)
		if rec.Value == nil {
			delete(m.data, k)
			continue
		}
		if len(rec.Key) < 9 {
			return fmt.Errorf("streams: store %s: %w", m.def.name, errBadBufferEntry)
		}
		ts := int64(binary.BigEndian.Uint64(rec.Key))
		left := rec.Key[8] == 1
		key, err := m.def.keySerde.deserialize(m.def.name, rec.Key[9:])
		if err != nil {
			return err
		}
		vs := m.def.valueSerde
		if !left {
			vs = m.def.otherValueSerde
		}
		r := &entryReader{b: rec.Value}
		n := r.u32()
		e := &outerEntry{ts: ts, left: left, key: key}
		for i := uint32(0); i < n && r.err == nil; i++ {
			b := r.bytes()
			if r.err != nil {
				break
			}
			v, err := vs.deserialize(m.def.name, b)
			if err != nil {
				return err
			}
			e.values = append(e.values, v)
		}
		if r.err != nil || len(r.b) != 0 {
			return fmt.Errorf("streams: store %s: %w", m.def.name, errBadBufferEntry)
		}
		m.data[k] = e
	}
	return nil
}

func (m *memOuterJoin) Name() string     { return m.def.name }
func (m *memOuterJoin) Persistent() bool { return false }
func (m *memOuterJoin) Flush() error     { return nil }
func (m *memOuterJoin) Commit() error    { return nil }
func (m *memOuterJoin) Abort() error     { return nil }
func (m *memOuterJoin) Close() error     { return nil }

// subscriptionLogKey is a subscription's changelog key: the foreign key's
// length and bytes, then the primary key's bytes.
func subscriptionLogKey(fk, pk string) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(fk)))
	out = append(out, fk...)
	return append(out, pk...)
}

func (m *memSubscriptions) log(fk, pk string, sub *subscription, ts int64) error {
	if m.logger == nil {
		return nil
	}
	out := binary.BigEndian.AppendUint64(nil, uint64(ts))
	out = appendBytes(out, sub.hash)
	out = append(out, byte(sub.instruction))
	out = binary.BigEndian.AppendUint32(out, uint32(sub.primaryPartition))
	m.logger(subscriptionLogKey(fk, pk), out, ts)
	return nil
}

// RestoreBatch applies changelog records (state.Restorer).
func (m *memSubscriptions) RestoreBatch(records []state.ChangelogRecord) error {
	for _, rec := range records {
		if len(rec.Key) < 4 {
			return fmt.Errorf("streams: store %s: %w", m.def.name, errBadBufferEntry)
		}
		n := binary.BigEndian.Uint32(rec.Key)
		if uint64(n) > uint64(len(rec.Key)-4) {
			return fmt.Errorf("streams: store %s: %w", m.def.name, errBadBufferEntry)
		}
		f, p := string(rec.Key[4:4+n]), string(rec.Key[4+n:])
		if rec.Value == nil {
			delete(m.data[f], p)
			if len(m.data[f]) == 0 {
				delete(m.data, f)
			}
			continue
		}
		r := &entryReader{b: rec.Value}
		ts := int64(r.u64())
		hash := r.bytes()
		instr := r.byte1()
		part := int32(r.u32())
		if r.err != nil || len(r.b) != 0 {
			return fmt.Errorf("streams: store %s: %w", m.def.name, errBadBufferEntry)
		}
		pk, err := m.def.valueSerde.deserialize(m.def.name, []byte(p))
		if err != nil {
			return err
		}
		if m.data[f] == nil {
			m.data[f] = map[string]subEntry{}
		}
		m.data[f][p] = subEntry{sub: &subscription{hash: hash, instruction: subscriptionInstruction(instr), primaryKey: pk, primaryPartition: part}, ts: ts}
	}
	return nil
}

func (m *memSubscriptions) Name() string     { return m.def.name }
func (m *memSubscriptions) Persistent() bool { return false }
func (m *memSubscriptions) Flush() error     { return nil }
func (m *memSubscriptions) Commit() error    { return nil }
func (m *memSubscriptions) Abort() error     { return nil }
func (m *memSubscriptions) Close() error     { return nil }
