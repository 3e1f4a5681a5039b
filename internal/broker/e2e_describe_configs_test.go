package broker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// describedConfigs describes one resource with synonyms, and returns each
// config asked for as "value SOURCE [synonyms]".
func describedConfigs(t *testing.T, r *rawConn, typ kmsg.ConfigResourceType, name string, configs ...string) map[string]string {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version, req.IncludeSynonyms = 4, true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, configs
	req.Resources = append(req.Resources, rr)
	resp := r.roundTrip(req, 1).(*kmsg.DescribeConfigsResponse)
	if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("describe %s %q: %+v", typ, name, resp.Resources)
	}
	out := map[string]string{}
	for _, c := range resp.Resources[0].Configs {
		var syns []string
		for _, s := range c.ConfigSynonyms {
			syns = append(syns, fmt.Sprintf("%s:%s=%s", s.Source, s.Name, orNull(s.Value)))
		}
		out[c.Name] = fmt.Sprintf("%s %s [%s]", orNull(c.Value), c.Source, strings.Join(syns, ", "))
	}
	return out
}

func orNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// TestDescribeConfigsSourcesAndSynonyms: a value set in every layer, and
// what DescribeConfigs reports for a topic, this broker and the cluster
// default: the effective value, where it came from, and every place it is
// set, most precedent first, as Kafka's ConfigHelper lists them.
func TestDescribeConfigsSourcesAndSynonyms(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"log.retention.hours": "100", "log.segment.bytes": "2097152"})
	adm, ctx := adminClient(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": ptr("1000")}, "layered"); err != nil {
		t.Fatal(err)
	}
	set := func(broker string, name, value string) {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, broker
		rr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: name, Op: kmsg.IncrementalAlterConfigOpSet, Value: &value}}
		req.Resources = append(req.Resources, rr)
		resp := dialRaw(t, b).roundTrip(req, 1).(*kmsg.IncrementalAlterConfigsResponse)
		if resp.Resources[0].ErrorCode != 0 {
			t.Fatalf("set %s=%s on %q: %+v", name, value, broker, resp.Resources[0])
		}
	}
	set("", "log.retention.ms", "5000")
	set("", "log.segment.bytes", "3145728")
	set("1", "log.segment.bytes", "4194304")

	r := dialRaw(t, b)
	for _, tc := range []struct {
		typ  kmsg.ConfigResourceType
		name string
		want map[string]string
	}{
		{kmsg.ConfigResourceTypeTopic, "layered", map[string]string{
			"retention.ms": "1000 DYNAMIC_TOPIC_CONFIG [DYNAMIC_TOPIC_CONFIG:retention.ms=1000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=5000, " +
				"STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168]",
			"segment.bytes": "4194304 DYNAMIC_BROKER_CONFIG [DYNAMIC_BROKER_CONFIG:log.segment.bytes=4194304, DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=3145728, " +
				"STATIC_BROKER_CONFIG:log.segment.bytes=2097152, DEFAULT_CONFIG:log.segment.bytes=1073741824]",
			"cleanup.policy": "delete DEFAULT_CONFIG [DEFAULT_CONFIG:log.cleanup.policy=delete]",
		}},
		{kmsg.ConfigResourceTypeBroker, "1", map[string]string{
			"log.retention.ms": "5000 DYNAMIC_DEFAULT_BROKER_CONFIG [DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=5000, " +
				"STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168]",
			"log.segment.bytes": "4194304 DYNAMIC_BROKER_CONFIG [DYNAMIC_BROKER_CONFIG:log.segment.bytes=4194304, DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=3145728, " +
				"STATIC_BROKER_CONFIG:log.segment.bytes=2097152, DEFAULT_CONFIG:log.segment.bytes=1073741824]",
			"log.retention.hours": "100 STATIC_BROKER_CONFIG [STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168]",
		}},
		// The cluster default lists what was set there, as set, even where
		// this broker's own setting wins.
		{kmsg.ConfigResourceTypeBroker, "", map[string]string{
			"log.retention.ms":  "5000 DYNAMIC_DEFAULT_BROKER_CONFIG [DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=5000]",
			"log.segment.bytes": "3145728 DYNAMIC_DEFAULT_BROKER_CONFIG [DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=3145728]",
		}},
	} {
		var names []string
		for n := range tc.want {
			names = append(names, n)
		}
		got := describedConfigs(t, r, tc.typ, tc.name, names...)
		for n, want := range tc.want {
			if got[n] != want {
				t.Errorf("%s %q %s:\n got %s\nwant %s", tc.typ, tc.name, n, got[n], want)
			}
		}
	}
	// Without names, the cluster default lists exactly its two.
	if got := describedConfigs(t, r, kmsg.ConfigResourceTypeBroker, ""); len(got) != 2 {
		t.Errorf("the cluster default describes %d configs: %v", len(got), got)
	}
	// kadm's view agrees.
	rcs, err := adm.DescribeBrokerConfigs(ctx)
	if err != nil || len(rcs) != 1 || len(rcs[0].Configs) != 2 {
		t.Fatalf("kadm cluster default: %v %+v", err, rcs)
	}
}
