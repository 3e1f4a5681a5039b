package broker

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/golang-jwt/jwt/v5"
	"github.com/segmentio/kafka-go"
	kafkagosasl "github.com/segmentio/kafka-go/sasl"
	kafkagoplain "github.com/segmentio/kafka-go/sasl/plain"
	kafkagoscram "github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	franzscram "github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/xdg-go/scram"
)

// scramBroker serves PLAIN and both SCRAM mechanisms on SASL_PLAINTEXT and
// creates SCRAM users through the PLAINTEXT listener, as an operator would
// with kafka-configs.sh.
func scramBroker(t *testing.T, users map[string]string) *Broker {
	t.Helper()
	b := startSecured(t, map[string]string{
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":  plainJAAS,
		"connection.failed.authentication.delay.ms":            "0",
	})
	adm := kadm.NewClient(newClient(t, b.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "sarama-sasl", "kafka-go-sasl"); err != nil {
		t.Fatal(err)
	}
	// Kafka takes a user once per request, so one request per mechanism.
	for _, m := range []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512} {
		var ups []kadm.UpsertSCRAM
		for u, p := range users {
			ups = append(ups, kadm.UpsertSCRAM{User: u, Mechanism: m, Iterations: 4096, Password: p})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := adm.AlterUserSCRAMs(ctx, nil, ups)
		cancel()
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatalf("create SCRAM users: %v", err)
		}
	}
	return b
}

func newClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func metadataErr(cl *kgo.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	return err
}

func TestSASLScramFranz(t *testing.T) {
	b := scramBroker(t, map[string]string{"carol": "carol-pw"})
	addr := listenerAddr(t, b, "SASL_PLAINTEXT")
	for _, m := range []struct {
		name string
		auth func(franzscram.Auth) kgo.Opt
	}{
		{"SCRAM-SHA-256", func(a franzscram.Auth) kgo.Opt { return kgo.SASL(a.AsSha256Mechanism()) }},
		{"SCRAM-SHA-512", func(a franzscram.Auth) kgo.Opt { return kgo.SASL(a.AsSha512Mechanism()) }},
	} {
		if err := metadataErr(newClient(t, addr, m.auth(franzscram.Auth{User: "carol", Pass: "carol-pw"}), kgo.RequestRetries(0))); err != nil {
			t.Fatalf("%s as carol: %v", m.name, err)
		}
		for _, bad := range []franzscram.Auth{{User: "carol", Pass: "wrong"}, {User: "nobody", Pass: "carol-pw"}} {
			err := metadataErr(newClient(t, addr, m.auth(bad), kgo.RequestRetries(0)))
			if !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("%s as %s/%s: %v, want SASL_AUTHENTICATION_FAILED", m.name, bad.User, bad.Pass, err)
			}
		}
	}
	// A deleted credential no longer logs in.
	adm := kadm.NewClient(newClient(t, b.Addr()))
	res, err := adm.AlterUserSCRAMs(context.Background(), []kadm.DeleteSCRAM{{User: "carol", Mechanism: kadm.ScramSha256}}, nil)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	err = metadataErr(newClient(t, addr, kgo.SASL(franzscram.Auth{User: "carol", Pass: "carol-pw"}.AsSha256Mechanism()), kgo.RequestRetries(0)))
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("SCRAM-SHA-256 after its credential was deleted: %v", err)
	}
}

// xdgSCRAM is the SCRAM client sarama expects its users to supply.
type xdgSCRAM struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func (x *xdgSCRAM) Begin(user, pass, authzID string) error {
	c, err := x.hash.NewClient(user, pass, authzID)
	if err != nil {
		return err
	}
	x.conv = c.NewConversation()
	return nil
}
func (x *xdgSCRAM) Step(challenge string) (string, error) { return x.conv.Step(challenge) }
func (x *xdgSCRAM) Done() bool                            { return x.conv.Done() }

