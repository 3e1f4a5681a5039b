package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var oauthNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const oauthGeneric = "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER"

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func jsonPart(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b64url(raw)
}

// unsecuredJWS is a token as Kafka's OAuthBearerUnsecuredLoginCallbackHandler
// makes it: header.claims. with alg none.
func unsecuredJWS(t testing.TB, claims map[string]any) string {
	return jsonPart(t, map[string]any{"alg": "none"}) + "." + jsonPart(t, claims) + "."
}

func clientFirst(token string) []byte { return []byte("n,,\x01auth=Bearer " + token + "\x01\x01") }

func goodUnsecuredClaims() map[string]any {
	return map[string]any{
		"sub":   "alice",
		"iat":   float64(oauthNow.Add(-time.Minute).Unix()),
		"exp":   float64(oauthNow.Add(time.Hour).Unix()),
		"scope": []any{"LOGIN_TO_KAFKA", "other"},
	}
}

func with(claims map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range claims {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func newTestOAuth(t *testing.T, cfg OAuthConfig) Mechanism {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return oauthNow }
	}
	m, err := NewOAuthBearer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// oauthResult runs one login: success, or the JSON challenge the client
// acknowledged, or an error on the first message.
type oauthResult struct {
	principal Principal
	expiry    time.Time
	challenge string
	err       error
}

func oauthLogin(t *testing.T, m Mechanism, msg []byte) oauthResult {
	t.Helper()
	s := m.NewSession()
	reply, done, err := s.Step(msg)
	if done {
		if err == nil && len(reply) != 0 {
			t.Fatalf("success with a non-empty reply %q", reply)
		}
		return oauthResult{principal: s.Principal(), expiry: s.Expiry(), err: err}
	}
	if err != nil {
		t.Fatalf("error %v without ending the exchange", err)
	}
	reply2, done, err := s.Step([]byte{1})
	if !done || reply2 != nil || !IsAuthError(err) || err.Error() != string(reply) {
		t.Fatalf("after challenge %q the client's %%x01 got reply %q, done %v, err %v; want the challenge as an *Error", reply, reply2, done, err)
	}
	if s.Principal() != (Principal{}) || !s.Expiry().IsZero() {
		t.Fatalf("refused session has principal %v, expiry %v", s.Principal(), s.Expiry())
	}
	return oauthResult{challenge: string(reply), err: err}
}

const invalidTokenChallenge = `{"status":"invalid_token"}`

func TestOAuthUnsecured(t *testing.T) {
	good := goodUnsecuredClaims()
	exp := oauthNow.Add(time.Hour)
	signed := jsonPart(t, map[string]any{"alg": "RS256"}) + "." + jsonPart(t, good) + "." + b64url([]byte("sig"))
	for _, tc := range []struct {
		name          string
		opts          UnsecuredOptions
		token         string
		wantPrincipal string
		wantChallenge string
	}{
		{name: "good", token: unsecuredJWS(t, good), wantPrincipal: "alice"},
		{name: "no iat", token: unsecuredJWS(t, with(good, "iat", nil)), wantPrincipal: "alice"},
		{name: "string scope", opts: UnsecuredOptions{RequiredScope: []string{"a b"}}, token: unsecuredJWS(t, with(good, "scope", " a b ")), wantPrincipal: "alice"},
		{name: "required scope present", opts: UnsecuredOptions{RequiredScope: []string{"LOGIN_TO_KAFKA"}}, token: unsecuredJWS(t, good), wantPrincipal: "alice"},
		{name: "required scope missing", opts: UnsecuredOptions{RequiredScope: []string{"LOGIN_TO_KAFKA", "ADMIN"}}, token: unsecuredJWS(t, good),
			wantChallenge: `{"status":"insufficient_scope", "scope":"[LOGIN_TO_KAFKA, ADMIN]"}`},
		{name: "a string scope is one scope, as in Kafka", opts: UnsecuredOptions{RequiredScope: []string{"a"}}, token: unsecuredJWS(t, with(good, "scope", "a b")),
			wantChallenge: `{"status":"insufficient_scope", "scope":"[a]"}`},
		{name: "no scope at all", opts: UnsecuredOptions{RequiredScope: []string{"a"}}, token: unsecuredJWS(t, with(good, "scope", nil)),
			wantChallenge: `{"status":"insufficient_scope", "scope":"[a]"}`},
		{name: "custom claim names", opts: UnsecuredOptions{PrincipalClaimName: "client_id", ScopeClaimName: "scp", RequiredScope: []string{"x"}},
			token: unsecuredJWS(t, with(good, "client_id", "svc", "scp", []any{"x"})), wantPrincipal: "svc"},
		{name: "expired", token: unsecuredJWS(t, with(good, "exp", float64(oauthNow.Unix()))), wantChallenge: invalidTokenChallenge},
		{name: "expired within allowed skew", opts: UnsecuredOptions{AllowableClockSkew: 2 * time.Second},
			token: unsecuredJWS(t, with(good, "exp", float64(oauthNow.Unix())+1.5)), wantPrincipal: "alice"},
		{name: "expired beyond allowed skew", opts: UnsecuredOptions{AllowableClockSkew: time.Second},
			token: unsecuredJWS(t, with(good, "exp", float64(oauthNow.Unix())-1)), wantChallenge: invalidTokenChallenge},
		{name: "issued in the future", token: unsecuredJWS(t, with(good, "iat", float64(oauthNow.Unix()+1))), wantChallenge: invalidTokenChallenge},
		{name: "issued in the future within skew", opts: UnsecuredOptions{AllowableClockSkew: time.Second},
			token: unsecuredJWS(t, with(good, "iat", float64(oauthNow.Unix()+1))), wantPrincipal: "alice"},
		{name: "exp not after iat", token: unsecuredJWS(t, with(good, "iat", float64(exp.Unix()))), wantChallenge: invalidTokenChallenge},
		{name: "exp before iat, both within skew", opts: UnsecuredOptions{AllowableClockSkew: 2 * time.Second},
			token: unsecuredJWS(t, with(good, "iat", float64(oauthNow.Unix()), "exp", float64(oauthNow.Unix())-0.5)), wantChallenge: invalidTokenChallenge},
		{name: "no exp", token: unsecuredJWS(t, with(good, "exp", nil)), wantChallenge: invalidTokenChallenge},
		{name: "exp not a number", token: unsecuredJWS(t, with(good, "exp", "soon")), wantChallenge: invalidTokenChallenge},
		{name: "no sub", token: unsecuredJWS(t, with(good, "sub", nil)), wantChallenge: invalidTokenChallenge},
		{name: "blank sub", token: unsecuredJWS(t, with(good, "sub", "  ")), wantChallenge: invalidTokenChallenge},
		{name: "sub not a string", token: unsecuredJWS(t, with(good, "sub", 7)), wantChallenge: invalidTokenChallenge},
		{name: "scope of numbers", token: unsecuredJWS(t, with(good, "scope", []any{1})), wantChallenge: invalidTokenChallenge},
		{name: "wrong alg: a signed token", token: signed, wantChallenge: invalidTokenChallenge},
		{name: "wrong alg, signature dropped", token: signed[:strings.LastIndex(signed, ".")+1], wantChallenge: invalidTokenChallenge},
		{name: "alg none with a signature", token: unsecuredJWS(t, good) + "c2ln", wantChallenge: invalidTokenChallenge},
		{name: "no alg", token: jsonPart(t, map[string]any{"typ": "JWT"}) + "." + jsonPart(t, good) + ".", wantChallenge: invalidTokenChallenge},
		{name: "two parts", token: jsonPart(t, map[string]any{"alg": "none"}) + "." + jsonPart(t, good), wantChallenge: invalidTokenChallenge},
		{name: "empty middle", token: jsonPart(t, map[string]any{"alg": "none"}) + "..", wantChallenge: invalidTokenChallenge},
		{name: "claims not JSON", token: jsonPart(t, map[string]any{"alg": "none"}) + "." + b64url([]byte("nope")) + ".", wantChallenge: invalidTokenChallenge},
		{name: "claims a JSON array", token: jsonPart(t, map[string]any{"alg": "none"}) + "." + b64url([]byte("[1]")) + ".", wantChallenge: invalidTokenChallenge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestOAuth(t, OAuthConfig{Unsecured: tc.opts})
			r := oauthLogin(t, m, clientFirst(tc.token))
			if tc.wantChallenge != "" {
				if r.challenge != tc.wantChallenge {
					t.Fatalf("challenge %q, err %v; want challenge %q", r.challenge, r.err, tc.wantChallenge)
				}
				assertNoSecret(t, r.err, tc.token)
				return
			}
			if r.err != nil || r.principal != User(tc.wantPrincipal) {
				t.Fatalf("principal %v, err %v; want %s", r.principal, r.err, tc.wantPrincipal)
			}
			if want := oauthNow.Add(time.Hour); tc.name != "expired within allowed skew" && !r.expiry.Equal(want) {
				t.Errorf("expiry %v, want %v", r.expiry, want)
			}
		})
	}
}

