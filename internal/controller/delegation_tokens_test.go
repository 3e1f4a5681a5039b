package controller

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/metadata"
)

const testTokenSecret = "the-token-secret-key"

var (
	alice   = auth.User("alice")
	bob     = auth.User("bob")
	mallory = auth.User("mallory")
)

// tokenController is an active controller with delegation tokens on, on a
// manual clock at t0, with extra delegation.token.* configs.
func tokenController(t *testing.T, dir string, clk *clock.Manual, extra map[string]string) *Controller {
	t.Helper()
	raw := map[string]string{"delegation.token.secret.key": testTokenSecret}
	for k, v := range extra {
		raw[k] = v
	}
	cfg := testConfig(dir)
	cfg.Clock, cfg.Broker = clk, brokerValues(t, raw)
	return open(t, cfg)
}

var t0 = time.UnixMilli(1_700_000_000_000)

func mustCreateToken(t *testing.T, c *Controller, req CreateDelegationToken) CreateDelegationTokenResult {
	t.Helper()
	res := c.CreateDelegationToken(ctx(t), req)
	if res.ErrorCode != 0 {
		t.Fatalf("create token: %v %s", kerr.ErrorForCode(res.ErrorCode), res.ErrorMessage)
	}
	return res
}

func TestDelegationTokensDisabledWithoutSecretKey(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	if c.DelegationTokensEnabled() {
		t.Fatal("enabled without a secret key")
	}
	if res := c.CreateDelegationToken(ctx(t), CreateDelegationToken{Owner: alice, Requester: alice}); res.ErrorCode != kerr.DelegationTokenAuthDisabled.Code {
		t.Errorf("create: %v", kerr.ErrorForCode(res.ErrorCode))
	}
	if res := c.RenewDelegationToken(ctx(t), alice, []byte("h"), 0); res.ErrorCode != kerr.DelegationTokenAuthDisabled.Code || res.ExpiryTimestamp != -1 {
		t.Errorf("renew: %+v", res)
	}
	if res := c.ExpireDelegationToken(ctx(t), alice, []byte("h"), -1); res.ErrorCode != kerr.DelegationTokenAuthDisabled.Code {
		t.Errorf("expire: %+v", res)
	}
}

// A token expires delegation.token.expiry.time.ms after its creation and
// lives at most delegation.token.max.lifetime.ms, or the request's shorter
// maximum; its HMAC is the secret key's HMAC of its ID.
func TestCreateDelegationToken(t *testing.T) {
	clk := clock.NewManual(t0)
	c := tokenController(t, t.TempDir(), clk, nil)
	now := t0.UnixMilli()
	const day, week = 24 * 3600 * 1000, 7 * 24 * 3600 * 1000
	for _, tc := range []struct {
		name                 string
		maxLifetimeMs        int64
		wantExpiry, wantMaxt int64
	}{
		{"defaults", -1, now + day, now + week},
		{"shorter max lifetime", 3600 * 1000, now + 3600*1000, now + 3600*1000},
		{"longer max lifetime is the config's", 30 * day, now + day, now + week},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustCreateToken(t, c, CreateDelegationToken{Owner: alice, Requester: auth.User("admin"),
				Renewers: []auth.Principal{bob}, MaxLifetimeMs: tc.maxLifetimeMs})
			want := metadata.DelegationToken{TokenID: res.Token.TokenID, Owner: "User:alice", Requester: "User:admin",
				Renewers: []string{"User:bob"}, IssueTimestamp: now, ExpiryTimestamp: tc.wantExpiry, MaxTimestamp: tc.wantMaxt}
			if diff := cmp.Diff(want, res.Token); diff != "" {
				t.Errorf("token (-want +got):\n%s", diff)
			}
			if got, _ := c.Image().DelegationToken(res.Token.TokenID); !cmp.Equal(got, want) {
				t.Errorf("image has %+v", got)
			}
			if !bytes.Equal(res.HMAC, auth.DelegationTokenHMAC(testTokenSecret, res.Token.TokenID)) {
				t.Errorf("HMAC is not the secret key's HMAC of the token ID")
			}
			if _, err := metadata.ParseUUID(res.Token.TokenID); err != nil {
				t.Errorf("token ID %q is not a Kafka UUID: %v", res.Token.TokenID, err)
			}
		})
	}
	before := c.Image()
	res := c.CreateDelegationToken(ctx(t), CreateDelegationToken{Owner: alice, Requester: alice,
		Renewers: []auth.Principal{bob, {Type: "Group", Name: "ops"}}})
	if res.ErrorCode != kerr.InvalidPrincipalType.Code || c.Image() != before {
		t.Errorf("a Group renewer: %v, image changed %v", kerr.ErrorForCode(res.ErrorCode), c.Image() != before)
	}
}

