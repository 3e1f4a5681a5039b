package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestClusterInfo(t *testing.T) {
	b := newSamsaBroker(t)
	md, err := kadm.NewClient(b.client()).BrokerMetadata(t.Context())
	if err != nil || md.Cluster == "" {
		t.Fatalf("metadata: %+v, %v", md, err)
	}
	host, port, _ := net.SplitHostPort(b.addr)
	var info clusterInfo
	if err := json.Unmarshal([]byte(b.ok("", "cluster", "info", "--json")), &info); err != nil {
		t.Fatal(err)
	}
	if info.ClusterID != md.Cluster || info.Controller != 1 || len(info.Brokers) != 1 {
		t.Fatalf("cluster info = %+v", info)
	}
	if br := info.Brokers[0]; br.NodeID != 1 || br.Host != host || strconv.Itoa(int(br.Port)) != port || br.Rack != nil {
		t.Fatalf("broker = %+v, want node 1 at %s without a rack", br, b.addr)
	}
	want := fmt.Sprintf("Cluster ID: %s\nController: 1\nBROKER  ENDPOINT%s  RACK\n1       %s  -\n",
		md.Cluster, strings.Repeat(" ", len(b.addr)-len("ENDPOINT")), b.addr)
	if out := b.ok("", "cluster", "info"); out != want {
		t.Fatalf("cluster info:\n%s\nwant:\n%s", out, want)
	}
}

// TestClusterInfoRacks renders brokers with and without a rack, and an
// unknown controller. (Samsa's single node does not report its
// broker.rack yet.)
func TestClusterInfoRacks(t *testing.T) {
	rack := "eu-1a"
	info := describeCluster(kadm.Metadata{Cluster: "c", Controller: -1, Brokers: kadm.BrokerDetails{
		kgo.BrokerMetadata{NodeID: 1, Host: "b1", Port: 9092, Rack: &rack},
		kgo.BrokerMetadata{NodeID: 2, Host: "::1", Port: 9093},
	}})
	var out strings.Builder
	if err := printClusterInfo(&out, info); err != nil {
		t.Fatal(err)
	}
	want := "Cluster ID: c\nController: -\n" +
		"BROKER  ENDPOINT    RACK\n" +
		"1       b1:9092     eu-1a\n" +
		"2       [::1]:9093  -\n"
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