func TestOAuthFractionalExpiry(t *testing.T) {
	m := newTestOAuth(t, OAuthConfig{})
	exp := float64(oauthNow.Unix()) + 10.2345
	r := oauthLogin(t, m, clientFirst(unsecuredJWS(t, with(goodUnsecuredClaims(), "exp", exp))))
	if want := oauthNow.Add(10*time.Second + 235*time.Millisecond); r.err != nil || !r.expiry.Equal(want) {
		t.Fatalf("expiry %v, err %v; want %v (milliseconds rounded)", r.expiry, r.err, want)
	}
}

func TestUnsecuredOptionsFromJAAS(t *testing.T) {
	j, err := ParseJAAS(OAuthBearerLoginModule + ` required unsecuredLoginStringClaim_sub="admin"
		unsecuredValidatorPrincipalClaimName=" client_id " unsecuredValidatorScopeClaimName="scp"
		unsecuredValidatorRequiredScope="  a b  c " unsecuredValidatorAllowableClockSkewMs="1500";`)
	if err != nil {
		t.Fatal(err)
	}
	o, err := UnsecuredOptionsFromJAAS(j)
	if err != nil {
		t.Fatal(err)
	}
	want := UnsecuredOptions{PrincipalClaimName: "client_id", ScopeClaimName: "scp", RequiredScope: []string{"a", "b", "c"}, AllowableClockSkew: 1500 * time.Millisecond}
	if o.PrincipalClaimName != want.PrincipalClaimName || o.ScopeClaimName != want.ScopeClaimName ||
		strings.Join(o.RequiredScope, ",") != "a,b,c" || o.AllowableClockSkew != want.AllowableClockSkew {
		t.Errorf("options %+v, want %+v", o, want)
	}
	for _, bad := range []string{"-1", "x", "99999999999"} {
		j.Options[optUnsecuredClockSkewMs] = bad
		if _, err := UnsecuredOptionsFromJAAS(j); err == nil {
			t.Errorf("clock skew %q accepted", bad)
		}
	}
	if _, err := NewOAuthBearer(OAuthConfig{Unsecured: UnsecuredOptions{AllowableClockSkew: -time.Second}}); err == nil {
		t.Error("negative skew accepted")
	}
}

