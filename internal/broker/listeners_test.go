package broker

import (
	"context"
	"maps"
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
	cfg, err := testConfigFromValues(v)
	if err != nil {
		return nil, err
	}
	cfg.Logger = quiet
	return New(cfg)
}

// A secured listener whose settings cannot hold refuses to start, with the
// reason: it must never fall back to plain TCP.
func TestSecuredListenerMisconfigurationIsRefused(t *testing.T) {
	for _, tt := range []struct {
		listeners string
		extra     map[string]string
		want      string
	}{
		{"SSL://127.0.0.1:0", nil, "listener SSL://127.0.0.1:0: auth: listener SSL: a TLS listener needs a key store"},
		{"SASL_SSL://127.0.0.1:0", nil, "a TLS listener needs a key store"},
		{"EXTERNAL://127.0.0.1:0", map[string]string{"listener.security.protocol.map": "EXTERNAL:SSL"}, "listener EXTERNAL: a TLS listener needs a key store"},
		{"SASL_PLAINTEXT://127.0.0.1:0", nil, "GSSAPI (Kerberos) is not supported"},
		{"SASL_PLAINTEXT://127.0.0.1:0", map[string]string{"sasl.enabled.mechanisms": "PLAIN"},
			"PLAIN needs listener.name.sasl_plaintext.plain.sasl.jaas.config"},
		{"SASL_PLAINTEXT://127.0.0.1:0", map[string]string{"sasl.enabled.mechanisms": "PLAIN", "sasl.jaas.config": "nonsense"},
			"sasl.jaas.config"},
		{"SASL_PLAINTEXT://127.0.0.1:0", map[string]string{"sasl.enabled.mechanisms": "OAUTHBEARER",
			"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class": "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"},
			"sasl.oauthbearer.jwks.endpoint.url is not set"},
		{"SASL_PLAINTEXT://127.0.0.1:0", map[string]string{"sasl.enabled.mechanisms": "DIGEST-MD5"}, "unknown mechanism DIGEST-MD5"},
		// The JWT settings do nothing for unsecured tokens: refused, not ignored.
		{"SASL_PLAINTEXT://127.0.0.1:0", map[string]string{"sasl.enabled.mechanisms": "OAUTHBEARER",
			"sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
			"listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.expected.audience": "kafka"},
			"listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.expected.audience applies to JWTs validated against a key set"},
		{"SASL_PLAINTEXT://127.0.0.1:0", map[string]string{"sasl.enabled.mechanisms": "OAUTHBEARER",
			"sasl.jaas.config":                 "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
			"sasl.oauthbearer.expected.issuer": "https://issuer"},
			"sasl.oauthbearer.expected.issuer is set, but no listener validates OAUTHBEARER JWTs"},
		{"PLAINTEXT://127.0.0.1:0", map[string]string{"sasl.oauthbearer.jwks.endpoint.url": "file:///nonexistent/jwks.json"},
			"sasl.oauthbearer.jwks.endpoint.url is set, but no listener validates OAUTHBEARER JWTs"},
	} {
		ov := map[string]string{"listeners": tt.listeners}
		maps.Copy(ov, tt.extra)
		b, err := newFromOverrides(t, ov)
		if err == nil {
			b.Close()
			t.Fatalf("listeners=%s %v started", tt.listeners, tt.extra)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("listeners=%s %v: %v, want %q", tt.listeners, tt.extra, err, tt.want)
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
