package broker

import (
	"testing"
)

// Tests that a broker config which used to be accepted and ignored now has
// its effect. Each names the config it covers.

func TestBrokerRack(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"broker.rack": "rack-a"})
	adm, ctx := adminClient(t, b)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].Rack == nil || *md.Brokers[0].Rack != "rack-a" {
		t.Fatalf("brokers = %+v, want rack-a", md.Brokers)
	}
}
