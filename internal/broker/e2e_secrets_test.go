package broker

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	franzscram "github.com/twmb/franz-go/pkg/sasl/scram"
)

// syncBuffer is a log sink the broker's goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// No password, token or key ever reaches a log line: the broker logs at
// debug level while every login path succeeds and fails, and the log is
// searched for each secret used, raw and base64-encoded.
func TestSecretsNeverReachTheLog(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ca := newTestCA(t)
	dir := t.TempDir()
	ks, ts := ca.writeBrokerStore(t, dir, 2)
	const (
		plainPW = "plain-Secret-1x7"
		wrongPW = "wrong-Secret-9q2"
		scramPW = "scram-Secret-4k8"
	)
	ov := map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"node.id":                 "1",
		"ssl.keystore.type":       "PEM",
		"ssl.keystore.location":   ks,
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": ts,
		"listener.name.sasl_ssl.sasl.enabled.mechanisms":      "PLAIN,SCRAM-SHA-256,OAUTHBEARER",
		"listener.name.sasl_ssl.plain.sasl.jaas.config":       `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="` + plainPW + `";`,
		"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`,
		"connection.failed.authentication.delay.ms":           "0",
		"log.dirs": t.TempDir(),
	}
	v, err := LoadConfig("", ov)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testConfigFromValues(v)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = logger
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	adm := kadm.NewClient(newClient(t, b.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "carol", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: scramPW}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	addr := listenerAddr(t, b, "SASL_SSL")
	good := unsecuredToken("alice", time.Now().Add(time.Hour))
	expired := unsecuredToken("alice", time.Now().Add(-time.Hour))
	tlsOpt := kgo.DialTLSConfig(ca.clientTLS(t, ""))
	for _, m := range []kgo.Opt{
		kgo.SASL(plain.Auth{User: "alice", Pass: plainPW}.AsMechanism()),
		kgo.SASL(plain.Auth{User: "alice", Pass: wrongPW}.AsMechanism()),
		kgo.SASL(plain.Auth{User: wrongPW, Pass: plainPW}.AsMechanism()),
		kgo.SASL(franzscram.Auth{User: "carol", Pass: scramPW}.AsSha256Mechanism()),
		kgo.SASL(franzscram.Auth{User: "carol", Pass: wrongPW}.AsSha256Mechanism()),
		kgo.SASL(oauth.Auth{Token: good}.AsMechanism()),
		kgo.SASL(oauth.Auth{Token: expired}.AsMechanism()),
	} {
		metadataErr(newClient(t, addr, tlsOpt, m, kgo.RequestRetries(0)))
	}
	b.Close()

	out := logs.String()
	if !strings.Contains(out, "failed authentication") {
		t.Fatalf("the failed logins were not logged; the search below would prove nothing:\n%s", out)
	}
	for _, secret := range []string{plainPW, wrongPW, scramPW, good, expired} {
		for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), base64.RawURLEncoding.EncodeToString([]byte(secret))} {
			if strings.Contains(out, form) {
				t.Errorf("a secret reached the log: %q", form)
			}
		}
		// A token's signature-free body is a secret too.
		if i := strings.IndexByte(secret, '.'); i > 0 && strings.Contains(out, secret[i+1:]) {
			t.Errorf("a token's claims reached the log")
		}
	}
}