func TestOAuthClientFirst(t *testing.T) {
	m := newTestOAuth(t, OAuthConfig{})
	tok := unsecuredJWS(t, goodUnsecuredClaims())
	for _, tc := range []struct {
		name, msg string
		wantErr   string // empty for success
	}{
		{"kafka's form", "n,,\x01auth=Bearer " + tok + "\x01\x01", ""},
		{"authzid of the principal", "n,a=alice,\x01auth=Bearer " + tok + "\x01\x01", ""},
		{"gs2 flag y", "y,,\x01auth=Bearer " + tok + "\x01\x01", ""},
		{"scheme in lower case, several spaces", "n,,\x01auth=bearer   " + tok + "\x01\x01", ""},
		{"extensions", "n,,\x01traceId=abc 1\x01auth=Bearer " + tok + "\x01logicalCluster=lkc-1\x01\x01", ""},
		{"authzid of someone else", "n,a=bob,\x01auth=Bearer " + tok + "\x01\x01",
			"Authentication failed: Client requested an authorization id (bob) that is different from the token's principal name (alice)"},
		{"no auth", "n,,\x01foo=bar\x01\x01", oauthGeneric},
		{"no pairs", "n,,\x01\x01", oauthGeneric},
		{"auth twice", "n,,\x01auth=Bearer " + tok + "\x01auth=Bearer x\x01\x01", oauthGeneric},
		{"scheme Basic", "n,,\x01auth=Basic " + tok + "\x01\x01", oauthGeneric},
		{"no space after scheme", "n,,\x01auth=Bearer" + tok + "\x01\x01", oauthGeneric},
		{"empty token", "n,,\x01auth=Bearer \x01\x01", oauthGeneric},
		{"token outside kafka's alphabet", "n,,\x01auth=Bearer " + tok + "+/\x01\x01", oauthGeneric},
		{"missing final separator", "n,,\x01auth=Bearer " + tok + "\x01", oauthGeneric},
		{"missing pair separator", "n,,\x01auth=Bearer " + tok + "\x01foo=bar\x01", oauthGeneric},
		{"missing first separator", "n,,auth=Bearer " + tok + "\x01\x01", oauthGeneric},
		{"channel binding", "p=tls-unique,,\x01auth=Bearer " + tok + "\x01\x01", oauthGeneric},
		{"unknown gs2 flag", "x,,\x01auth=Bearer " + tok + "\x01\x01", oauthGeneric},
		{"no gs2 header", "\x01auth=Bearer " + tok + "\x01\x01", oauthGeneric},
		{"bad authzid", "n,b=alice,\x01auth=Bearer " + tok + "\x01\x01", oauthGeneric},
		{"extension key not letters", "n,,\x01auth=Bearer " + tok + "\x01k1=v\x01\x01", oauthGeneric},
		{"extension value with a control byte", "n,,\x01auth=Bearer " + tok + "\x01k=v\x02\x01\x01", oauthGeneric},
		{"extension value empty", "n,,\x01auth=Bearer " + tok + "\x01k=\x01\x01", oauthGeneric},
		{"not UTF-8", "n,a=\xff,\x01auth=Bearer " + tok + "\x01\x01", oauthGeneric},
		{"empty", "", oauthGeneric},
		{"just the header", "n,,", oauthGeneric},
		{"one separator", "n,,\x01", oauthGeneric},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := oauthLogin(t, m, []byte(tc.msg))
			if tc.wantErr == "" {
				if r.err != nil || r.principal != User("alice") {
					t.Fatalf("principal %v, err %v", r.principal, r.err)
				}
				return
			}
			if r.challenge != "" || !IsAuthError(r.err) || r.err.Error() != tc.wantErr {
				t.Fatalf("challenge %q, err %v; want *Error %q", r.challenge, r.err, tc.wantErr)
			}
			assertNoSecret(t, r.err, tok)
		})
	}
}

