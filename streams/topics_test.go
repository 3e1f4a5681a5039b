package streams

import (
	"fmt"
	"strings"
	"testing"
)

// Internal topics in a co-partition group take the group's external count
// (Kafka's CopartitionedTopicsEnforcer), not their writers': a foreign-key
// join of a 3-partition left table to a 2-partition right table has a
// 2-partition registration topic (read with the right table) and a
// 3-partition response topic (read with the left table), and a re-keyed
// stream joined with a table gets the table's count.
func TestPlanTopicsSizesCopartitionedInternalTopics(t *testing.T) {
	b := NewBuilder()
	orders := TableFrom(b, "orders", Consumed[string, string]{})
	products := TableFrom(b, "products", Consumed[string, string]{})
	ForeignKeyJoin(orders, products, func(_, v string) (string, bool) { return strings.Split(v, ":")[0], true },
		func(_, o, p string) string { return o + p }).ToStream().To("fk-out")
	clicks := From[string, string](b, []string{"clicks"})
	rekeyed := SelectKey(clicks, func(_, v string) string { return v })
	StreamTableJoin(rekeyed, products, func(_, c, p string) string { return c + p }).To("stj-out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	bt, err := topo.build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := planTopics("app", topo, bt, map[string]int32{"orders": 3, "products": 2, "clicks": 5}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int32{
		"app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic": 2,
		"app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic":     3,
	}
	for name, n := range want {
		if got, ok := p.repartition[name]; !ok || got != n {
			t.Errorf("%s: %d partitions (planned: %v), want %d", name, got, ok, n)
		}
	}
	var rekey string
	for name := range p.repartition {
		if strings.Contains(name, "KEY-SELECT") {
			rekey = name
		}
	}
	if got := p.repartition[rekey]; rekey == "" || got != 2 {
		t.Errorf("re-keyed stream's topic %q: %d partitions, want the table's 2 (plan %v)", rekey, got, p.repartition)
	}
	var tasks []int32
	for id := range int32(len(p.tasks)) {
		tasks = append(tasks, p.tasks[id])
	}
	// The left table's, the right table's (with the join of the re-keyed
	// stream), the clicks' source.
	if got := fmt.Sprint(tasks); got != "[3 2 5]" {
		t.Errorf("task counts per subtopology %s, want [3 2 5]", got)
	}
}

// External topics of one group that disagree are refused, as before.
func TestPlanTopicsRefusesUnequalExternalTopics(t *testing.T) {
	b := NewBuilder()
	s := From[string, string](b, []string{"s"})
	tb := TableFrom(b, "t", Consumed[string, string]{})
	StreamTableJoin(s, tb, func(_, a, c string) string { return a + c }).To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	bt, err := topo.build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := planTopics("app", topo, bt, map[string]int32{"s": 3, "t": 2}, 0); err == nil || !strings.Contains(err.Error(), "not co-partitioned") {
		t.Fatalf("err %v, want not co-partitioned", err)
	}
}
