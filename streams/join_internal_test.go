package streams

import (
	"fmt"
	"testing"
)

// A stream-table join asks that the stream's source topics (after a key
// change: the repartition topic) and the table's have equal partition
// counts; the runtime checks it.
func TestStreamTableJoinCopartition(t *testing.T) {
	b := NewBuilder()
	orders := From[string, string](b, []string{"orders"})
	rekeyed := SelectKey(orders, func(_, v string) string { return v })
	prices := TableFrom(b, "prices", Consumed[string, string]{})
	StreamTableJoin(rekeyed, prices, func(_, o, p string) string { return o + p }).To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(topo.copartition)
	if want := "[[KSTREAM-KEY-SELECT-0000000001-repartition prices]]"; got != want {
		t.Fatalf("copartition groups %s, want %s", got, want)
	}
	if _, ok := topo.internalTopics["KSTREAM-KEY-SELECT-0000000001-repartition"]; !ok {
		t.Fatalf("no repartition topic: %v", topo.internalTopics)
	}
}
