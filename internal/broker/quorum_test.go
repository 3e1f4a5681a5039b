package broker

import (
	"strings"
	"testing"
)

// TestProcessRoles checks process.roles against the quorum and the
// listeners as Kafka's KafkaConfig does: a controller is a voter with its
// controller listener; a broker-only node is not a voter and does not
// listen on the controller listener; a controller-only node listens on
// nothing else.
func TestProcessRoles(t *testing.T) {
	const voters = "1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293"
	both := "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
	for _, tc := range []struct {
		name, roles, nodeID, listeners string
		want                           string // "" accepted, else a part of the error
		broker, controller, observer   bool
	}{
		{"combined", "broker,controller", "1", both, "", true, true, false},
		{"controller-only", "controller", "1", "CONTROLLER://127.0.0.1:9093", "", false, true, false},
		{"broker-only", "broker", "4", "PLAINTEXT://127.0.0.1:9092", "", true, false, true},
		{"broker-only among the voters", "broker", "1", "PLAINTEXT://127.0.0.1:9092", "voter entry must name the port of one of its listeners", false, false, false},
		{"broker-only on the controller listener", "broker", "4", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9393", "must not list the controller listener", false, false, false},
		{"controller-only with a broker listener", "controller", "1", both, "may list only controller listeners", false, false, false},
		{"controller not among the voters", "controller", "4", "CONTROLLER://127.0.0.1:9393", "must be one of the voters", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := LoadConfig("", map[string]string{"process.roles": tc.roles, "node.id": tc.nodeID,
				"controller.quorum.voters": voters, "controller.listener.names": "CONTROLLER", "listeners": tc.listeners,
				"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"})
			var cfg Config
			if err == nil {
				cfg, err = ConfigFromValues(v)
			}
			if err == nil {
				err = cfg.resolveQuorum()
			}
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want one saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			q := cfg.quorum
			if q.broker != tc.broker || q.controller != tc.controller || q.observer() != tc.observer {
				t.Errorf("roles broker=%v controller=%v observer=%v, want %v %v %v", q.broker, q.controller, q.observer(), tc.broker, tc.controller, tc.observer)
			}
			if tc.observer && q.raftListener != "PLAINTEXT" {
				t.Errorf("a broker-only node's Raft listener is %q, want PLAINTEXT", q.raftListener)
			}
		})
	}
	// Without a quorum over the network the node is the single node, both.
	v, err := LoadConfig("", map[string]string{"process.roles": "broker"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigFromValues(v)
	if err == nil {
		err = cfg.resolveQuorum()
	}
	if err == nil || !strings.Contains(err.Error(), "needs controller.quorum.voters") {
		t.Errorf("process.roles=broker without voters: %v", err)
	}
}
