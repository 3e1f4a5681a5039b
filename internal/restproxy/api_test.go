package restproxy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const jsonType = "application/json"

// expect checks an answer's status and, when want is not "", its whole
// body against a JSON literal.
func expect(t *testing.T, what string, gotStatus int, got any, wantStatus int, want string) {
	t.Helper()
	if gotStatus != wantStatus {
		t.Fatalf("%s: status %d, want %d; body %v", what, gotStatus, wantStatus, got)
	}
	if want == "" {
		return
	}
	if d := cmp.Diff(jsonOf(t, want), got); d != "" {
		t.Fatalf("%s: body (-want +got):\n%s", what, d)
	}
}

// field reads a path of keys out of a decoded JSON object.
func field(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestRestClustersAndBrokers(t *testing.T) {
	tp := startProxy(t, Config{})
	c := tp.clusterID
	cluster := fmt.Sprintf(`{
		"kind": "KafkaCluster",
		"metadata": {"self": %q, "resource_name": "crn:///kafka=%s"},
		"cluster_id": %q,
		"controller": {"related": %q},
		"acls": {"related": %q},
		"brokers": {"related": %q},
		"broker_configs": {"related": %q},
		"consumer_groups": {"related": %q},
		"topics": {"related": %q},
		"partition_reassignments": {"related": %q}
	}`, tp.link(""), c, c, tp.link("/brokers/1"), tp.link("/acls"), tp.link("/brokers"), tp.link("/broker-configs"),
		tp.link("/consumer-groups"), tp.link("/topics"), tp.link("/topics/-/partitions/-/reassignment"))

	status, body := tp.do(t, "GET", "/v3/clusters", "", "")
	expect(t, "list clusters", status, body, 200, fmt.Sprintf(`{
		"kind": "KafkaClusterList",
		"metadata": {"self": %q, "next": null},
		"data": [%s]
	}`, tp.url+"/v3/clusters", cluster))

	status, body = tp.do(t, "GET", tp.v3(""), "", "")
	expect(t, "get cluster", status, body, 200, cluster)

	status, body = tp.do(t, "GET", "/v3/clusters/not-this-one", "", "")
	expect(t, "unknown cluster", status, body, 404, `{"error_code":404,"message":"Cluster not-this-one cannot be found."}`)
	status, body = tp.do(t, "GET", "/v3/clusters/not-this-one/topics", "", "")
	expect(t, "unknown cluster's topics", status, body, 404, `{"error_code":404,"message":"Cluster not-this-one cannot be found."}`)

	host, port, _ := strings.Cut(tp.broker, ":")
	broker := fmt.Sprintf(`{
		"kind": "KafkaBroker",
		"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/broker=1"},
		"cluster_id": %q,
		"broker_id": 1,
		"host": %q,
		"port": %s,
		"rack": null,
		"configs": {"related": %q},
		"partition_replicas": {"related": %q}
	}`, tp.link("/brokers/1"), c, c, host, port, tp.link("/brokers/1/configs"), tp.link("/brokers/1/partition-replicas"))
	status, body = tp.do(t, "GET", tp.v3("/brokers"), "", "")
	expect(t, "list brokers", status, body, 200, fmt.Sprintf(`{
		"kind": "KafkaBrokerList",
		"metadata": {"self": %q, "next": null},
		"data": [%s]
	}`, tp.link("/brokers"), broker))
	status, body = tp.do(t, "GET", tp.v3("/brokers/1"), "", "")
	expect(t, "get broker", status, body, 200, broker)
	status, body = tp.do(t, "GET", tp.v3("/brokers/7"), "", "")
	expect(t, "unknown broker", status, body, 404, `{"error_code":404,"message":"Broker 7 cannot be found."}`)
}

func TestRestTopicsPartitionsConfigs(t *testing.T) {
	tp := startProxy(t, Config{})
	c := tp.clusterID

	status, body := tp.do(t, "POST", tp.v3("/topics"), jsonType,
		`{"topic_name":"orders","partitions_count":3,"replication_factor":1,"configs":[{"name":"cleanup.policy","value":"compact"}]}`)
	topic := fmt.Sprintf(`{
		"kind": "KafkaTopic",
		"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/topic=orders"},
		"cluster_id": %q,
		"topic_name": "orders",
		"is_internal": false,
		"replication_factor": 1,
		"partitions_count": 3,
		"partitions": {"related": %q},
		"configs": {"related": %q},
		"partition_reassignments": {"related": %q}
	}`, tp.link("/topics/orders"), c, c, tp.link("/topics/orders/partitions"), tp.link("/topics/orders/configs"),
		tp.link("/topics/orders/partitions/-/reassignment"))
	expect(t, "create topic", status, body, 201, topic)

	status, body = tp.do(t, "GET", tp.v3("/topics/orders"), "", "")
	expect(t, "get topic", status, body, 200, topic)

	status, body = tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"orders","partitions_count":1}`)
	expect(t, "create existing", status, body, 400, "")
	if field(body, "error_code") != 40002.0 {
		t.Fatalf("create existing: %v, want error_code 40002", body)
	}

	status, body = tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"dry","partitions_count":2,"validate_only":true}`)
	expect(t, "validate only", status, body, 201, "")
	if field(body, "partitions_count") != 2.0 {
		t.Fatalf("validate only: %v", body)
	}
	status, body = tp.do(t, "GET", tp.v3("/topics/dry"), "", "")
	expect(t, "validated topic not created", status, body, 404, `{"error_code":40403,"message":"This server does not host this topic-partition."}`)

	status, body = tp.do(t, "GET", tp.v3("/topics"), "", "")
	expect(t, "list topics", status, body, 200, "")
	if field(body, "kind") != "KafkaTopicList" || field(body, "metadata", "self") != tp.link("/topics") {
		t.Fatalf("list topics: %v", body)
	}
	var names []string
	for _, d := range field(body, "data").([]any) {
		names = append(names, field(d, "topic_name").(string))
	}
	if !slices.Contains(names, "orders") || slices.Contains(names, "dry") {
		t.Fatalf("list topics: names %v, want orders and not dry", names)
	}

	partition1 := fmt.Sprintf(`{
		"kind": "KafkaPartition",
		"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/topic=orders/partition=1"},
		"cluster_id": %q,
		"topic_name": "orders",
		"partition_id": 1,
		"leader": {"related": %q},
		"replicas": {"related": %q},
		"reassignment": {"related": %q}
	}`, tp.link("/topics/orders/partitions/1"), c, c, tp.link("/topics/orders/partitions/1/replicas/1"),
		tp.link("/topics/orders/partitions/1/replicas"), tp.link("/topics/orders/partitions/1/reassignment"))
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/partitions/1"), "", "")
	expect(t, "get partition", status, body, 200, partition1)
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/partitions"), "", "")
	expect(t, "list partitions", status, body, 200, "")
	if d := field(body, "data").([]any); len(d) != 3 || field(d[2], "partition_id") != 2.0 {
		t.Fatalf("list partitions: %v", body)
	}
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/partitions/3"), "", "")
	expect(t, "unknown partition", status, body, 404, `{"error_code":40402,"message":"Partition not found."}`)

	replica := fmt.Sprintf(`{
		"kind": "KafkaReplica",
		"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/topic=orders/partition=1/replica=1"},
		"cluster_id": %q,
		"topic_name": "orders",
		"partition_id": 1,
		"broker_id": 1,
		"is_leader": true,
		"is_in_sync": true,
		"broker": {"related": %q}
	}`, tp.link("/topics/orders/partitions/1/replicas/1"), c, c, tp.link("/brokers/1"))
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/partitions/1/replicas"), "", "")
	expect(t, "list replicas", status, body, 200, fmt.Sprintf(`{"kind":"KafkaReplicaList","metadata":{"self":%q,"next":null},"data":[%s]}`,
		tp.link("/topics/orders/partitions/1/replicas"), replica))
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/partitions/1/replicas/1"), "", "")
	expect(t, "get replica", status, body, 200, replica)

	// Configs: the one set at creation is dynamic, with the default as
	// its synonym.
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/configs/cleanup.policy"), "", "")
	expect(t, "get config", status, body, 200, "")
	for k, want := range map[string]any{"kind": "KafkaTopicConfig", "name": "cleanup.policy", "value": "compact",
		"source": "DYNAMIC_TOPIC_CONFIG", "is_default": false, "is_read_only": false, "is_sensitive": false, "topic_name": "orders"} {
		if got := field(body, k); got != want {
			t.Fatalf("get config: %s = %v, want %v (%v)", k, got, want, body)
		}
	}
	if field(body, "metadata", "self") != tp.link("/topics/orders/configs/cleanup.policy") ||
		field(body, "metadata", "resource_name") != "crn:///kafka="+c+"/topic=orders/config=cleanup.policy" {
		t.Fatalf("get config: metadata %v", field(body, "metadata"))
	}
	if syn := field(body, "synonyms").([]any); len(syn) == 0 || field(syn[0], "source") != "DYNAMIC_TOPIC_CONFIG" {
		t.Fatalf("get config: synonyms %v", syn)
	}
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/configs"), "", "")
	expect(t, "list configs", status, body, 200, "")
	var retention any
	for _, d := range field(body, "data").([]any) {
		if field(d, "name") == "retention.ms" {
			retention = d
		}
	}
	if field(retention, "is_default") != true || field(retention, "source") != "DEFAULT_CONFIG" {
		t.Fatalf("list configs: retention.ms %v", retention)
	}

	status, body = tp.do(t, "PUT", tp.v3("/topics/orders/configs/retention.ms"), jsonType, `{"value":"3600000"}`)
	expect(t, "update config", status, body, 204, "")
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/configs/retention.ms"), "", "")
	if status != 200 || field(body, "value") != "3600000" || field(body, "source") != "DYNAMIC_TOPIC_CONFIG" {
		t.Fatalf("config after update: %d %v", status, body)
	}
	status, body = tp.do(t, "PUT", tp.v3("/topics/orders/configs/retention.ms"), jsonType, `{"value":"soon"}`)
	expect(t, "update config, bad value", status, body, 400, "")
	status, body = tp.do(t, "DELETE", tp.v3("/topics/orders/configs/retention.ms"), "", "")
	expect(t, "reset config", status, body, 204, "")
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/configs/retention.ms"), "", "")
	if status != 200 || field(body, "source") != "DEFAULT_CONFIG" {
		t.Fatalf("config after reset: %d %v", status, body)
	}
	status, body = tp.do(t, "GET", tp.v3("/topics/orders/configs/no.such.config"), "", "")
	expect(t, "unknown config", status, body, 404,
		fmt.Sprintf(`{"error_code":404,"message":"Config no.such.config cannot be found for topic orders in cluster %s."}`, c))
	status, body = tp.do(t, "GET", tp.v3("/topics/nope/configs"), "", "")
	expect(t, "configs of unknown topic", status, body, 404, `{"error_code":40403,"message":"This server does not host this topic-partition."}`)

	status, body = tp.do(t, "DELETE", tp.v3("/topics/orders"), "", "")
	expect(t, "delete topic", status, body, 204, "")
	status, body = tp.do(t, "DELETE", tp.v3("/topics/orders"), "", "")
	expect(t, "delete deleted topic", status, body, 404, `{"error_code":40403,"message":"This server does not host this topic-partition."}`)
}
