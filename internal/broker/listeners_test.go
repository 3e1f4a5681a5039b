package broker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newFromOverrides builds a broker the way `samsa serve --override` does.
func newFromOverrides(t *testing.T, overrides map[string]string) (*Broker, error) {
	t.Helper()
	overrides["log.dirs"] = t.TempDir()
	v, err := LoadConfig("", overrides)
	if err != nil {
		return nil, err
	}
	cfg, err := ConfigFromValues(v)
	if err != nil {
		return nil, err
	}
	cfg.Logger = quiet
	return New(cfg)
}

// A listener that asks for TLS or SASL must not start as plain TCP.
func TestListenerSecurityProtocolNotSupported(t *testing.T) {
	for _, tt := range []struct{ listeners, protocolMap, want string }{
		{"SSL://127.0.0.1:0", "", "listener SSL://127.0.0.1:0: security protocol SSL is not supported yet (issue 13 brings TLS and SASL)"},
		{"SASL_SSL://127.0.0.1:0", "", "listener SASL_SSL://127.0.0.1:0: security protocol SASL_SSL is not supported yet"},
		{"PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "", "listener SASL_PLAINTEXT://127.0.0.1:0: security protocol SASL_PLAINTEXT is not supported yet"},
		{"EXTERNAL://127.0.0.1:0", "EXTERNAL:SSL", "listener EXTERNAL://127.0.0.1:0: security protocol SSL is not supported yet"},
	} {
		ov := map[string]string{"listeners": tt.listeners}
		if tt.protocolMap != "" {
			ov["listener.security.protocol.map"] = tt.protocolMap
		}
		b, err := newFromOverrides(t, ov)
		if err == nil {
			b.Close()
			t.Fatalf("listeners=%s started", tt.listeners)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("listeners=%s: %v, want %q", tt.listeners, err, tt.want)
		}
	}
}

func TestListenerRulesAtStartup(t *testing.T) {
	for ov, want := range map[string]string{
		"INTERNAL://127.0.0.1:0": "listener with name INTERNAL defined in listeners not found in listener.security.protocol.map",
	} {
		if _, err := newFromOverrides(t, map[string]string{"listeners": ov}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("listeners=%s: %v, want %q", ov, err, want)
		}
	}
	_, err := newFromOverrides(t, map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "advertised.listeners": "OTHER://h:1"})
	if err == nil || !strings.Contains(err.Error(), "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners") {
		t.Errorf("advertised listener with no listener: %v", err)
	}
}

// A listener with a name of its own, mapped to PLAINTEXT, serves clients and
// is registered with the protocol the map gives it.
func TestCustomListenerName(t *testing.T) {
	b, err := newFromOverrides(t, map[string]string{
		"listeners":                      "INTERNAL://127.0.0.1:0",
		"listener.security.protocol.map": "internal:PLAINTEXT",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	br, ok := b.ctrl.Image().Broker(model.NodeID(b.cfg.NodeID))
	if !ok || len(br.Endpoints) != 1 {
		t.Fatalf("registration = %+v", br)
	}
	if ep := br.Endpoints[0]; ep.Name != "INTERNAL" || ep.SecurityProtocol != "PLAINTEXT" {
		t.Errorf("endpoint = %+v, want INTERNAL over PLAINTEXT", ep)
	}
	cl := newFranz(t, b.Addr(), kgo.AllowAutoTopicCreation())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce through INTERNAL: %v", err)
	}
}
