package streams

import (
	"bytes"
	"errors"
	"testing"

	"github.com/samsa-io/samsa/streams/serde"
)

// The grouped table's repartition values in Kafka's ChangedSerializer
// format: [old][0], [new][1], [zigzag varint len(new)][new][old][2]; the
// reader also takes the isLatest forms 3-5.
func TestChangeSerde(t *testing.T) {
	cs := changeSerde{inner: box(serde.String())}
	for _, c := range []struct {
		ch   change
		want []byte
	}{
		{change{oldV: "ab"}, []byte("ab\x00")},
		{change{newV: "xyz"}, []byte("xyz\x01")},
		{change{newV: "xyz", oldV: "ab"}, []byte("\x06xyzab\x02")},
	} {
		got, err := cs.serialize("t", c.ch)
		if err != nil || !bytes.Equal(got, c.want) {
			t.Fatalf("serialize %+v = %q, %v; want %q", c.ch, got, err, c.want)
		}
		back, err := cs.deserialize("t", got)
		if err != nil || back != c.ch {
			t.Fatalf("deserialize %q = %+v, %v", got, back, err)
		}
	}
	back, err := cs.deserialize("t", []byte("\x06xyzab\x01\x05"))
	if err != nil || back != (change{newV: "xyz", oldV: "ab"}) {
		t.Fatalf("flag 5: %+v, %v", back, err)
	}
	for _, bad := range [][]byte{nil, []byte("x\x09"), []byte("\x0axy\x02"), []byte("\x03")} {
		if _, err := cs.deserialize("t", bad); !errors.Is(err, serde.ErrInvalidData) {
			t.Errorf("deserialize %q: %v, want ErrInvalidData", bad, err)
		}
	}
	if _, err := cs.serialize("t", change{}); err == nil {
		t.Error("a change of two nulls serialized")
	}
}

// Repartition asks for its partition count and keeps its partitioner.
func TestRepartitionTopicConfig(t *testing.T) {
	b := NewBuilder()
	From[string, string](b, []string{"in"}).Repartition(Repartitioned[string, string]{Name: "rp", NumberOfPartitions: 4,
		Partitioner: func(_ string, k, _ string, n int32) (int32, bool) { return n - 1, true }}).To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	it := topo.internalTopics["rp-repartition"]
	if it == nil || it.partitions != 4 {
		t.Fatalf("internal topic %+v, want rp-repartition with 4 partitions", it)
	}
	sink := topo.nodes["rp-repartition-sink"]
	if p, ok := sink.partitioner("rp-repartition", "k", "v", 4); !ok || p != 3 {
		t.Fatalf("partitioner gave %d, %v", p, ok)
	}
	b = NewBuilder()
	From[string, string](b, []string{"in"}).Repartition(Repartitioned[string, string]{NumberOfPartitions: -1})
	if _, err := b.Build(); err == nil {
		t.Fatal("a negative partition count was accepted")
	}
}