// Renewal, by HMAC, as Kafka's controller: unknown, expired, and not the
// owner's or a renewer's are refused in that order; the new expiry is the
// shorter of the config and the period asked, never past the maximum.
func TestRenewDelegationToken(t *testing.T) {
	clk := clock.NewManual(t0)
	c := tokenController(t, t.TempDir(), clk, map[string]string{
		"delegation.token.expiry.time.ms": "60000", "delegation.token.max.lifetime.ms": "100000"})
	tok := mustCreateToken(t, c, CreateDelegationToken{Owner: alice, Requester: alice, Renewers: []auth.Principal{bob}})
	id := tok.Token.TokenID
	expiry := func() int64 { got, _ := c.Image().DelegationToken(id); return got.ExpiryTimestamp }
	now := t0.UnixMilli()

	steps := []struct {
		name      string
		advance   time.Duration
		by        auth.Principal
		hmac      []byte
		period    int64
		wantCode  int16
		wantExpry int64
	}{
		{"unknown HMAC", 0, alice, auth.DelegationTokenHMAC("another-key", id), 0, kerr.DelegationTokenNotFound.Code, -1},
		{"not owner nor renewer", 0, mallory, tok.HMAC, 0, kerr.DelegationTokenOwnerMismatch.Code, -1},
		{"the renewer, a shorter period", 10 * time.Second, bob, tok.HMAC, 5000, 0, now + 15000},
		{"the owner, the config's period", 0, alice, tok.HMAC, -1, 0, now + 70000},
		{"a longer period is the config's", 0, alice, tok.HMAC, 10_000_000, 0, now + 70000},
		{"never past the maximum", 50 * time.Second, alice, tok.HMAC, 0, 0, now + 100000},
		{"expired", 41 * time.Second, alice, tok.HMAC, 0, kerr.DelegationTokenExpired.Code, -1},
	}
	for _, s := range steps {
		clk.Advance(s.advance)
		res := c.RenewDelegationToken(ctx(t), s.by, s.hmac, s.period)
		if res.ErrorCode != s.wantCode || res.ExpiryTimestamp != s.wantExpry {
			t.Fatalf("%s: %v expiry %d, want %v %d", s.name, kerr.ErrorForCode(res.ErrorCode), res.ExpiryTimestamp,
				kerr.ErrorForCode(s.wantCode), s.wantExpry)
		}
		if s.wantCode == 0 && expiry() != s.wantExpry {
			t.Fatalf("%s: image expiry %d, want %d", s.name, expiry(), s.wantExpry)
		}
	}
}

