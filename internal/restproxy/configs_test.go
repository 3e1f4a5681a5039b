package restproxy

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describedConfig is what an independent client (not the proxy) reads of
// one config: its value and source, "" and "absent" when the resource has
// no such config.
func describedConfig(t *testing.T, tp *testProxy, typ kmsg.ConfigResourceType, name, config string) (string, string) {
	t.Helper()
	r := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = typ, name
	r.Resources = append(r.Resources, res)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := r.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.Resources[0].Configs {
		if c.Name == config {
			return deref(c.Value), c.Source.String()
		}
	}
	return "", "absent"
}

// TestRestBrokerConfigs: a broker's configs listed and read as the broker
// describes them; one set, reset and changed in a batch, each change seen
// by an independent client; unknown brokers and configs 404, bad batches
// 400.
func TestRestBrokerConfigs(t *testing.T) {
	tp := startProxy(t, Config{})
	c := tp.clusterID

	code, got := tp.do(t, "GET", tp.v3("/brokers/1/configs/log.retention.ms"), "", "")
	expect(t, "get broker config", code, got, 200, fmt.Sprintf(`{
		"kind": "KafkaBrokerConfig",
		"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/broker=1/config=log.retention.ms"},
		"cluster_id": %q, "broker_id": 1, "name": "log.retention.ms", "value": "604800000",
		"is_default": true, "is_read_only": false, "is_sensitive": false, "source": "DEFAULT_CONFIG",
		"synonyms": [{"name": "log.retention.hours", "value": "168", "source": "DEFAULT_CONFIG"}]}`,
		tp.link("/brokers/1/configs/log.retention.ms"), c, c))

	code, got = tp.do(t, "GET", tp.v3("/brokers/1/configs"), "", "")
	expect(t, "list broker configs", code, got, 200, "")
	if field(got, "kind") != "KafkaBrokerConfigList" || field(got, "metadata", "self") != tp.link("/brokers/1/configs") {
		t.Fatalf("list: %v", got)
	}
	var names []string
	for _, d := range field(got, "data").([]any) {
		names = append(names, field(d, "name").(string))
	}
	if !slices.IsSorted(names) || !slices.Contains(names, "log.retention.ms") || len(names) < 20 {
		t.Fatalf("broker config names: %v", names)
	}

	code, got = tp.do(t, "GET", tp.v3("/brokers/-/configs"), "", "")
	expect(t, "every broker's configs", code, got, 200, "")
	if n := len(field(got, "data").([]any)); n != len(names) {
		t.Fatalf("every broker's configs: %d, broker 1 has %d", n, len(names))
	}

	// Set, then reset, log.cleaner.threads on broker 1 (a dynamic
	// per-broker config).
	code, got = tp.do(t, "PUT", tp.v3("/brokers/1/configs/log.cleaner.threads"), jsonType, `{"value":"3"}`)
	expect(t, "update broker config", code, got, 204, "")
	if v, src := describedConfig(t, tp, kmsg.ConfigResourceTypeBroker, "1", "log.cleaner.threads"); v != "3" || src != "DYNAMIC_BROKER_CONFIG" {
		t.Fatalf("after PUT: %s %s", v, src)
	}
	code, got = tp.do(t, "DELETE", tp.v3("/brokers/1/configs/log.cleaner.threads"), "", "")
	expect(t, "reset broker config", code, got, 204, "")
	if _, src := describedConfig(t, tp, kmsg.ConfigResourceTypeBroker, "1", "log.cleaner.threads"); src == "DYNAMIC_BROKER_CONFIG" {
		t.Fatalf("after DELETE: still %s", src)
	}
	code, got = tp.do(t, "POST", tp.v3("/brokers/1/configs:alter"), jsonType,
		`{"data":[{"name":"log.cleaner.threads","value":"2"},{"name":"log.cleaner.backoff.ms","operation":"delete"}]}`)
	expect(t, "alter broker configs", code, got, 204, "")
	if v, src := describedConfig(t, tp, kmsg.ConfigResourceTypeBroker, "1", "log.cleaner.threads"); v != "2" || src != "DYNAMIC_BROKER_CONFIG" {
		t.Fatalf("after :alter: %s %s", v, src)
	}

	for _, bad := range []struct {
		what, method, path, body string
		status, code             int
	}{
		{"unknown broker", "GET", "/brokers/9/configs", "", 404, 404},
		{"broker not a number", "GET", "/brokers/x/configs/log.retention.ms", "", 404, 404},
		{"unknown config", "GET", "/brokers/1/configs/no.such.config", "", 404, 404},
		{"update unknown config", "PUT", "/brokers/1/configs/no.such.config", `{"value":"1"}`, 404, 404},
		{"alter unknown config", "POST", "/brokers/1/configs:alter", `{"data":[{"name":"no.such.config","value":"1"}]}`, 404, 404},
		{"alter bad operation", "POST", "/brokers/1/configs:alter", `{"data":[{"name":"log.cleaner.threads","operation":"APPEND"}]}`, 400, 400},
		{"alter without data", "POST", "/brokers/1/configs:alter", `{}`, 400, 400},
		{"alter a name twice", "POST", "/brokers/1/configs:alter", `{"data":[{"name":"a","value":"1"},{"name":"a","value":"2"}]}`, 400, 400},
		{"alter a bad value", "POST", "/brokers/1/configs:alter", `{"data":[{"name":"log.cleaner.threads","value":"many"}]}`, 400, 40002},
	} {
		ct := ""
		if bad.body != "" {
			ct = jsonType
		}
		code, got := tp.do(t, bad.method, tp.v3(bad.path), ct, bad.body)
		if code != bad.status || field(got, "error_code") != float64(bad.code) {
			t.Errorf("%s: %d %v, want %d error_code %d", bad.what, code, got, bad.status, bad.code)
		}
	}
	if v, _ := describedConfig(t, tp, kmsg.ConfigResourceTypeBroker, "1", "log.cleaner.threads"); v != "2" {
		t.Fatalf("a refused batch changed log.cleaner.threads to %s", v)
	}
}

