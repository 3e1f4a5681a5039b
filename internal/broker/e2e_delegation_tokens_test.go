package broker

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/auth"
)

// TestDelegationTokenLifecycle, with franz-go and kadm: a SCRAM user
// creates a token, which logs in with both SCRAM mechanisms as its owner;
// the token cannot beget tokens; the renewer renews it, owner and renewer
// describe it, another user can do neither; once expired, it no longer
// logs in.
func TestDelegationTokenLifecycle(t *testing.T) {
	b := startTokenBroker(t, t.TempDir(), nil, nil)
	addTokenUsers(t, b)
	alice := userAdmin(t, b, "alice")
	before := time.Now().Truncate(time.Millisecond)
	tok, err := alice.CreateDelegationToken(testCtx(t), kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Name: "bob"}}})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Owner != (kadm.Principal{Type: "User", Name: "alice"}) || tok.TokenRequesterPrincipal != tok.Owner {
		t.Errorf("owner %v, requester %v", tok.Owner, tok.TokenRequesterPrincipal)
	}
	if tok.IssueTimestamp.Before(before) || tok.ExpiryTimestamp.Sub(tok.IssueTimestamp) != 24*time.Hour ||
		tok.MaxTimestamp.Sub(tok.IssueTimestamp) != 7*24*time.Hour {
		t.Errorf("issued %v, expires %v, max %v: want Kafka's 1 day and 7 days", tok.IssueTimestamp, tok.ExpiryTimestamp, tok.MaxTimestamp)
	}
	if !bytes.Equal(tok.HMAC, auth.DelegationTokenHMAC(e2eTokenSecret, tok.TokenID)) {
		t.Error("the HMAC is not HmacSHA512 of the token ID under the secret key")
	}

	for mech := range tokenMechanisms {
		if err := tokenLoginErr(t, b, tok, mech); err != nil {
			t.Fatalf("%s login with the token: %v", mech, err)
		}
		bad := tok
		bad.HMAC = auth.DelegationTokenHMAC("another-key", tok.TokenID)
		wantKerr(t, mech+" login with a wrong HMAC", tokenLoginErr(t, b, bad, mech), kerr.SaslAuthenticationFailed)
	}

	// A token's login is its owner's (User:alice) and may not use the token
	// APIs, even for its own token.
	tokenAdm := kadm.NewClient(newClient(t, listenerAddr(t, b, "SASL_PLAINTEXT"),
		kgo.SASL(tokenAuth(tok).AsSha256Mechanism()), kgo.RequestRetries(0)))
	_, err = tokenAdm.CreateDelegationToken(testCtx(t), kadm.CreateDelegationToken{})
	wantKerr(t, "create with a token login", err, kerr.DelegationTokenRequestNotAllowed)
	_, err = tokenAdm.RenewDelegationToken(testCtx(t), tok.HMAC, 0)
	wantKerr(t, "renew with a token login", err, kerr.DelegationTokenRequestNotAllowed)
	_, err = tokenAdm.ExpireDelegationToken(testCtx(t), tok.HMAC, -time.Millisecond)
	wantKerr(t, "expire with a token login", err, kerr.DelegationTokenRequestNotAllowed)
	_, err = tokenAdm.DescribeDelegationTokens(testCtx(t))
	wantKerr(t, "describe with a token login", err, kerr.DelegationTokenRequestNotAllowed)

	// carol neither owns nor renews it.
	carol := userAdmin(t, b, "carol")
	_, err = carol.RenewDelegationToken(testCtx(t), tok.HMAC, time.Hour)
	wantKerr(t, "carol renews", err, kerr.DelegationTokenOwnerMismatch)
	_, err = carol.ExpireDelegationToken(testCtx(t), tok.HMAC, -time.Millisecond)
	wantKerr(t, "carol expires", err, kerr.DelegationTokenOwnerMismatch)

	// bob renews it for an hour; owner and renewer describe it with its
	// HMAC and the new expiry.
	bob := userAdmin(t, b, "bob")
	expiry, err := bob.RenewDelegationToken(testCtx(t), tok.HMAC, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(expiry); d <= 59*time.Minute || d > time.Hour {
		t.Errorf("renewed for an hour, expires in %v", d)
	}
	for name, adm := range map[string]*kadm.Client{"alice": alice, "bob": bob} {
		got, err := adm.DescribeDelegationTokens(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].TokenID != tok.TokenID || !bytes.Equal(got[0].HMAC, tok.HMAC) || !got[0].ExpiryTimestamp.Equal(expiry) ||
			len(got[0].Renewers) != 1 || got[0].Renewers[0] != (kadm.Principal{Type: "User", Name: "bob"}) || got[0].Owner != tok.Owner {
			t.Errorf("%s describes %+v", name, got)
		}
	}
	if got, err := alice.DescribeDelegationTokens(testCtx(t), kadm.Principal{Type: "User", Name: "carol"}); err != nil || len(got) != 0 {
		t.Errorf("tokens carol owns or renews: %+v, %v", got, err)
	}
	if got, err := alice.DescribeDelegationTokens(testCtx(t), kadm.Principal{Type: "User", Name: "bob"}); err != nil || len(got) != 1 {
		t.Errorf("tokens bob owns or renews: %+v, %v", got, err)
	}

	// alice expires it now (a negative period; kadm sends whole
	// milliseconds): the next login fails, and it is gone.
	if _, err := alice.ExpireDelegationToken(testCtx(t), tok.HMAC, -time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for mech := range tokenMechanisms {
		wantKerr(t, mech+" login after expiry", tokenLoginErr(t, b, tok, mech), kerr.SaslAuthenticationFailed)
	}
	_, err = alice.RenewDelegationToken(testCtx(t), tok.HMAC, 0)
	wantKerr(t, "renew after expiry", err, kerr.DelegationTokenNotFound)
	if got, err := alice.DescribeDelegationTokens(testCtx(t)); err != nil || len(got) != 0 {
		t.Errorf("after expiry: %+v, %v", got, err)
	}
}

// TestDelegationTokenAPIsWithoutSecretKey: without
// delegation.token.secret.key every token API answers
// DELEGATION_TOKEN_AUTH_DISABLED and a tokenauth login fails.
func TestDelegationTokenAPIsWithoutSecretKey(t *testing.T) {
	b := startTokenBroker(t, t.TempDir(), nil, map[string]string{"delegation.token.secret.key": ""})
	addTokenUsers(t, b)
	alice := userAdmin(t, b, "alice")
	_, err := alice.CreateDelegationToken(testCtx(t), kadm.CreateDelegationToken{})
	wantKerr(t, "create", err, kerr.DelegationTokenAuthDisabled)
	_, err = alice.RenewDelegationToken(testCtx(t), []byte("hmac"), 0)
	wantKerr(t, "renew", err, kerr.DelegationTokenAuthDisabled)
	_, err = alice.ExpireDelegationToken(testCtx(t), []byte("hmac"), -time.Millisecond)
	wantKerr(t, "expire", err, kerr.DelegationTokenAuthDisabled)
	_, err = alice.DescribeDelegationTokens(testCtx(t))
	wantKerr(t, "describe", err, kerr.DelegationTokenAuthDisabled)
	// A login as a "token" named like a user is refused.
	fake := kadm.DelegationToken{TokenID: "alice", HMAC: []byte("alice-pw")}
	wantKerr(t, "tokenauth login", tokenLoginErr(t, b, fake, "SCRAM-SHA-256"), kerr.SaslAuthenticationFailed)
}

// TestDelegationTokenAPIsNeedAnAuthenticatedConnection: on PLAINTEXT, as
// on SSL without a client certificate, Kafka refuses the token APIs with
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.
func TestDelegationTokenAPIsNeedAnAuthenticatedConnection(t *testing.T) {
	b := startTokenBroker(t, t.TempDir(), nil, nil)
	adm := kadm.NewClient(newClient(t, b.Addr()))
	_, err := adm.CreateDelegationToken(testCtx(t), kadm.CreateDelegationToken{})
	wantKerr(t, "create", err, kerr.DelegationTokenRequestNotAllowed)
	_, err = adm.RenewDelegationToken(testCtx(t), []byte("hmac"), 0)
	wantKerr(t, "renew", err, kerr.DelegationTokenRequestNotAllowed)
	_, err = adm.ExpireDelegationToken(testCtx(t), []byte("hmac"), -time.Millisecond)
	wantKerr(t, "expire", err, kerr.DelegationTokenRequestNotAllowed)
	_, err = adm.DescribeDelegationTokens(testCtx(t))
	wantKerr(t, "describe", err, kerr.DelegationTokenRequestNotAllowed)
	if len(b.meta.Load().DelegationTokens()) != 0 {
		t.Fatal("a refused request created a token")
	}
}

// TestDelegationTokenOwnerAndRenewers: a renewer of another principal
// type is INVALID_PRINCIPAL_TYPE, and a v3 request may name another owner
// (KIP-373), who then owns the token.
func TestDelegationTokenOwnerAndRenewers(t *testing.T) {
	b := startTokenBroker(t, t.TempDir(), nil, nil)
	addTokenUsers(t, b)
	alice := userAdmin(t, b, "alice")
	_, err := alice.CreateDelegationToken(testCtx(t), kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Type: "Group", Name: "ops"}}})
	wantKerr(t, "a Group renewer", err, kerr.InvalidPrincipalType)
	tok, err := alice.CreateDelegationToken(testCtx(t), kadm.CreateDelegationToken{Owner: &kadm.Principal{Name: "carol"}})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Owner.Name != "carol" || tok.TokenRequesterPrincipal.Name != "alice" {
		t.Fatalf("owner %v, requester %v", tok.Owner, tok.TokenRequesterPrincipal)
	}
	// carol owns it and may expire it; alice, who asked for it, may not.
	_, err = alice.ExpireDelegationToken(testCtx(t), tok.HMAC, -time.Millisecond)
	wantKerr(t, "the requester expires", err, kerr.DelegationTokenOwnerMismatch)
	if _, err := userAdmin(t, b, "carol").ExpireDelegationToken(testCtx(t), tok.HMAC, -time.Millisecond); err != nil {
		t.Fatalf("the owner expires: %v", err)
	}
}

