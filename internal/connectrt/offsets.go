package connectrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// offsetStore keeps source offsets by connector and source partition. The
// offset topic's key is the JSON array [connector, partition] and its value
// the offset's JSON (Kafka's OffsetStorageWriter with a schemaless JSON
// converter); a null value deletes. Standalone mode keeps the same pairs in
// a JSON file (Kafka's FileOffsetBackingStore writes Java serialization,
// which Samsa neither reads nor writes).
type offsetStore struct {
	mu   sync.Mutex
	data map[string]offsetEntry // by canonical key
	log  *kafkaLog              // distributed
	file string                 // standalone
}

type offsetEntry struct {
	Connector string         `json:"connector"`
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

func newOffsetStore() *offsetStore { return &offsetStore{data: map[string]offsetEntry{}} }

// offsetKey is the record key, [connector, partition]; json.Marshal sorts
// map keys, so equal partitions give equal keys whatever order they came in.
func offsetKey(conn string, partition map[string]any) []byte {
	b, _ := json.Marshal([]any{conn, partition})
	return b
}

func offsetValue(offset map[string]any) []byte {
	if offset == nil {
		return nil
	}
	b, _ := json.Marshal(offset)
	return b
}

// apply folds an offset topic record in; malformed keys are skipped, as
// Kafka's worker logs and skips them.
func (s *offsetStore) apply(r *kgo.Record) {
	var key []json.RawMessage
	if json.Unmarshal(r.Key, &key) != nil || len(key) != 2 {
		return
	}
	var conn string
	if json.Unmarshal(key[0], &conn) != nil {
		return
	}
	part, err := decodeObject(key[1])
	if err != nil || conn == "" || part == nil {
		return
	}
	canon := string(offsetKey(conn, part))
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Value == nil {
		delete(s.data, canon)
		return
	}
	off, err := decodeObject(r.Value)
	if err != nil {
		return
	}
	s.data[canon] = offsetEntry{Connector: conn, Partition: part, Offset: off}
}

// get is a partition's stored offset, or nil.
func (s *offsetStore) get(conn string, partition map[string]any) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data[string(offsetKey(conn, partition))].Offset
}

// all are a connector's offsets.
func (s *offsetStore) all(conn string) []api.ConnectorOffset {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []api.ConnectorOffset{}
	for _, e := range s.data {
		if e.Connector == conn {
			out = append(out, api.ConnectorOffset{Partition: e.Partition, Offset: e.Offset})
		}
	}
	return out
}

// records turns entries into offset topic records (for a transaction).
func offsetRecords(topic, conn string, entries []api.ConnectorOffset) []*kgo.Record {
	out := make([]*kgo.Record, 0, len(entries))
	for _, e := range entries {
		out = append(out, &kgo.Record{Topic: topic, Key: offsetKey(conn, normalize(e.Partition)), Value: offsetValue(normalize(e.Offset))})
	}
	return out
}

// normalize round-trips a map through JSON so values compare as they will
// after being read back: integers int64 (Kafka's Long), other numbers
// float64.
func normalize(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	out, _ := decodeObject(b)
	return out
}

// decodeObject reads a JSON object with integers as int64.
func decodeObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out map[string]any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return fixNumbers(out).(map[string]any), nil
}

func fixNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = fixNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
		return x
	}
	return v
}

// put stores offsets: written to the topic (and read back), or to the file.
func (s *offsetStore) put(ctx context.Context, conn string, entries []api.ConnectorOffset) error {
	if len(entries) == 0 {
		return nil
	}
	if s.log != nil {
		if err := s.log.sendAll(ctx, offsetRecords(s.log.topic, conn, entries)); err != nil {
			return err
		}
		return s.log.readToEnd(ctx)
	}
	for _, r := range offsetRecords("", conn, entries) {
		s.apply(r)
	}
	return s.save()
}

// load reads the standalone file; a missing file is an empty store.
func (s *offsetStore) load() error {
	if s.file == "" {
		return nil
	}
	data, err := os.ReadFile(s.file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("offset.storage.file.filename %s: %w", s.file, err)
	}
	var entries []struct {
		Connector string          `json:"connector"`
		Partition json.RawMessage `json:"partition"`
		Offset    json.RawMessage `json:"offset"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		return fmt.Errorf("offset.storage.file.filename %s: not Samsa's offsets file (JSON): %w", s.file, err)
	}
	for _, e := range entries {
		part, err1 := decodeObject(e.Partition)
		off, err2 := decodeObject(e.Offset)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("offset.storage.file.filename %s: connector %s: %w", s.file, e.Connector, err)
		}
		s.data[string(offsetKey(e.Connector, part))] = offsetEntry{Connector: e.Connector, Partition: part, Offset: off}
	}
	return nil
}

// save writes the standalone file atomically (temp file, fsync, rename).
func (s *offsetStore) save() error {
	if s.file == "" {
		return nil
	}
	s.mu.Lock()
	entries := make([]offsetEntry, 0, len(s.data))
	for _, e := range s.data {
		entries = append(entries, e)
	}
	s.mu.Unlock()
	data, _ := json.MarshalIndent(entries, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(s.file), ".offsets-*")
	if err != nil {
		return fmt.Errorf("offset.storage.file.filename: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.file)
}

func (s *offsetStore) readToEnd(ctx context.Context) error {
	if s.log == nil {
		return nil
	}
	return s.log.readToEnd(ctx)
}
