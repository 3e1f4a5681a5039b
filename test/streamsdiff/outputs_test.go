package streamsdiff

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// nullKeyName groups the records with a null key.
const nullKeyName = "<null>"

// outRecord is one output record as compared: its value decoded (nil for
// null), its timestamp and partition.
type outRecord struct {
	Value     *string
	Timestamp int64
	Partition int32
}

func (r outRecord) String() string {
	v := "null"
	if r.Value != nil {
		v = strconv.Quote(*r.Value)
	}
	return fmt.Sprintf("%s @%gs p%d", v, float64(r.Timestamp-base)/1000, r.Partition)
}

// outputs are one run's output records: per output topic (without the
// prefix), per key, in offset order. A key's records are all in one
// partition (the key's), so offset order is the order the application
// produced them in. Null-key records are spread over partitions by the
// producer's sticky partitioner, so they are kept sorted by timestamp and
// value, with no partition: only their multiset is defined.
type outputs map[string]map[string][]outRecord

// values answers a key's values in order, "null" for nulls, for the
// expectations of TestJavaReference.
func (o outputs) values(topic, key string) []string {
	var vs []string
	for _, r := range o[topic][key] {
		if r.Value == nil {
			vs = append(vs, "null")
		} else {
			vs = append(vs, *r.Value)
		}
	}
	return vs
}

// collect reads every output topic of the run from its start to its end
// offsets, read_committed.
func collect(t *testing.T, cl *kgo.Client, adm *kadm.Client, prefix string) outputs {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out := outputs{}
	for _, topic := range outputTopics {
		recs, err := readTopic(ctx, cl, adm, prefix+topic.name)
		if err != nil {
			t.Fatal(err)
		}
		out[topic.name] = group(recs, topic.long)
	}
	return out
}

// readTopic reads one topic's records up to its end offsets.
func readTopic(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topic string) ([]*kgo.Record, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	want := map[int32]kgo.Offset{}
	remaining := map[int32]int64{}
	ends.Each(func(end kadm.ListedOffset) {
		if end.Offset > 0 {
			want[end.Partition] = kgo.NewOffset().AtStart()
			remaining[end.Partition] = end.Offset
		}
	})
	if len(want) == 0 {
		return nil, nil
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: want})
	defer cl.RemoveConsumePartitions(map[string][]int32{topic: slices.Collect(maps.Keys(want))})
	var recs []*kgo.Record
	for len(remaining) > 0 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w (partitions left: %v)", topic, err, remaining)
		}
		for _, fe := range fetches.Errors() {
			return nil, fmt.Errorf("read %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Topic != topic {
				return
			}
			recs = append(recs, r)
			if r.Offset+1 >= remaining[r.Partition] {
				delete(remaining, r.Partition)
			}
		})
	}
	return recs, nil
}

// group sorts a topic's records per key.
func group(recs []*kgo.Record, long bool) map[string][]outRecord {
	byKey := map[string][]outRecord{}
	for _, r := range recs {
		key := nullKeyName
		if r.Key != nil {
			key = string(r.Key)
		}
		o := outRecord{Timestamp: r.Timestamp.UnixMilli(), Partition: r.Partition}
		if r.Value != nil {
			v := string(r.Value)
			if long {
				v = decodeLong(r.Value)
			}
			o.Value = &v
		}
		if r.Key == nil {
			o.Partition = -1
		}
		byKey[key] = append(byKey[key], o)
	}
	if nulls := byKey[nullKeyName]; nulls != nil {
		slices.SortStableFunc(nulls, func(a, b outRecord) int { return strings.Compare(a.String(), b.String()) })
	}
	return byKey
}

// decodeLong decodes Serdes.Long's 8 big-endian bytes, or shows what is
// not 8 bytes long.
func decodeLong(b []byte) string {
	if len(b) != 8 {
		return fmt.Sprintf("<%d bytes, not a long: %x>", len(b), b)
	}
	return strconv.FormatInt(int64(binary.BigEndian.Uint64(b)), 10)
}

// diffOutputs answers every difference between the reference run and
// another, one line per differing key, in topic and key order.
func diffOutputs(want, got outputs, wantName, gotName string) []string {
	var diffs []string
	for _, topic := range outputTopics {
		w, g := want[topic.name], got[topic.name]
		keys := slices.Sorted(maps.Keys(w))
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		for _, k := range keys {
			if slices.EqualFunc(w[k], g[k], sameRecord) {
				continue
			}
			diffs = append(diffs, fmt.Sprintf("%s key %q:\n    %s: %s\n    %s: %s\n    first difference at record %d",
				topic.name, k, wantName, formatRecords(w[k]), gotName, formatRecords(g[k]), firstDifference(w[k], g[k])))
		}
	}
	return diffs
}

// sameRecord compares records by what they hold (Value is a pointer).
func sameRecord(a, b outRecord) bool { return a.String() == b.String() }

func formatRecords(rs []outRecord) string {
	if len(rs) == 0 {
		return "(none)"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func firstDifference(a, b []outRecord) int {
	for i := range min(len(a), len(b)) {
		if !sameRecord(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}
