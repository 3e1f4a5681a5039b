package streams

import (
	"fmt"
	"testing"

	"github.com/samsa-io/samsa/streams/serde"
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

// A subscription response made for a left value that has changed since
// is dropped (Kafka's hash check); one for the current value is joined.
// The driver answers at once, so the stale response is piped by hand.
func TestForeignKeyJoinDropsStaleResponse(t *testing.T) {
	b := NewBuilder()
	orders := TableFrom(b, "orders", Consumed[string, string]{})
	products := TableFrom(b, "products", Consumed[string, string]{})
	ForeignKeyJoin(orders, products, func(_ string, v string) (string, bool) { return v[:2], true },
		func(_ string, o, p string) string { return o + "/" + p }).ToStream().To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	const registration, response = "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic", "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic"
	for _, topic := range []string{registration, response} {
		if _, ok := topo.internalTopics[topic]; !ok {
			t.Fatalf("no internal topic %s in %v", topic, topo.internalTopics)
		}
	}
	if got, want := fmt.Sprint(topo.copartition), "[[products "+registration+"] [orders "+response+"]]"; got != want {
		t.Fatalf("copartition groups %s, want %s", got, want)
	}
	d, err := NewTestDriver(topo, TestDriverConfig{ApplicationID: "app"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := NewInputTopic(d, "orders", serde.String(), serde.String()).Pipe("o1", "p1:a", 10); err != nil {
		t.Fatal(err)
	}
	rs := &responseSerde{value: box(serde.String())}
	send := func(leftValue string) {
		t.Helper()
		vb, err := rs.serialize(response, &subscriptionResponse{hash: valueHash([]byte(leftValue)), value: "PX"})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.pipe("app-"+response, inRecord{key: []byte("o1"), value: vb, timestamp: 20}); err != nil {
			t.Fatal(err)
		}
	}
	send("p1:old")
	out := NewOutputTopic(d, "out", serde.String(), serde.String())
	if !out.IsEmpty() {
		r, _ := out.ReadRecord()
		t.Fatalf("a stale response was joined: %+v", r)
	}
	send("p1:a")
	r, err := out.ReadRecord()
	if err != nil || r.Key != "o1" || r.Value != "p1:a/PX" || r.Timestamp != 20 {
		t.Fatalf("got %+v, %v; want o1=p1:a/PX@20", r, err)
	}

	// A foreign key change removes the old subscription (its answers
	// would be stale anyway: this keeps the store from growing).
	if err := NewInputTopic(d, "orders", serde.String(), serde.String()).Pipe("o1", "p2:a", 30); err != nil {
		t.Fatal(err)
	}
	var subs subscriptionState
	for _, tk := range d.tasks {
		if s, ok := tk.stores["KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010"]; ok {
			subs = s.(subscriptionState)
		}
	}
	if subs == nil {
		t.Fatal("no subscription store")
	}
	if _, _, ok, _ := subs.get("p1", "o1"); ok {
		t.Fatal("the subscription of o1 to p1 outlived its foreign key change")
	}
	if sub, ts, ok, _ := subs.get("p2", "o1"); !ok || ts != 30 || sub.instruction != propagateNullIfNoFKValAvailable {
		t.Fatalf("subscription of o1 to p2: %+v at %d, %v", sub, ts, ok)
	}
}

// The wrappers read back what they wrote.
func TestForeignKeyWrapperSerdes(t *testing.T) {
	ss := &subscriptionSerde{pk: box(serde.String())}
	for _, sub := range []*subscription{
		{hash: valueHash([]byte("v")), instruction: propagateOnlyIfFKValAvailable, primaryKey: "k", primaryPartition: 3},
		{instruction: deleteKeyAndPropagate, primaryKey: "", primaryPartition: 0},
	} {
		b, err := ss.serialize("t", sub)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ss.deserialize("t", b)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(sub) {
			t.Fatalf("got %v, want %v", got, sub)
		}
	}
	if _, err := ss.deserialize("t", []byte{1}); err == nil {
		t.Fatal("a cut subscription decoded")
	}
	rs := &responseSerde{value: box(serde.String())}
	b, err := rs.serialize("t", &subscriptionResponse{value: "x", primaryPartition: -1})
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0x80 || string(b[1:]) != "x" {
		t.Fatalf("response bytes %x", b)
	}
	got, err := rs.deserialize("t", b)
	if err != nil || got.(*subscriptionResponse).value != "x" || got.(*subscriptionResponse).hash != nil {
		t.Fatalf("got %+v, %v", got, err)
	}
}