func saramaSASLProduce(t *testing.T, addr string, configure func(*sarama.Config)) error {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.Producer.Return.Successes = true
	cfg.Net.SASL.Enable = true
	configure(cfg)
	p, err := sarama.NewSyncProducer([]string{addr}, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	_, _, err = p.SendMessage(&sarama.ProducerMessage{Topic: "sarama-sasl", Value: sarama.StringEncoder("v")})
	return err
}

// sarama authenticates PLAIN with SaslHandshake v0 and bare tokens by
// default, and v1 on request; SCRAM over v1.
func TestSASLClientsSarama(t *testing.T) {
	b := scramBroker(t, map[string]string{"carol": "carol-pw"})
	addr := listenerAddr(t, b, "SASL_PLAINTEXT")
	for name, configure := range map[string]func(*sarama.Config){
		"PLAIN v0": func(c *sarama.Config) {
			c.Net.SASL.Mechanism, c.Net.SASL.Version = sarama.SASLTypePlaintext, sarama.SASLHandshakeV0
			c.Net.SASL.User, c.Net.SASL.Password = "alice", "alice-pw"
			c.ApiVersionsRequest = false
		},
		"PLAIN v1": func(c *sarama.Config) {
			c.Net.SASL.Mechanism, c.Net.SASL.Version = sarama.SASLTypePlaintext, sarama.SASLHandshakeV1
			c.Net.SASL.User, c.Net.SASL.Password = "alice", "alice-pw"
		},
		"SCRAM-SHA-512": func(c *sarama.Config) {
			c.Net.SASL.Mechanism, c.Net.SASL.Version = sarama.SASLTypeSCRAMSHA512, sarama.SASLHandshakeV1
			c.Net.SASL.User, c.Net.SASL.Password = "carol", "carol-pw"
			c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &xdgSCRAM{hash: sha512.New} }
		},
		"SCRAM-SHA-256": func(c *sarama.Config) {
			c.Net.SASL.Mechanism, c.Net.SASL.Version = sarama.SASLTypeSCRAMSHA256, sarama.SASLHandshakeV1
			c.Net.SASL.User, c.Net.SASL.Password = "carol", "carol-pw"
			c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &xdgSCRAM{hash: sha256.New} }
		},
	} {
		if err := saramaSASLProduce(t, addr, func(c *sarama.Config) {
			configure(c)
			c.Producer.Retry.Max = 5
			c.Metadata.AllowAutoTopicCreation = true
		}); err != nil {
			t.Errorf("sarama %s: %v", name, err)
		}
	}
	if err := saramaSASLProduce(t, addr, func(c *sarama.Config) {
		c.Net.SASL.Mechanism, c.Net.SASL.Version = sarama.SASLTypePlaintext, sarama.SASLHandshakeV0
		c.Net.SASL.User, c.Net.SASL.Password = "alice", "wrong"
		c.ApiVersionsRequest = false
		c.Metadata.Retry.Max = 0
	}); err == nil {
		t.Error("sarama PLAIN v0 with a wrong password produced")
	}
}

func TestSASLClientsKafkaGo(t *testing.T) {
	b := scramBroker(t, map[string]string{"carol": "carol-pw"})
	addr := listenerAddr(t, b, "SASL_PLAINTEXT")
	s256, err := kafkagoscram.Mechanism(kafkagoscram.SHA256, "carol", "carol-pw")
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]kafkagosasl.Mechanism{
		"PLAIN":         kafkagoplain.Mechanism{Username: "alice", Password: "alice-pw"},
		"SCRAM-SHA-256": s256,
	} {
		w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: "kafka-go-sasl", AllowAutoTopicCreation: true,
			Transport: &kafka.Transport{SASL: m}, MaxAttempts: 10, BatchTimeout: time.Millisecond}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := w.WriteMessages(ctx, kafka.Message{Value: []byte("v")})
		cancel()
		w.Close()
		if err != nil {
			t.Errorf("kafka-go %s: %v", name, err)
		}
	}
}

// unsecuredToken is a JWS with alg none, as Kafka's unsecured OAUTHBEARER
// login module makes for development.
func unsecuredToken(sub string, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	claims, _ := json.Marshal(map[string]any{"sub": sub, "iat": time.Now().Add(-time.Minute).Unix(), "exp": exp.Unix(), "scope": "kafka"})
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(claims) + "."
}

