package config

import (
	"errors"
	"strings"
	"testing"
)

func TestSecurityProtocol(t *testing.T) {
	v := mustParse(t, Broker, map[string]string{
		"listeners":                      "internal://:9092,EXTERNAL://:9093",
		"listener.security.protocol.map": "INTERNAL:PLAINTEXT, external:SSL",
	})
	for name, want := range map[string]string{"INTERNAL": "PLAINTEXT", "internal": "PLAINTEXT", "EXTERNAL": "SSL"} {
		if got, ok := v.SecurityProtocol(name); !ok || got != want {
			t.Errorf("SecurityProtocol(%s) = %q %v, want %s", name, got, ok, want)
		}
	}
	if _, ok := v.SecurityProtocol("OTHER"); ok {
		t.Error("a name missing from the map has a protocol")
	}
	// Kafka's default map names each protocol after itself.
	def := mustParse(t, Broker, nil)
	for _, p := range []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"} {
		if got, _ := def.SecurityProtocol(p); got != p {
			t.Errorf("default map: %s is %q", p, got)
		}
	}
}

func TestListenerRules(t *testing.T) {
	tests := []struct {
		name string
		raw  map[string]string
		want string // "" for accepted; else a piece of the message
	}{
		{"custom name mapped", map[string]string{"listeners": "INTERNAL://:9092", "listener.security.protocol.map": "INTERNAL:PLAINTEXT"}, ""},
		{"custom name not mapped", map[string]string{"listeners": "INTERNAL://:9092"}, "listener with name INTERNAL defined in listeners not found in listener.security.protocol.map"},
		{"advertised subset", map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9093", "advertised.listeners": "plaintext://h:9092"}, ""},
		{"advertised unknown", map[string]string{"listeners": "PLAINTEXT://:9092", "advertised.listeners": "SSL://h:9093"},
			"advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found SSL. The valid options based on the current configuration are PLAINTEXT"},
		{"controller listener unknown", map[string]string{"controller.listener.names": "CONTROLLER"}, "controller.listener.names must only contain values appearing in the 'listeners' configuration"},
		{"inter-broker listener unknown", map[string]string{"inter.broker.listener.name": "INTERNAL"}, "inter.broker.listener.name must be a listener name defined in advertised.listeners"},
		{"inter-broker listener and protocol", map[string]string{"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
			"only one of inter.broker.listener.name and security.inter.broker.protocol should be set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(Broker, tt.raw)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tt.want != "" && (!errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Parse = %v, want ErrInvalidValue with %q", err, tt.want)
			}
		})
	}
}

func TestQuorumOfThisNode(t *testing.T) {
	base := map[string]string{"node.id": "1", "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT", "controller.listener.names": "CONTROLLER"}
	tests := []struct {
		name, config, value string
		want                error // nil: accepted
		also                map[string]string
	}{
		{"voter is this node", "controller.quorum.voters", "1@localhost:9093", nil, nil},
		{"voters", "controller.quorum.voters", "1@localhost:9093,2@h2:9093,3@h3:9093", nil, nil},
		{"a controller not among the voters", "controller.quorum.voters", "2@localhost:9093", ErrInvalidValue, nil},
		{"a broker-only node, not among the voters", "controller.quorum.voters", "2@h2:9093", nil,
			map[string]string{"process.roles": "broker", "listeners": "PLAINTEXT://:9092"}},
		{"a controller-only node", "controller.quorum.voters", "1@localhost:9093", nil,
			map[string]string{"process.roles": "controller", "listeners": "CONTROLLER://:9093"}},
		{"voter elsewhere", "controller.quorum.voters", "1@localhost:7000,2@h2:9093", ErrInvalidValue, nil},
		{"voter without id", "controller.quorum.voters", "localhost:9093", ErrInvalidValue, nil},
		{"bootstrap is this node", "controller.quorum.bootstrap.servers", "localhost:9093", nil, nil},
		{"bootstrap elsewhere", "controller.quorum.bootstrap.servers", "other:7000", nil, nil},
		{"bootstrap servers", "controller.quorum.bootstrap.servers", "a:9093,b:9093", nil, nil},
		{"a broker-only node with bootstrap servers alone", "controller.quorum.bootstrap.servers", "c1:9093,c2:9093,[::1]:9093", nil,
			map[string]string{"process.roles": "broker", "listeners": "PLAINTEXT://:9092"}},
		{"a broker-only node's bootstrap server without a port", "controller.quorum.bootstrap.servers", "c1", ErrInvalidValue,
			map[string]string{"process.roles": "broker", "listeners": "PLAINTEXT://:9092"}},
		{"a broker-only node's bootstrap server as a voter", "controller.quorum.bootstrap.servers", "1@c1:9093", ErrInvalidValue,
			map[string]string{"process.roles": "broker", "listeners": "PLAINTEXT://:9092"}},
		{"a controller-only node with another's bootstrap server", "controller.quorum.bootstrap.servers", "c2:9193", nil,
			map[string]string{"process.roles": "controller", "listeners": "CONTROLLER://:9093"}},
		{"voters and their bootstrap servers", "controller.quorum.bootstrap.servers", "localhost:9093", nil,
			map[string]string{"controller.quorum.voters": "1@localhost:9093"}},
		{"voters and another bootstrap server", "controller.quorum.bootstrap.servers", "h4:9093", ErrInvalidValue,
			map[string]string{"controller.quorum.voters": "1@localhost:9093,2@h2:9093"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := map[string]string{tt.config: tt.value}
			for k, v := range base {
				raw[k] = v
			}
			for k, v := range tt.also {
				raw[k] = v
			}
			_, err := Parse(Broker, raw)
			if tt.want == nil && err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Parse = %v, want %v", err, tt.want)
			}
		})
	}
}
