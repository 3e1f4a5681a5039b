package broker

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	franzscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/controller"
)

const e2eTokenSecret = "e2e-Token-Secret-3v9"

// tokenUsers are the SCRAM users of the token tests: alice owns tokens,
// bob renews them, carol is neither.
var tokenUsers = map[string]string{"alice": "alice-pw", "bob": "bob-pw", "carol": "carol-pw"}

// startTokenBroker serves PLAINTEXT (for tools) and SASL_PLAINTEXT with
// both SCRAM mechanisms, on dir, with delegation tokens on unless extra
// sets the secret key to "".
func startTokenBroker(t *testing.T, dir string, logger *slog.Logger, extra map[string]string) *Broker {
	t.Helper()
	ov := map[string]string{
		"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"node.id":   "1",
		"log.dirs":  dir,
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
		"connection.failed.authentication.delay.ms":            "0",
		"delegation.token.secret.key":                          e2eTokenSecret,
	}
	for k, v := range extra {
		ov[k] = v
	}
	if ov["delegation.token.secret.key"] == "" {
		delete(ov, "delegation.token.secret.key")
	}
	v, err := LoadConfig("", ov)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testConfigFromValues(v)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = quiet
	if logger != nil {
		cfg.Logger = logger
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// addTokenUsers creates tokenUsers' SCRAM credentials for both mechanisms
// through the PLAINTEXT listener.
func addTokenUsers(t *testing.T, b *Broker) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, b.Addr()))
	for _, m := range []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512} {
		var ups []kadm.UpsertSCRAM
		for u, p := range tokenUsers {
			ups = append(ups, kadm.UpsertSCRAM{User: u, Mechanism: m, Iterations: 4096, Password: p})
		}
		res, err := adm.AlterUserSCRAMs(testCtx(t), nil, ups)
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatalf("create SCRAM users: %v", err)
		}
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// userAdmin is a kadm client logged in as a SCRAM user on SASL_PLAINTEXT.
func userAdmin(t *testing.T, b *Broker, user string) *kadm.Client {
	t.Helper()
	m := franzscram.Auth{User: user, Pass: tokenUsers[user]}.AsSha512Mechanism()
	return kadm.NewClient(newClient(t, listenerAddr(t, b, "SASL_PLAINTEXT"), kgo.SASL(m), kgo.RequestRetries(0)))
}

// tokenAuth is the SCRAM login of a token, as Kafka's clients make it.
func tokenAuth(tok kadm.DelegationToken) franzscram.Auth {
	return franzscram.Auth{User: tok.TokenID, Pass: base64.StdEncoding.EncodeToString(tok.HMAC), IsToken: true}
}

var tokenMechanisms = map[string]func(franzscram.Auth) sasl.Mechanism{
	"SCRAM-SHA-256": franzscram.Auth.AsSha256Mechanism,
	"SCRAM-SHA-512": franzscram.Auth.AsSha512Mechanism,
}

// tokenLoginErr logs in with a token over mechanism and asks for metadata.
func tokenLoginErr(t *testing.T, b *Broker, tok kadm.DelegationToken, mechanism string) error {
	t.Helper()
	return metadataErr(newClient(t, listenerAddr(t, b, "SASL_PLAINTEXT"), kgo.SASL(tokenMechanisms[mechanism](tokenAuth(tok))), kgo.RequestRetries(0)))
}

func wantKerr(t *testing.T, what string, err error, want *kerr.Error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %s", what, err, want.Message)
	}
}

// createTokenOnController creates a token for User:owner on the broker's
// controller, as CreateDelegationToken does, without the API.
func createTokenOnController(t *testing.T, b *Broker, owner string, maxLifetime time.Duration) kadm.DelegationToken {
	t.Helper()
	res := b.ctrl.CreateDelegationToken(testCtx(t), controller.CreateDelegationToken{
		Owner: auth.User(owner), Requester: auth.User(owner), MaxLifetimeMs: maxLifetime.Milliseconds()})
	if res.ErrorCode != 0 {
		t.Fatalf("create token: %v", kerr.ErrorForCode(res.ErrorCode))
	}
	b.catchUpMetadata()
	return kadm.DelegationToken{TokenID: res.Token.TokenID, HMAC: res.HMAC, ExpiryTimestamp: time.UnixMilli(res.Token.ExpiryTimestamp)}
}

// TestDelegationTokenLogin: with franz-go's tokenauth, a token in the
// image logs in with both SCRAM mechanisms, its ID as the user name and
// its base64 HMAC as the password; a wrong HMAC, an unknown token, and a
// user's password given as a token's do not.
func TestDelegationTokenLogin(t *testing.T) {
	b := startTokenBroker(t, t.TempDir(), nil, nil)
	addTokenUsers(t, b)
	tok := createTokenOnController(t, b, "alice", 0)
	for mech := range tokenMechanisms {
		if err := tokenLoginErr(t, b, tok, mech); err != nil {
			t.Fatalf("%s login with the token: %v", mech, err)
		}
		for name, bad := range map[string]kadm.DelegationToken{
			"a wrong HMAC":           {TokenID: tok.TokenID, HMAC: auth.DelegationTokenHMAC("another-key", tok.TokenID)},
			"an unknown token":       {TokenID: "AAAAAAAAAAAAAAAAAAAAAA", HMAC: auth.DelegationTokenHMAC(e2eTokenSecret, "AAAAAAAAAAAAAAAAAAAAAA")},
			"a user name as a token": {TokenID: "alice", HMAC: []byte("alice-pw")},
			"a truncated HMAC":       {TokenID: tok.TokenID, HMAC: tok.HMAC[:10]},
		} {
			wantKerr(t, mech+" login with "+name, tokenLoginErr(t, b, bad, mech), kerr.SaslAuthenticationFailed)
		}
	}
}

// TestDelegationTokenSessionEndsWithTheToken: the session of a token login
// ends at the token's expiry (SaslAuthenticate's SessionLifetimeMillis),
// though connections.max.reauth.ms is off; a token past its expiry no
// longer logs in, even before the controller removes it.
func TestDelegationTokenSessionEndsWithTheToken(t *testing.T) {
	b := startTokenBroker(t, t.TempDir(), nil, nil)
	addTokenUsers(t, b)
	tok := createTokenOnController(t, b, "alice", 3*time.Second)
	r := dialRawListener(t, b, "SASL_PLAINTEXT")
	if resp := handshake(r, auth.MechanismScramSHA256, 1, 1); resp.ErrorCode != 0 {
		t.Fatalf("handshake: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	session, msg, err := tokenAuth(tok).AsSha256Mechanism().Authenticate(testCtx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	var resp *kmsg.SASLAuthenticateResponse
	for corr := int32(2); ; corr++ {
		resp = authenticate(r, msg, 1, corr)
		if resp.ErrorCode != 0 {
			t.Fatalf("authenticate: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		done, next, err := session.Challenge(resp.SASLAuthBytes)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		msg = next
	}
	if resp.SessionLifetimeMillis <= 0 || resp.SessionLifetimeMillis > 3000 {
		t.Fatalf("session lifetime %d ms, want at most the token's 3 s", resp.SessionLifetimeMillis)
	}
	time.Sleep(time.Until(tok.ExpiryTimestamp) + 10*time.Millisecond)
	wantKerr(t, "login with an expired token", tokenLoginErr(t, b, tok, "SCRAM-SHA-512"), kerr.SaslAuthenticationFailed)
}