// TestRestClusterConfigs: cluster-wide broker configs are the dynamic
// defaults only: none at first, one after PUT (any name may be set, as
// none is listed before), gone after a batch DELETE; DELETE of one not
// set is 404.
func TestRestClusterConfigs(t *testing.T) {
	tp := startProxy(t, Config{})
	c := tp.clusterID
	code, got := tp.do(t, "GET", tp.v3("/broker-configs"), "", "")
	expect(t, "no cluster configs", code, got, 200, fmt.Sprintf(`{"kind":"KafkaClusterConfigList",
		"metadata":{"self":%q,"next":null},"data":[]}`, tp.link("/broker-configs")))

	code, got = tp.do(t, "PUT", tp.v3("/broker-configs/log.retention.ms"), jsonType, `{"value":"3600000"}`)
	expect(t, "set a cluster config", code, got, 204, "")
	if v, src := describedConfig(t, tp, kmsg.ConfigResourceTypeBroker, "1", "log.retention.ms"); v != "3600000" || src != "DYNAMIC_DEFAULT_BROKER_CONFIG" {
		t.Fatalf("broker 1 after the cluster default: %s %s", v, src)
	}
	one := fmt.Sprintf(`{"kind":"KafkaClusterConfig",
		"metadata":{"self":%q,"resource_name":"crn:///kafka=%s/broker-config=log.retention.ms"},
		"cluster_id":%q,"config_type":"BROKER","name":"log.retention.ms","value":"3600000",
		"is_default":false,"is_read_only":false,"is_sensitive":false,"source":"DYNAMIC_DEFAULT_BROKER_CONFIG",
		"synonyms":[{"name":"log.retention.ms","value":"3600000","source":"DYNAMIC_DEFAULT_BROKER_CONFIG"}]}`,
		tp.link("/broker-configs/log.retention.ms"), c, c)
	code, got = tp.do(t, "GET", tp.v3("/broker-configs/log.retention.ms"), "", "")
	expect(t, "get the cluster config", code, got, 200, one)
	code, got = tp.do(t, "GET", tp.v3("/broker-configs"), "", "")
	expect(t, "list the cluster config", code, got, 200, fmt.Sprintf(`{"kind":"KafkaClusterConfigList",
		"metadata":{"self":%q,"next":null},"data":[%s]}`, tp.link("/broker-configs"), one))

	code, got = tp.do(t, "POST", tp.v3("/broker-configs:alter"), jsonType, `{"data":[{"name":"log.retention.ms","operation":"DELETE"}]}`)
	expect(t, "delete it in a batch", code, got, 204, "")
	if _, src := describedConfig(t, tp, kmsg.ConfigResourceTypeBroker, "", "log.retention.ms"); src != "absent" {
		t.Fatalf("cluster default after DELETE: %s", src)
	}
	code, got = tp.do(t, "DELETE", tp.v3("/broker-configs/log.retention.ms"), "", "")
	expect(t, "delete one not set", code, got, 404, fmt.Sprintf(`{"error_code":404,"message":"Config log.retention.ms cannot be found for cluster %s."}`, c))
	code, got = tp.do(t, "GET", tp.v3("/broker-configs/log.retention.ms"), "", "")
	expect(t, "get one not set", code, got, 404, "")
	code, got = tp.do(t, "PUT", tp.v3("/broker-configs/log.retention.ms"), jsonType, `{"value":"soon"}`)
	expect(t, "a bad value", code, got, 400, "")
	code, got = tp.do(t, "GET", "/v3/clusters/other/broker-configs", "", "")
	expect(t, "unknown cluster", code, got, 404, `{"error_code":404,"message":"Cluster other cannot be found."}`)
}