// TestDelegationTokensSurviveRestart: a token is in the metadata log; after
// a restart it logs in and is described as before.
func TestDelegationTokensSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	b := startTokenBroker(t, dir, nil, nil)
	addTokenUsers(t, b)
	tok, err := userAdmin(t, b, "alice").CreateDelegationToken(testCtx(t), kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = startTokenBroker(t, dir, nil, nil)
	if err := tokenLoginErr(t, b, tok, "SCRAM-SHA-512"); err != nil {
		t.Fatalf("login with the token after a restart: %v", err)
	}
	got, err := userAdmin(t, b, "alice").DescribeDelegationTokens(testCtx(t))
	if err != nil || len(got) != 1 || got[0].TokenID != tok.TokenID || !got[0].ExpiryTimestamp.Equal(tok.ExpiryTimestamp) || !bytes.Equal(got[0].HMAC, tok.HMAC) {
		t.Fatalf("after restart: %+v, %v", got, err)
	}
}

// TestDelegationTokenSecretsNeverLoggedOrStored: at debug level through a
// token's whole life (create, logins good and bad, describe, renew,
// expire), neither the secret key nor the token's HMAC, raw or encoded,
// reaches the log, and neither is in the broker's files; the token ID is,
// so the searches can find what is there.
func TestDelegationTokenSecretsNeverLoggedOrStored(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	b := startTokenBroker(t, dir, logger, nil)
	addTokenUsers(t, b)
	alice := userAdmin(t, b, "alice")
	tok, err := alice.CreateDelegationToken(testCtx(t), kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}
	wrong := tok
	wrong.HMAC = auth.DelegationTokenHMAC("wrong-Key-7p1", tok.TokenID)
	for mech := range tokenMechanisms {
		tokenLoginErr(t, b, tok, mech)
		tokenLoginErr(t, b, wrong, mech)
	}
	if _, err := alice.DescribeDelegationTokens(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.RenewDelegationToken(testCtx(t), tok.HMAC, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.ExpireDelegationToken(testCtx(t), tok.HMAC, time.Hour); err != nil {
		t.Fatal(err)
	}
	b.Close()

	forms := func(secret []byte) [][]byte {
		return [][]byte{secret, []byte(base64.StdEncoding.EncodeToString(secret)), []byte(base64.RawStdEncoding.EncodeToString(secret)),
			[]byte(base64.URLEncoding.EncodeToString(secret)), []byte(hex.EncodeToString(secret))}
	}
	secrets := append(append(forms([]byte(e2eTokenSecret)), forms(tok.HMAC)...), forms(wrong.HMAC)...)
	out := logs.String()
	if !strings.Contains(out, tok.TokenID) || !strings.Contains(out, "failed authentication") {
		t.Fatalf("neither the token nor the failed logins were logged; the search below would prove nothing:\n%s", out)
	}
	for _, s := range secrets {
		if strings.Contains(out, string(s)) {
			t.Errorf("a secret reached the log: %q", s)
		}
	}
	var files int
	var idSeen bool
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		idSeen = idSeen || bytes.Contains(data, []byte(tok.TokenID))
		for _, s := range secrets {
			if bytes.Contains(data, s) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if err != nil || files == 0 || !idSeen {
		t.Fatalf("searched %d files, token ID found %v (%v): the search proves nothing", files, idSeen, err)
	}
}