func TestOAuthAfterChallenge(t *testing.T) {
	m := newTestOAuth(t, OAuthConfig{})
	expired := unsecuredJWS(t, with(goodUnsecuredClaims(), "exp", float64(oauthNow.Unix()-5)))
	for _, second := range [][]byte{{1}, []byte("n,,\x01auth=Bearer " + unsecuredJWS(t, goodUnsecuredClaims()) + "\x01\x01"), nil} {
		s := m.NewSession()
		reply, done, err := s.Step(clientFirst(expired))
		if string(reply) != invalidTokenChallenge || done || err != nil {
			t.Fatalf("first step: %q, %v, %v", reply, done, err)
		}
		_, done, err = s.Step(second)
		if !done || !IsAuthError(err) || err.Error() != invalidTokenChallenge {
			t.Errorf("after the challenge %q got done %v, err %v", second, done, err)
		}
		if _, done, err = s.Step([]byte{1}); !done || !IsAuthError(err) || err.Error() == invalidTokenChallenge {
			t.Errorf("a third step: done %v, err %v; want the exchange over", done, err)
		}
	}
}

// testKeys are the signing keys of the JWKS tests, made once and only
// when a test needs them: RSA key generation is slow.
var testKeys = sync.OnceValue(func() (k struct {
	rsa, rsaOther *rsa.PrivateKey
	ec            *ecdsa.PrivateKey
	ed            ed25519.PrivateKey
}) {
	var err error
	if k.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	if k.rsaOther, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	if k.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		panic(err)
	}
	if _, k.ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
		panic(err)
	}
	return k
})

func rsaJWK(kid string, k *rsa.PublicKey) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "n": b64url(k.N.Bytes()), "e": b64url(big.NewInt(int64(k.E)).Bytes())}
}

