package broker

import (
	"os"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestWildcardListenerAdvertisesHostName: a listener bound to 0.0.0.0 with
// no advertised.listeners tells clients the machine's host name, as Kafka
// does, never 0.0.0.0, which no client can connect to.
func TestWildcardListenerAdvertisesHostName(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Listeners: []Listener{{Name: "PLAINTEXT", Host: "0.0.0.0", Port: 0}}})
	rc := dialRaw(t, b)
	resp := rc.roundTrip(&kmsg.MetadataRequest{Version: 12}, 1).(*kmsg.MetadataResponse)
	if len(resp.Brokers) != 1 || resp.Brokers[0].Host != host {
		t.Fatalf("advertised brokers %+v, want host %q", resp.Brokers, host)
	}
	if s := strings.Join(func() []string {
		var out []string
		for _, a := range b.Summary() {
			if v, ok := a.(string); ok {
				out = append(out, v)
			}
		}
		return out
	}(), " "); !strings.Contains(s, "PLAINTEXT://"+host+":") {
		t.Fatalf("the start-up summary does not show the advertised host: %s", s)
	}
}

// TestAdvertisedWildcardRefused: advertising 0.0.0.0 is a configuration
// error, as in Kafka.
func TestAdvertisedWildcardRefused(t *testing.T) {
	v, err := config.Parse(config.Broker, map[string]string{
		"listeners": "PLAINTEXT://0.0.0.0:9092", "advertised.listeners": "PLAINTEXT://0.0.0.0:9092",
		"node.id": "1", "log.dirs": t.TempDir(), "process.roles": "broker,controller",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConfigFromValues(v); err == nil || !strings.Contains(err.Error(), "nonroutable meta-address") {
		t.Fatalf("advertising 0.0.0.0: %v", err)
	}
}