// TestRestTopicConfigsBatch: a topic's :alter batch, dry-run and real,
// and every topic's configs.
func TestRestTopicConfigsBatch(t *testing.T) {
	tp := startProxy(t, Config{})
	for _, name := range []string{"alpha", "beta"} {
		code, got := tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"`+name+`","partitions_count":1,
			"configs":[{"name":"cleanup.policy","value":"compact"}]}`)
		expect(t, "create "+name, code, got, 201, "")
	}
	batch := `{"data":[{"name":"retention.ms","value":"1000"},{"name":"cleanup.policy","operation":"DELETE"}]`
	code, got := tp.do(t, "POST", tp.v3("/topics/alpha/configs:alter"), jsonType, batch+`,"validate_only":true}`)
	expect(t, "validate only", code, got, 204, "")
	if v, src := describedConfig(t, tp, kmsg.ConfigResourceTypeTopic, "alpha", "cleanup.policy"); v != "compact" || src != "DYNAMIC_TOPIC_CONFIG" {
		t.Fatalf("validate_only changed cleanup.policy: %s %s", v, src)
	}
	code, got = tp.do(t, "POST", tp.v3("/topics/alpha/configs:alter"), jsonType, batch+`}`)
	expect(t, "alter", code, got, 204, "")
	if v, src := describedConfig(t, tp, kmsg.ConfigResourceTypeTopic, "alpha", "retention.ms"); v != "1000" || src != "DYNAMIC_TOPIC_CONFIG" {
		t.Fatalf("retention.ms after :alter: %s %s", v, src)
	}
	if v, src := describedConfig(t, tp, kmsg.ConfigResourceTypeTopic, "alpha", "cleanup.policy"); v != "delete" || src == "DYNAMIC_TOPIC_CONFIG" {
		t.Fatalf("cleanup.policy after :alter: %s %s", v, src)
	}
	code, got = tp.do(t, "POST", tp.v3("/topics/alpha/configs:alter"), jsonType, `{"data":[{"name":"no.such","value":"1"}]}`)
	expect(t, "unknown config", code, got, 404, fmt.Sprintf(`{"error_code":404,"message":"Config no.such cannot be found for topic alpha in cluster %s."}`, tp.clusterID))
	code, got = tp.do(t, "POST", tp.v3("/topics/nope/configs:alter"), jsonType, `{"data":[{"name":"retention.ms","value":"1"}]}`)
	expect(t, "unknown topic", code, got, 404, `{"error_code":40403,"message":"This server does not host this topic-partition."}`)
	code, got = tp.do(t, "POST", tp.v3("/topics/alpha/configs:alter"), jsonType, `{"data":[{"name":"retention.ms","value":"-5x"}]}`)
	expect(t, "bad value", code, got, 400, "")

	code, got = tp.do(t, "GET", tp.v3("/topics/-/configs"), "", "")
	expect(t, "every topic's configs", code, got, 200, "")
	perTopic := map[string]int{}
	for _, d := range field(got, "data").([]any) {
		perTopic[field(d, "topic_name").(string)]++
		if field(d, "topic_name") == "beta" && field(d, "name") == "cleanup.policy" && field(d, "value") != "compact" {
			t.Errorf("beta's cleanup.policy: %v", d)
		}
	}
	if perTopic["alpha"] == 0 || perTopic["alpha"] != perTopic["beta"] {
		t.Fatalf("configs per topic: %v", perTopic)
	}
}