// jwksJSON is the test key set: RSA k1, EC e1, Ed25519 o1, a symmetric
// key hs (which must never verify anything) and an encryption key.
func jwksJSON(t testing.TB, extra ...map[string]any) []byte {
	ec := testKeys().ec.PublicKey
	keys := []map[string]any{
		rsaJWK("k1", &testKeys().rsa.PublicKey),
		{"kty": "EC", "kid": "e1", "crv": "P-256", "x": b64url(ec.X.FillBytes(make([]byte, 32))), "y": b64url(ec.Y.FillBytes(make([]byte, 32)))},
		{"kty": "OKP", "kid": "o1", "crv": "Ed25519", "x": b64url(testKeys().ed.Public().(ed25519.PublicKey))},
		{"kty": "oct", "kid": "hs", "k": b64url([]byte("shared-secret-shared-secret-1234"))},
		{"kty": "RSA", "kid": "enc", "use": "enc", "n": b64url(testKeys().rsaOther.N.Bytes()), "e": "AQAB"},
		{"kty": "XYZ", "kid": "future"},
	}
	raw, err := json.Marshal(map[string]any{"keys": append(keys, extra...)})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func goodJWTClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"iss":   "https://idp.example",
		"aud":   "kafka",
		"sub":   "alice",
		"iat":   oauthNow.Add(-time.Minute).Unix(),
		"exp":   oauthNow.Add(time.Hour).Unix(),
		"scope": "produce",
	}
}

