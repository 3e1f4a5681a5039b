package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// plainJAAS is a PLAIN listener's users as Kafka's JAAS config holds them.
const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-pw";`

// startSecured runs a broker with a PLAINTEXT listener (first, for tools)
// and the secured listeners overrides adds.
func startSecured(t *testing.T, overrides map[string]string) *Broker {
	t.Helper()
	if _, ok := overrides["listeners"]; !ok {
		overrides["listeners"] = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"
	}
	overrides["node.id"] = "1"
	b, err := newFromOverrides(t, overrides)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// listenerAddr is the bound host:port of the listener called name.
func listenerAddr(t *testing.T, b *Broker, name string) string {
	t.Helper()
	for _, l := range b.Listeners() {
		if l.Name == name {
			return net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
		}
	}
	t.Fatalf("no listener %s", name)
	return ""
}

func plainBroker(t *testing.T, extra map[string]string) *Broker {
	ov := map[string]string{
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":  plainJAAS,
	}
	for k, v := range extra {
		ov[k] = v
	}
	return startSecured(t, ov)
}

// saslClient is a franz-go client on addr authenticating with m.
func saslClient(t *testing.T, addr string, m sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.SASL(m), kgo.RequestRetries(0),
		kgo.RetryTimeout(2 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestSASLPlainAuthenticatesAndServes(t *testing.T) {
	b := plainBroker(t, nil)
	cl := saslClient(t, listenerAddr(t, b, "SASL_PLAINTEXT"), plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism(),
		kgo.DefaultProduceTopic("secured"), kgo.AllowAutoTopicCreation())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce as alice: %v", err)
	}
}

// A wrong password and an unknown user fail alike, with Kafka's error and
// a message that names neither the password nor whether the user exists.
func TestSASLPlainRefusesBadCredentials(t *testing.T) {
	b := plainBroker(t, map[string]string{"connection.failed.authentication.delay.ms": "0"})
	addr := listenerAddr(t, b, "SASL_PLAINTEXT")
	for _, a := range []plain.Auth{{User: "alice", Pass: "wrong-pw"}, {User: "mallory", Pass: "alice-pw"}} {
		cl := saslClient(t, addr, a.AsMechanism())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		cancel()
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("%s: %v, want SASL_AUTHENTICATION_FAILED", a.User, err)
		}
		if strings.Contains(err.Error(), a.Pass) {
			t.Fatalf("the error shows the password: %v", err)
		}
	}
}

// dialRawListener speaks the wire protocol by hand to one listener.
func dialRawListener(t *testing.T, b *Broker, name string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", listenerAddr(t, b, name), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, nc: nc}
}

func handshake(r *rawConn, mechanism string, version int16, corr int32) *kmsg.SASLHandshakeResponse {
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version, req.Mechanism = version, mechanism
	return r.roundTrip(req, corr).(*kmsg.SASLHandshakeResponse)
}

func authenticate(r *rawConn, token []byte, version int16, corr int32) *kmsg.SASLAuthenticateResponse {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = version, token
	return r.roundTrip(req, corr).(*kmsg.SASLAuthenticateResponse)
}

func plainToken(user, pass string) []byte { return []byte("\x00" + user + "\x00" + pass) }

// Before authentication only ApiVersions and the SASL exchange are served:
// anything else closes the connection, as in Kafka.
func TestSASLRequestBeforeAuthenticationClosesTheConnection(t *testing.T) {
	b := plainBroker(t, nil)
	r := dialRawListener(t, b, "SASL_PLAINTEXT")
	if resp := r.roundTrip(kmsg.NewPtrApiVersionsRequest(), 1).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
		t.Fatalf("ApiVersions before authentication: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	r.sendFrame(encodeRequest(kmsg.NewPtrMetadataRequest(), 2))
	r.expectClosed()

	// After SaslHandshake v1, only SaslAuthenticate.
	r = dialRawListener(t, b, "SASL_PLAINTEXT")
	handshake(r, "PLAIN", 1, 1)
	r.sendFrame(encodeRequest(kmsg.NewPtrApiVersionsRequest(), 2))
	r.expectClosed()
}

func TestSASLHandshakeRefusesAMechanismNotEnabled(t *testing.T) {
	b := plainBroker(t, nil)
	r := dialRawListener(t, b, "SASL_PLAINTEXT")
	resp := handshake(r, "SCRAM-SHA-256", 1, 1)
	if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(resp.SupportedMechanisms, ",") != "PLAIN" {
		t.Fatalf("handshake for a mechanism not enabled: %v, mechanisms %v", kerr.ErrorForCode(resp.ErrorCode), resp.SupportedMechanisms)
	}
	r.expectClosed()
}

// A listener without SASL answers the SASL APIs with ILLEGAL_SASL_STATE and
// keeps the connection, as Kafka's request handler does.
func TestSASLAPIsOnAPlaintextListener(t *testing.T) {
	b := plainBroker(t, nil)
	r := dialRawListener(t, b, "PLAINTEXT")
	if resp := handshake(r, "PLAIN", 1, 1); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslHandshake on PLAINTEXT: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := authenticate(r, plainToken("alice", "alice-pw"), 1, 2); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslAuthenticate on PLAINTEXT: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := r.roundTrip(kmsg.NewPtrMetadataRequest(), 3).(*kmsg.MetadataResponse); len(resp.Brokers) == 0 {
		t.Fatal("the connection did not go on serving")
	}
}

// SaslHandshake v0 is followed by bare tokens (sarama's default framing):
// success is an empty bare token, then the connection serves requests; a
// failure closes it.
func TestSASLHandshakeV0BareTokens(t *testing.T) {
	b := plainBroker(t, map[string]string{"connection.failed.authentication.delay.ms": "0"})
	r := dialRawListener(t, b, "SASL_PLAINTEXT")
	if resp := handshake(r, "PLAIN", 0, 1); resp.ErrorCode != 0 {
		t.Fatalf("handshake v0: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	r.sendFrame(plainToken("alice", "alice-pw"))
	var size [4]byte
	if _, err := io.ReadFull(r.nc, size[:]); err != nil || binary.BigEndian.Uint32(size[:]) != 0 {
		t.Fatalf("bare token answer: %v %v, want an empty frame", size, err)
	}
	if resp := r.roundTrip(kmsg.NewPtrMetadataRequest(), 2).(*kmsg.MetadataResponse); len(resp.Brokers) == 0 {
		t.Fatal("no metadata after authentication")
	}

	r = dialRawListener(t, b, "SASL_PLAINTEXT")
	handshake(r, "PLAIN", 0, 1)
	r.sendFrame(plainToken("alice", "nope"))
	r.expectClosed()
}

func TestSASLFailureIsAnsweredThenClosed(t *testing.T) {
	b := plainBroker(t, map[string]string{"connection.failed.authentication.delay.ms": "0"})
	r := dialRawListener(t, b, "SASL_PLAINTEXT")
	handshake(r, "PLAIN", 1, 1)
	resp := authenticate(r, plainToken("alice", "nope"), 2, 2)
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || strings.Contains(*resp.ErrorMessage, "nope") {
		t.Fatalf("wrong password: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	r.expectClosed()
}

// Before authentication a frame past sasl.server.max.receive.size closes
// the connection before it is read; afterwards socket.request.max.bytes
// is the only bound.
func TestSASLMaxReceiveSizeBeforeAuthentication(t *testing.T) {
	b := plainBroker(t, map[string]string{"sasl.server.max.receive.size": "1024"})
	r := dialRawListener(t, b, "SASL_PLAINTEXT")
	handshake(r, "PLAIN", 1, 1)
	r.sendFrame(encodeRequest(&kmsg.SASLAuthenticateRequest{Version: 1, SASLAuthBytes: make([]byte, 2048)}, 2))
	r.expectClosed()

	r = dialRawListener(t, b, "SASL_PLAINTEXT")
	handshake(r, "PLAIN", 1, 1)
	if resp := authenticate(r, plainToken("alice", "alice-pw"), 1, 2); resp.ErrorCode != 0 {
		t.Fatalf("authenticate: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	for i := range 12 {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = ptr(strings.Repeat(strconv.Itoa(i%10), 200))
		req.Topics = append(req.Topics, t)
	}
	if resp := r.roundTrip(req, 3).(*kmsg.MetadataResponse); len(resp.Brokers) == 0 {
		t.Fatal("a large request after authentication was not served")
	}
}

// KIP-368: the session lifetime is reported; once it has passed, a request
// other than a re-authentication closes the connection; a
// re-authentication renews it but may not change the principal.
func TestSASLReauthentication(t *testing.T) {
	b := plainBroker(t, map[string]string{"listener.name.sasl_plaintext.plain.connections.max.reauth.ms": "300"})
	r := dialRawListener(t, b, "SASL_PLAINTEXT")
	handshake(r, "PLAIN", 1, 1)
	resp := authenticate(r, plainToken("alice", "alice-pw"), 1, 2)
	if resp.ErrorCode != 0 || resp.SessionLifetimeMillis <= 0 || resp.SessionLifetimeMillis > 300 {
		t.Fatalf("authenticate: %v, session lifetime %d ms, want (0, 300]", kerr.ErrorForCode(resp.ErrorCode), resp.SessionLifetimeMillis)
	}
	time.Sleep(400 * time.Millisecond) // past the session: the clock is the subject here
	handshake(r, "PLAIN", 1, 3)
	if resp := authenticate(r, plainToken("alice", "alice-pw"), 1, 4); resp.ErrorCode != 0 {
		t.Fatalf("re-authenticate: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := r.roundTrip(kmsg.NewPtrMetadataRequest(), 5).(*kmsg.MetadataResponse); len(resp.Brokers) == 0 {
		t.Fatal("no metadata after re-authentication")
	}
	handshake(r, "PLAIN", 1, 6)
	if resp := authenticate(r, plainToken("admin", "admin-secret"), 1, 7); resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("re-authentication as another user: %v", kerr.ErrorForCode(resp.ErrorCode))
	}

	r = dialRawListener(t, b, "SASL_PLAINTEXT")
	handshake(r, "PLAIN", 1, 1)
	authenticate(r, plainToken("alice", "alice-pw"), 1, 2)
	time.Sleep(400 * time.Millisecond)
	r.sendFrame(encodeRequest(kmsg.NewPtrMetadataRequest(), 3))
	r.expectClosed()
}