func TestSASLOAuthBearerUnsecured(t *testing.T) {
	b := startSecured(t, map[string]string{
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms":      "OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka";`,
		"connection.failed.authentication.delay.ms":                 "0",
	})
	addr := listenerAddr(t, b, "SASL_PLAINTEXT")
	good := unsecuredToken("alice", time.Now().Add(time.Hour))
	if err := metadataErr(newClient(t, addr, kgo.SASL(oauth.Auth{Token: good}.AsMechanism()), kgo.RequestRetries(0))); err != nil {
		t.Fatalf("a valid token: %v", err)
	}
	expired := unsecuredToken("alice", time.Now().Add(-time.Hour))
	if err := metadataErr(newClient(t, addr, kgo.SASL(oauth.Auth{Token: expired}.AsMechanism()), kgo.RequestRetries(0))); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("an expired token: %v", err)
	}

	// The session ends with the token, though connections.max.reauth.ms
	// is off: SessionLifetimeMillis tells the client.
	r := dialRawListener(t, b, "SASL_PLAINTEXT")
	handshake(r, "OAUTHBEARER", 1, 1)
	short := unsecuredToken("alice", time.Now().Add(90*time.Second))
	resp := authenticate(r, []byte("n,,\x01auth=Bearer "+short+"\x01\x01"), 1, 2)
	if resp.ErrorCode != 0 || resp.SessionLifetimeMillis <= 0 || resp.SessionLifetimeMillis > 90_000 {
		t.Fatalf("authenticate: %v, session lifetime %d ms, want at most the token's 90 s", kerr.ErrorForCode(resp.ErrorCode), resp.SessionLifetimeMillis)
	}
}

// jwksServer serves a JSON Web Key Set on loopback whose keys the test can
// rotate.
type jwksServer struct {
	mu   sync.Mutex
	keys map[string]*ecdsa.PrivateKey
	srv  *httptest.Server
}

func newJWKSServer(t *testing.T) *jwksServer {
	s := &jwksServer{keys: map[string]*ecdsa.PrivateKey{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		var keys []map[string]string
		for kid, k := range s.keys {
			enc := base64.RawURLEncoding.EncodeToString
			keys = append(keys, map[string]string{"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
				"x": enc(k.PublicKey.X.FillBytes(make([]byte, 32))), "y": enc(k.PublicKey.Y.FillBytes(make([]byte, 32)))})
		}
		json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	}))
	t.Cleanup(s.srv.Close)
	s.addKey(t, "k1")
	return s
}

func (s *jwksServer) addKey(t *testing.T, kid string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.keys[kid] = k
	s.mu.Unlock()
}

func (s *jwksServer) token(t *testing.T, kid string, claims jwt.MapClaims) string {
	s.mu.Lock()
	k := s.keys[kid]
	s.mu.Unlock()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = kid
	signed, err := tok.SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

func TestSASLOAuthBearerJWKS(t *testing.T) {
	js := newJWKSServer(t)
	b := startSecured(t, map[string]string{
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms":                        "OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class": "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url":                                          js.srv.URL,
		"sasl.oauthbearer.expected.audience":                                          "samsa",
		"sasl.oauthbearer.expected.issuer":                                            "https://issuer.test",
		"connection.failed.authentication.delay.ms":                                   "0",
	})
	addr := listenerAddr(t, b, "SASL_PLAINTEXT")
	claims := func(aud string) jwt.MapClaims {
		return jwt.MapClaims{"sub": "svc-orders", "aud": aud, "iss": "https://issuer.test",
			"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	}
	login := func(token string) error {
		return metadataErr(newClient(t, addr, kgo.SASL(oauth.Auth{Token: token}.AsMechanism()), kgo.RequestRetries(0)))
	}
	if err := login(js.token(t, "k1", claims("samsa"))); err != nil {
		t.Fatalf("a signed token: %v", err)
	}
	if err := login(js.token(t, "k1", claims("elsewhere"))); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a token for another audience: %v", err)
	}
	// A rotated key: the first token signed with it names a kid the broker
	// lacks, which makes it fetch the set again.
	js.addKey(t, "k2")
	rotated := js.token(t, "k2", claims("samsa"))
	deadline := time.Now().Add(10 * time.Second)
	for login(rotated) != nil {
		if time.Now().After(deadline) {
			t.Fatal("a token signed with a rotated key was never accepted")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
