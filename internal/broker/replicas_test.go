package broker

import (
	"testing"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
)

// TestLeaderAddrFollowsInterBrokerListener: followers fetch on
// inter.broker.listener.name when it is set, else on the leader's first
// client listener.
func TestLeaderAddrFollowsInterBrokerListener(t *testing.T) {
	img, err := metadata.Empty().ApplyAt(1, metadata.BrokerRegistration{NodeID: 2, Incarnation: "i", Endpoints: []metadata.Endpoint{
		{Name: "PLAINTEXT", Host: "h", Port: 9092, SecurityProtocol: "PLAINTEXT"},
		{Name: "REPLICATION", Host: "h", Port: 9094, SecurityProtocol: "PLAINTEXT"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ setting, want string }{{"", "h:9092"}, {"replication", "h:9094"}} {
		raw := map[string]string{
			"listeners":                      "PLAINTEXT://:9092,REPLICATION://:9094",
			"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,REPLICATION:PLAINTEXT",
		}
		if tt.setting != "" {
			raw["inter.broker.listener.name"] = tt.setting
		}
		v, err := config.Parse(config.Broker, raw)
		if err != nil {
			t.Fatal(err)
		}
		b := &Broker{cfg: Config{Values: v}}
		b.meta.Store(img)
		if got := b.leaderAddr(2); got != tt.want {
			t.Errorf("inter.broker.listener.name=%q: leader address %s, want %s", tt.setting, got, tt.want)
		}
	}
}
