package telemetry

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/samsa-io/samsa/internal/config"
)

var javaClient = Client{ClientID: "orders-producer", SoftwareName: "apache-kafka-java", SoftwareVersion: "4.4.0",
	SourceAddress: "127.0.0.1", SourcePort: "50123"}

var instA = InstanceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func TestMatches(t *testing.T) {
	for _, tt := range []struct {
		match string
		want  bool
	}{
		{"", true},
		{"client_id=orders-.*", true},
		{"client_id=orders", false}, // the whole value must match
		{"client_id=.*-producer,client_software_name=apache-kafka-java", true},
		{"client_id=.*-producer,client_software_name=librdkafka", false}, // every pattern must match
		{"client_software_version=4\\.4\\..*", true},
		{"client_source_address=127\\.0\\.0\\.1", true},
		{"client_source_port=50123", true},
		{"client_instance_id=" + instA.String(), true},
		{"client_instance_id=AAAA.*", false},
	} {
		s := sub(t, "s", map[string]string{"match": tt.match})
		if got := matches(s, instA, javaClient); got != tt.want {
			t.Errorf("match %q: %v, want %v", tt.match, got, tt.want)
		}
	}
	// A client that sent no software name (ApiVersions before v3) matches
	// no pattern on it, not even .*, as Kafka's null.
	s := sub(t, "s", map[string]string{"match": "client_software_name=.*"})
	if matches(s, instA, Client{ClientID: "old"}) {
		t.Error("a pattern matched a software name the client never sent")
	}
}

func TestSubscribeMerges(t *testing.T) {
	producers := sub(t, "producers", map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "1000",
		"match": "client_id=.*-producer"})
	consumers := sub(t, "consumers", map[string]string{"metrics": "org.apache.kafka.consumer.", "interval.ms": "500",
		"match": "client_id=.*-consumer"})
	slow := sub(t, "all-slow", map[string]string{"metrics": "org.apache.kafka.producer.,org.apache.kafka.common.", "interval.ms": "60000"})
	everything := sub(t, "everything", map[string]string{"metrics": "*", "interval.ms": "2000"})

	for _, tt := range []struct {
		name string
		subs []config.ClientMetricsSubscription
		want Subscribed
	}{
		{"none", nil, Subscribed{IntervalMs: DefaultIntervalMs}},
		{"one", []config.ClientMetricsSubscription{producers, consumers}, Subscribed{Metrics: []string{"org.apache.kafka.producer."}, IntervalMs: 1000}},
		{"merged, the shortest interval, each prefix once", []config.ClientMetricsSubscription{slow, producers},
			Subscribed{Metrics: []string{"org.apache.kafka.common.", "org.apache.kafka.producer."}, IntervalMs: 1000}},
		{"* wins", []config.ClientMetricsSubscription{producers, everything}, Subscribed{Metrics: []string{"*"}, IntervalMs: 1000}},
	} {
		got := subscribe(tt.subs, instA, javaClient)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestSubscriptionID(t *testing.T) {
	a := Subscribed{Metrics: []string{"org.apache.kafka.producer."}, IntervalMs: 1000}
	instB := instA
	instB[0]++
	id := SubscriptionID(a, instA)
	if again := SubscriptionID(Subscribed{Metrics: slices.Clone(a.Metrics), IntervalMs: 1000}, instA); again != id {
		t.Errorf("the same content gave %d then %d: another broker would refuse the client's pushes", id, again)
	}
	for name, other := range map[string]int32{
		"another interval": SubscriptionID(Subscribed{Metrics: a.Metrics, IntervalMs: 2000}, instA),
		"another prefix":   SubscriptionID(Subscribed{Metrics: []string{"org.apache.kafka.consumer."}, IntervalMs: 1000}, instA),
		"no metrics":       SubscriptionID(Subscribed{IntervalMs: 1000}, instA),
		"another instance": SubscriptionID(a, instB),
	} {
		if other == id {
			t.Errorf("%s: the same subscription ID %d", name, id)
		}
	}
}

func TestInstanceIDString(t *testing.T) {
	// Kafka's Uuid.toString: URL-safe base64, no padding.
	if got, want := (InstanceID{0xfb, 0xff}).String(), "-_8AAAAAAAAAAAAAAAAAAA"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
