package streams

import (
	"reflect"
	"testing"

	"github.com/samsa-io/samsa/streams/serde"
	"github.com/samsa-io/samsa/streams/state"
)

// capture is a changelog in memory: the last value per key, as compaction
// keeps it, in write order.
type capture struct {
	order []string
	last  map[string][]byte
}

func (c *capture) log(key, value []byte, _ int64) {
	if c.last == nil {
		c.last = map[string][]byte{}
	}
	if _, seen := c.last[string(key)]; !seen {
		c.order = append(c.order, string(key))
	}
	c.last[string(key)] = value
}

func (c *capture) records() []state.ChangelogRecord {
	var out []state.ChangelogRecord
	for _, k := range c.order {
		out = append(out, state.ChangelogRecord{Key: []byte(k), Value: c.last[k]})
	}
	return out
}

func TestOuterJoinStoreRestoresFromItsChangelog(t *testing.T) {
	def := &storeDef{name: "outer", kind: listValueStore, logging: true, keySerde: box(serde.String()), valueSerde: box(serde.String()), otherValueSerde: box(serde.Int64())}
	var c capture
	m := newMemOuterJoin(def)
	m.logger = c.log
	must(t, m.add(10, true, "a", "l1"))
	must(t, m.add(10, true, "a", "l2"))
	must(t, m.add(12, false, "a", int64(7)))
	must(t, m.add(15, true, "b", "l3"))
	must(t, m.remove(15, true, "b"))
	again := newMemOuterJoin(def)
	must(t, again.RestoreBatch(c.records()))
	if !reflect.DeepEqual(m.data, again.data) {
		t.Fatalf("restored %v, want %v", again.data, m.data)
	}
}

func TestSubscriptionStoreRestoresFromItsChangelog(t *testing.T) {
	def := &storeDef{name: "subs", kind: subscriptionStore, logging: true, keySerde: box(serde.String()), valueSerde: box(serde.String())}
	var c capture
	m := newMemSubscriptions(def)
	m.logger = c.log
	must(t, m.put("p1", "o1", &subscription{hash: []byte{1, 2}, instruction: 2, primaryKey: "o1", primaryPartition: 3}, 100))
	must(t, m.put("p1", "o2", &subscription{hash: nil, instruction: 1, primaryKey: "o2", primaryPartition: -1}, 101))
	must(t, m.put("p2", "o3", &subscription{hash: []byte{9}, instruction: 0, primaryKey: "o3", primaryPartition: 0}, 102))
	must(t, m.remove("p2", "o3"))
	again := newMemSubscriptions(def)
	must(t, again.RestoreBatch(c.records()))
	if !reflect.DeepEqual(m.data, again.data) {
		t.Fatalf("restored %v, want %v", again.data, m.data)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