// Expiry, by HMAC: a period of 0 or more sets the expiry (never past the
// maximum), a negative one removes the token at once, even an expired
// one; an expired token cannot be given a new expiry.
func TestExpireDelegationToken(t *testing.T) {
	clk := clock.NewManual(t0)
	c := tokenController(t, t.TempDir(), clk, map[string]string{"delegation.token.max.lifetime.ms": "100000"})
	tok := mustCreateToken(t, c, CreateDelegationToken{Owner: alice, Requester: alice, Renewers: []auth.Principal{bob}})
	id := tok.Token.TokenID
	now := t0.UnixMilli()

	if res := c.ExpireDelegationToken(ctx(t), mallory, tok.HMAC, -1); res.ErrorCode != kerr.DelegationTokenOwnerMismatch.Code {
		t.Fatalf("mallory: %+v", res)
	}
	if res := c.ExpireDelegationToken(ctx(t), alice, []byte("not an hmac"), -1); res.ErrorCode != kerr.DelegationTokenNotFound.Code {
		t.Fatalf("unknown HMAC: %+v", res)
	}
	if res := c.ExpireDelegationToken(ctx(t), bob, tok.HMAC, 1000); res.ErrorCode != 0 || res.ExpiryTimestamp != now+1000 {
		t.Fatalf("bob, 1 s: %+v", res)
	}
	if res := c.ExpireDelegationToken(ctx(t), alice, tok.HMAC, 1_000_000); res.ErrorCode != 0 || res.ExpiryTimestamp != now+100000 {
		t.Fatalf("past the maximum: %+v", res)
	}
	if res := c.ExpireDelegationToken(ctx(t), alice, tok.HMAC, 0); res.ErrorCode != 0 || res.ExpiryTimestamp != now {
		t.Fatalf("now: %+v", res)
	}
	clk.Advance(time.Millisecond)
	if res := c.ExpireDelegationToken(ctx(t), alice, tok.HMAC, 0); res.ErrorCode != kerr.DelegationTokenExpired.Code {
		t.Fatalf("expired, period 0: %+v", res)
	}
	if _, ok := c.Image().DelegationToken(id); !ok {
		t.Fatal("an expired token is removed only by a negative period or the periodic check")
	}
	if res := c.ExpireDelegationToken(ctx(t), alice, tok.HMAC, -1); res.ErrorCode != 0 || res.ExpiryTimestamp != now+1 {
		t.Fatalf("negative period: %+v", res)
	}
	if _, ok := c.Image().DelegationToken(id); ok {
		t.Fatal("a negative period left the token")
	}
}

// TestExpiredDelegationTokensRemoved: every
// delegation.token.expiry.check.interval.ms on the controller's clock the
// active controller removes the tokens past their expiry, and only those.
func TestExpiredDelegationTokensRemoved(t *testing.T) {
	clk := clock.NewManual(t0)
	c := tokenController(t, t.TempDir(), clk, map[string]string{"delegation.token.expiry.check.interval.ms": "100"})
	short := mustCreateToken(t, c, CreateDelegationToken{Owner: alice, Requester: alice, MaxLifetimeMs: 1000})
	long := mustCreateToken(t, c, CreateDelegationToken{Owner: bob, Requester: bob})
	// The wall ticker polls every 10 ms: several polls, the clock has not
	// moved, and nothing has expired.
	time.Sleep(100 * time.Millisecond)
	if len(c.Image().DelegationTokens()) != 2 {
		t.Fatal("a token was removed before it expired")
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := c.Image().DelegationToken(short.Token.TokenID); !ok {
			break
		}
		ch := c.Changed()
		clk.Advance(500 * time.Millisecond)
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond):
		}
	}
	if _, ok := c.Image().DelegationToken(short.Token.TokenID); ok {
		t.Fatal("the expired token was never removed")
	}
	if _, ok := c.Image().DelegationToken(long.Token.TokenID); !ok {
		t.Fatal("a valid token was removed")
	}
}

// TestDelegationTokensInSnapshot: tokens survive a restart from a Raft
// snapshot, and neither the secret key nor any form of a token's HMAC is
// in the metadata directory, while the token ID is.
func TestDelegationTokensInSnapshot(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewManual(t0)
	raw := map[string]string{"delegation.token.secret.key": testTokenSecret}
	cfg := testConfig(dir)
	cfg.Clock, cfg.Broker = clk, brokerValues(t, raw)
	c, err := Open(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustCreateToken(t, c, CreateDelegationToken{Owner: alice, Requester: alice, Renewers: []auth.Principal{bob}})
	if err := c.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	second := mustCreateToken(t, c, CreateDelegationToken{Owner: bob, Requester: bob}) // in the log after the snapshot
	tokens := c.Image().DelegationTokens()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	forms := func(b []byte) [][]byte {
		return [][]byte{b, []byte(base64.StdEncoding.EncodeToString(b)), []byte(base64.RawStdEncoding.EncodeToString(b)),
			[]byte(base64.URLEncoding.EncodeToString(b)), []byte(hex.EncodeToString(b))}
	}
	secrets := append(append(forms([]byte(testTokenSecret)), forms(tok.HMAC)...), forms(second.HMAC)...)
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
		idSeen = idSeen || bytes.Contains(data, []byte(tok.Token.TokenID))
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

	c = open(t, cfg)
	if diff := cmp.Diff(tokens, c.Image().DelegationTokens()); diff != "" {
		t.Errorf("tokens after restart (-want +got):\n%s", diff)
	}
}