func withJWT(c jwt.MapClaims, kv ...any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func signJWT(t testing.TB, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func writeJWKSFile(t testing.TB, raw []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOAuthJWKS(t *testing.T) {
	jwks, err := LoadJWKS(context.Background(), writeJWKSFile(t, jwksJSON(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	good := goodJWTClaims()
	rs := func(c jwt.MapClaims) string { return signJWT(t, jwt.SigningMethodRS256, "k1", testKeys().rsa, c) }
	base := OAuthConfig{JWKS: jwks, ExpectedAudience: []string{"kafka", "kafka-2"}, ExpectedIssuer: "https://idp.example"}
	noAud := base
	noAud.ExpectedAudience = nil
	noIss := noAud
	noIss.ExpectedIssuer = ""
	noSkew := base
	noSkew.ClockSkew = -1
	customSub := base
	customSub.SubClaimName, customSub.ScopeClaimName = "client_id", "scp"
	for _, tc := range []struct {
		name  string
		cfg   OAuthConfig
		token string
		want  string // principal, or empty for invalid_token
	}{
		{"RS256", base, rs(good), "alice"},
		{"PS384", base, signJWT(t, jwt.SigningMethodPS384, "k1", testKeys().rsa, good), "alice"},
		{"ES256", base, signJWT(t, jwt.SigningMethodES256, "e1", testKeys().ec, good), "alice"},
		{"EdDSA", base, signJWT(t, jwt.SigningMethodEdDSA, "o1", testKeys().ed, good), "alice"},
		{"no kid: every key is tried", base, signJWT(t, jwt.SigningMethodES256, "", testKeys().ec, good), "alice"},
		{"audience list", base, rs(withJWT(good, "aud", []string{"other", "kafka-2"})), "alice"},
		{"scope list", base, rs(withJWT(good, "scope", []string{"a", "b"})), "alice"},
		{"no issuer or audience expected", noIss, rs(withJWT(good, "aud", nil, "iss", "anyone")), "alice"},
		{"expired within the default 30 s skew", base, rs(withJWT(good, "exp", oauthNow.Add(-20*time.Second).Unix())), "alice"},
		{"custom claim names", customSub, rs(withJWT(good, "sub", nil, "client_id", " svc ", "scp", []string{"x"})), "svc"},
		{"wrong audience", base, rs(withJWT(good, "aud", "other")), ""},
		{"no audience", base, rs(withJWT(good, "aud", nil)), ""},
		{"audience when none is expected", noAud, rs(good), ""},
		{"wrong issuer", base, rs(withJWT(good, "iss", "https://evil.example")), ""},
		{"no issuer", base, rs(withJWT(good, "iss", nil)), ""},
		{"expired", base, rs(withJWT(good, "exp", oauthNow.Add(-time.Minute).Unix())), ""},
		{"expired, no skew", noSkew, rs(withJWT(good, "exp", oauthNow.Add(-time.Second).Unix())), ""},
		{"not yet valid", base, rs(withJWT(good, "nbf", oauthNow.Add(time.Minute).Unix())), ""},
		{"no exp", base, rs(withJWT(good, "exp", nil)), ""},
		{"no iat", base, rs(withJWT(good, "iat", nil)), ""},
		{"no sub", base, rs(withJWT(good, "sub", nil)), ""},
		{"blank sub", base, rs(withJWT(good, "sub", " ")), ""},
		{"blank scope", base, rs(withJWT(good, "scope", " ")), ""},
		{"repeated scope", base, rs(withJWT(good, "scope", []string{"a", "a "})), ""},
		{"unknown kid", base, signJWT(t, jwt.SigningMethodRS256, "nope", testKeys().rsa, good), ""},
		{"signed by another key", base, signJWT(t, jwt.SigningMethodRS256, "k1", testKeys().rsaOther, good), ""},
		{"kid of an encryption key", base, signJWT(t, jwt.SigningMethodRS256, "enc", testKeys().rsaOther, good), ""},
		{"HS256 with the set's symmetric key", base, signJWT(t, jwt.SigningMethodHS256, "hs", []byte("shared-secret-shared-secret-1234"), good), ""},
		{"HS256 keyed with the RSA public key", base, signJWT(t, jwt.SigningMethodHS256, "k1", []byte(b64url(testKeys().rsa.N.Bytes())), good), ""},
		{"alg none", base, signJWT(t, jwt.SigningMethodNone, "k1", jwt.UnsafeAllowNoneSignatureType, good), ""},
		{"unsecured JWS", base, unsecuredJWS(t, goodUnsecuredClaims()), ""},
		{"garbage", base, "a.b.c", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := oauthLogin(t, newTestOAuth(t, tc.cfg), clientFirst(tc.token))
			if tc.want == "" {
				if r.challenge != invalidTokenChallenge {
					t.Fatalf("principal %v, challenge %q, err %v; want %s", r.principal, r.challenge, r.err, invalidTokenChallenge)
				}
				assertNoSecret(t, r.err, tc.token)
				return
			}
			if r.err != nil || r.principal != User(tc.want) {
				t.Fatalf("principal %v, challenge %q, err %v; want %s", r.principal, r.challenge, r.err, tc.want)
			}
			exp, _ := jwt.MapClaims{"exp": mustClaim(t, tc.token, "exp")}.GetExpirationTime()
			if !r.expiry.Equal(exp.Time) {
				t.Errorf("expiry %v, want the token's exp %v", r.expiry, exp.Time)
			}
		})
	}
}

// mustClaim reads a claim of a token without checking it.
func mustClaim(t *testing.T, token, name string) any {
	t.Helper()
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		t.Fatal(err)
	}
	return claims[name]
}

func TestOAuthJWKSUnknownKeyID(t *testing.T) {
	jwks, err := LoadJWKS(context.Background(), writeJWKSFile(t, jwksJSON(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	m := newTestOAuth(t, OAuthConfig{JWKS: jwks, ExpectedAudience: []string{"kafka"},
		OnUnknownKeyID: func(kid string) { asked = append(asked, kid) }})
	oauthLogin(t, m, clientFirst(signJWT(t, jwt.SigningMethodRS256, "k1", testKeys().rsa, goodJWTClaims())))
	if len(asked) != 0 {
		t.Fatalf("a known kid asked for a refresh: %q", asked)
	}
	r := oauthLogin(t, m, clientFirst(signJWT(t, jwt.SigningMethodRS256, "k9", testKeys().rsa, goodJWTClaims())))
	if r.challenge != invalidTokenChallenge || len(asked) != 1 || asked[0] != "k9" {
		t.Fatalf("challenge %q, refresh asked for %q; want invalid_token and k9", r.challenge, asked)
	}
}

// The key set comes from an HTTP endpoint on loopback, a file: URL or a
// path, and Refresh picks up a rotated set.
func TestJWKSSources(t *testing.T) {
	var served atomic.Value
	served.Store(jwksJSON(t))
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(served.Load().([]byte))
	}))
	defer srv.Close()
	path := writeJWKSFile(t, jwksJSON(t))
	ctx := context.Background()
	for _, source := range []string{srv.URL + "/jwks", "file://" + path, path} {
		jwks, err := LoadJWKS(ctx, source, srv.Client())
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		m := newTestOAuth(t, OAuthConfig{JWKS: jwks, ExpectedAudience: []string{"kafka"}})
		if r := oauthLogin(t, m, clientFirst(signJWT(t, jwt.SigningMethodRS256, "k1", testKeys().rsa, goodJWTClaims()))); r.err != nil {
			t.Fatalf("%s: %v", source, r.err)
		}
	}
	if fetches.Load() != 1 {
		t.Fatalf("the endpoint was fetched %d times, want once", fetches.Load())
	}

	jwks, err := LoadJWKS(ctx, srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	m := newTestOAuth(t, OAuthConfig{JWKS: jwks, ExpectedAudience: []string{"kafka"}})
	rotated := signJWT(t, jwt.SigningMethodRS256, "k2", testKeys().rsaOther, goodJWTClaims())
	if r := oauthLogin(t, m, clientFirst(rotated)); r.challenge != invalidTokenChallenge {
		t.Fatalf("k2 accepted before the rotation: %+v", r)
	}
	raw, _ := json.Marshal(map[string]any{"keys": []any{rsaJWK("k2", &testKeys().rsaOther.PublicKey)}})
	served.Store(raw)
	if err := jwks.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if r := oauthLogin(t, m, clientFirst(rotated)); r.err != nil {
		t.Fatalf("k2 after the rotation: %+v", r)
	}
	if r := oauthLogin(t, m, clientFirst(signJWT(t, jwt.SigningMethodRS256, "k1", testKeys().rsa, goodJWTClaims()))); r.challenge != invalidTokenChallenge {
		t.Fatalf("k1 still accepted after the rotation: %+v", r)
	}

	// A failed refresh keeps the set it had.
	served.Store([]byte("not json"))
	if err := jwks.Refresh(ctx); err == nil {
		t.Fatal("Refresh accepted a broken set")
	}
	if r := oauthLogin(t, m, clientFirst(rotated)); r.err != nil {
		t.Fatalf("k2 after a failed refresh: %+v", r)
	}
}

func TestLoadJWKSErrors(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/huge":
			key, _ := json.Marshal(rsaJWK("k1", &testKeys().rsa.PublicKey))
			w.Write([]byte(`{"keys":[` + string(key) + strings.Repeat(" ", maxJWKSSize) + `]}`))
		case "/symmetric":
			w.Write([]byte(`{"keys":[{"kty":"oct","kid":"hs","k":"c2VjcmV0"}]}`))
		default:
			w.Write([]byte(`{"keys":`))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ source, want string }{
		{srv.URL + "/missing", "404"},
		{srv.URL + "/huge", "larger than"},
		{srv.URL + "/symmetric", "no usable asymmetric key"},
		{srv.URL + "/truncated", "not a JSON key set"},
		{"ftp://example.com/jwks", `unsupported URL scheme "ftp"`},
		{filepath.Join(t.TempDir(), "absent.json"), "no such file"},
	} {
		_, err := LoadJWKS(ctx, tc.source, srv.Client())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadJWKS(%s) = %v, want an error about %q", tc.source, err, tc.want)
		}
	}
}

// A mechanism is shared by every connection of its listener: sessions run
// in parallel, and a refresh may swap the key set under them.
func TestOAuthParallelSessions(t *testing.T) {
	jwks, err := LoadJWKS(context.Background(), writeJWKSFile(t, jwksJSON(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := newTestOAuth(t, OAuthConfig{JWKS: jwks, ExpectedAudience: []string{"a", "b", "kafka"}, ExpectedIssuer: "https://idp.example"})
	msg := clientFirst(signJWT(t, jwt.SigningMethodES256, "e1", testKeys().ec, goodJWTClaims()))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				s := m.NewSession()
				if _, _, err := s.Step(msg); err != nil || s.Principal() != User("alice") {
					t.Errorf("parallel session: %v, %v", s.Principal(), err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if err := jwks.Refresh(context.Background()); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
}
