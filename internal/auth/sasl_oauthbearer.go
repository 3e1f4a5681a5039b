package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/samsa-io/samsa/internal/clock"
)

// SASL/OAUTHBEARER (RFC 7628, KIP-255) as Kafka's OAuthBearerSaslServer
// runs it. The client sends one message,
//
//	gs2-header %x01 "auth=Bearer " token %x01 *(key "=" value %x01) %x01
//
// and the server either accepts it with an empty token or, when the token
// does not validate, answers with a JSON challenge such as
// {"status":"invalid_token"}; the client acknowledges with %x01 and the
// exchange fails with that JSON as the message, as Kafka sends it.
//
// Two validators, chosen as Kafka's broker chooses its server callback
// handler:
//   - no JWKS: OAuthBearerUnsecuredValidatorCallbackHandler, Kafka's
//     default and for development only: an unsigned JWS (alg "none"),
//     options unsecuredValidator* from the JAAS config. A missing required
//     scope answers {"status":"insufficient_scope", "scope":"[...]"}.
//   - a JWKS: OAuthBearerValidatorCallbackHandler (KIP-768): a JWT signed
//     with an asymmetric key of the set, exp and iat required, expected
//     audience and issuer as configured. As jose4j does for Kafka, a token
//     that carries aud is refused when no audience is expected (RFC 7519
//     4.1.3).
//
// Other failures as Kafka sends them: a malformed message gets the generic
// "Authentication failed during authentication due to invalid credentials
// with SASL mechanism OAUTHBEARER"; an authzid other than the token's
// principal gets Kafka's message naming both.
//
// Extensions are parsed and checked (RFC 7628 key and value syntax) and
// then ignored, as both of Kafka's validators accept them all. Stricter
// than Kafka: a key given twice fails, and after a JSON challenge anything
// but %x01 fails too (Kafka would parse it as a new first message).

// OAuthConfig configures OAUTHBEARER on one listener.
type OAuthConfig struct {
	// JWKS selects signed-JWT validation against its keys. Nil selects
	// Kafka's default unsecured validator with the Unsecured options.
	JWKS *JWKS
	// Unsecured are the unsecuredValidator* JAAS options
	// (UnsecuredOptionsFromJAAS), used when JWKS is nil.
	Unsecured UnsecuredOptions
	// ExpectedAudience is sasl.oauthbearer.expected.audience: a token must
	// name one of them in aud. Empty: a token must carry no aud.
	ExpectedAudience []string
	// ExpectedIssuer is sasl.oauthbearer.expected.issuer; empty checks none.
	ExpectedIssuer string
	// SubClaimName is sasl.oauthbearer.sub.claim.name, default "sub": the
	// claim that names the principal.
	SubClaimName string
	// ScopeClaimName is sasl.oauthbearer.scope.claim.name, default "scope".
	ScopeClaimName string
	// ClockSkew is sasl.oauthbearer.clock.skew.seconds. Zero means Kafka's
	// default, 30 s; a negative value allows none.
	ClockSkew time.Duration
	// OnUnknownKeyID, if set, is called from Step when a token names a key
	// the JWKS lacks, so the caller can refresh the set early as Kafka's
	// RefreshingHttpsJwks does. It must not block.
	OnUnknownKeyID func(kid string)
	// Now tells the time; default the wall clock.
	Now func() time.Time
}

// DefaultOAuthClockSkew is Kafka's sasl.oauthbearer.clock.skew.seconds.
const DefaultOAuthClockSkew = 30 * time.Second

// UnsecuredOptions are the options of Kafka's unsecured validator.
type UnsecuredOptions struct {
	// PrincipalClaimName is the string claim naming the principal; default
	// "sub".
	PrincipalClaimName string
	// ScopeClaimName is the string or string-list claim holding the scope;
	// default "scope".
	ScopeClaimName string
	// RequiredScope must all be in the token's scope.
	RequiredScope []string
	// AllowableClockSkew is tolerated on exp and iat; default none.
	AllowableClockSkew time.Duration
}

// The JAAS options of the unsecured validator.
const (
	optUnsecuredPrincipalClaim = "unsecuredValidatorPrincipalClaimName"
	optUnsecuredScopeClaim     = "unsecuredValidatorScopeClaimName"
	optUnsecuredRequiredScope  = "unsecuredValidatorRequiredScope"
	optUnsecuredClockSkewMs    = "unsecuredValidatorAllowableClockSkewMs"
)

// UnsecuredOptionsFromJAAS reads the unsecuredValidator* options; blank
// ones take their defaults, as in Kafka. The required scope is
// space-separated.
func UnsecuredOptionsFromJAAS(j JAASConfig) (UnsecuredOptions, error) {
	o := UnsecuredOptions{
		PrincipalClaimName: strings.TrimSpace(j.Options[optUnsecuredPrincipalClaim]),
		ScopeClaimName:     strings.TrimSpace(j.Options[optUnsecuredScopeClaim]),
		RequiredScope:      strings.Fields(j.Options[optUnsecuredRequiredScope]),
	}
	if s := strings.TrimSpace(j.Options[optUnsecuredClockSkewMs]); s != "" {
		ms, err := strconv.ParseInt(s, 10, 32)
		if err != nil || ms < 0 {
			return UnsecuredOptions{}, fmt.Errorf("jaas: option %s must be a non-negative number of milliseconds", optUnsecuredClockSkewMs)
		}
		o.AllowableClockSkew = time.Duration(ms) * time.Millisecond
	}
	return o, nil
}

// NewOAuthBearer is the OAUTHBEARER mechanism.
func NewOAuthBearer(cfg OAuthConfig) (Mechanism, error) {
	now := cfg.Now
	if now == nil {
		now = clock.Real.Now
	}
	if cfg.JWKS == nil {
		v, err := newUnsecuredValidator(cfg.Unsecured)
		if err != nil {
			return nil, err
		}
		return &oauthMechanism{validator: v, now: now}, nil
	}
	return &oauthMechanism{validator: newJWTValidator(cfg), now: now}, nil
}

// oauthToken is a validated token. Its scope is checked, not kept: no
// authorizer reads it yet.
type oauthToken struct {
	principal string
	expiry    time.Time
}

// oauthRefusal is why a token did not validate, as RFC 7628's error
// challenge says it.
type oauthRefusal struct {
	status string
	// scope, for insufficient_scope, is the required scope.
	scope string
}

func invalidToken() *oauthRefusal { return &oauthRefusal{status: "invalid_token"} }

// challenge is Kafka's JSON error, spaced as Kafka writes it.
func (r *oauthRefusal) challenge() string {
	s := `{"status":"` + r.status + `"`
	if r.scope != "" {
		q, _ := json.Marshal(r.scope)
		s += `, "scope":` + string(q)
	}
	return s + "}"
}

type tokenValidator interface {
	validate(token string, now time.Time) (oauthToken, *oauthRefusal)
}

type oauthMechanism struct {
	validator tokenValidator
	now       func() time.Time
}

func (*oauthMechanism) Name() string { return MechanismOAuthBearer }

func (m *oauthMechanism) NewSession() Session { return &oauthSession{m: m} }

type oauthState int

const (
	oauthAwaitFirst oauthState = iota
	oauthAwaitAck
	oauthEnded
)

type oauthSession struct {
	m     *oauthMechanism
	state oauthState
	// challenge is the JSON error sent, awaiting the client's %x01.
	challenge     string
	authenticated bool
	token         oauthToken
}

func (s *oauthSession) Step(msg []byte) ([]byte, bool, error) {
	switch s.state {
	case oauthAwaitFirst:
		return s.clientFirst(msg)
	case oauthAwaitAck:
		s.state = oauthEnded
		return nil, true, Failed("%s", s.challenge)
	}
	return nil, true, errExchangeEnded
}

func (s *oauthSession) clientFirst(msg []byte) ([]byte, bool, error) {
	s.state = oauthEnded
	authzid, raw, ok := parseOAuthClientFirst(msg)
	if !ok {
		return nil, true, mechanismFailed(MechanismOAuthBearer)
	}
	tok, refusal := s.m.validator.validate(raw, s.m.now())
	if refusal != nil {
		s.state = oauthAwaitAck
		s.challenge = refusal.challenge()
		return []byte(s.challenge), false, nil
	}
	if authzid != "" && authzid != tok.principal {
		return nil, true, Failed("Authentication failed: Client requested an authorization id (%s) that is different from the token's principal name (%s)", authzid, tok.principal)
	}
	s.authenticated, s.token = true, tok
	return nil, true, nil
}

func (s *oauthSession) Principal() Principal {
	if !s.authenticated {
		return Principal{}
	}
	return User(s.token.principal)
}

// Expiry is the token's exp.
func (s *oauthSession) Expiry() time.Time {
	if !s.authenticated {
		return time.Time{}
	}
	return s.token.expiry
}

// parseOAuthClientFirst checks the client's message and returns the
// authzid and the bearer token.
func parseOAuthClientFirst(msg []byte) (authzid, token string, ok bool) {
	if !utf8.Valid(msg) {
		return "", "", false
	}
	s := string(msg)
	if !strings.HasPrefix(s, "n,") && !strings.HasPrefix(s, "y,") {
		return "", "", false
	}
	a, kvs, found := strings.Cut(s[2:], ",")
	if !found {
		return "", "", false
	}
	if a != "" {
		name, isAuthzid := strings.CutPrefix(a, "a=")
		if authzid, ok = decodeSaslName(name); !ok || !isAuthzid {
			return "", "", false
		}
	}
	pairs, ok := parseOAuthPairs(kvs)
	if !ok {
		return "", "", false
	}
	token, ok = bearerToken(pairs["auth"])
	return authzid, token, ok
}

// parseOAuthPairs reads %x01 *(key "=" value %x01) %x01.
func parseOAuthPairs(kvs string) (map[string]string, bool) {
	if len(kvs) < 2 || kvs[0] != 1 || kvs[len(kvs)-1] != 1 {
		return nil, false
	}
	body := kvs[1 : len(kvs)-1]
	if body == "" || body[len(body)-1] != 1 {
		return nil, false
	}
	pairs := map[string]string{}
	for _, kv := range strings.Split(body[:len(body)-1], "\x01") {
		k, v, found := strings.Cut(kv, "=")
		if !found || !validOAuthKey(k) || !validOAuthValue(v) {
			return nil, false
		}
		if _, dup := pairs[k]; dup {
			return nil, false
		}
		pairs[k] = v
	}
	return pairs, true
}

// validOAuthKey: 1*ALPHA.
func validOAuthKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// validOAuthValue: 1*(VCHAR / SP / HTAB / CR / LF).
func validOAuthValue(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// bearerToken reads "Bearer" 1*SP token, the scheme in any case and the
// token in Kafka's alphabet (that of a JWS compact serialization).
func bearerToken(auth string) (string, bool) {
	scheme, rest, found := strings.Cut(auth, " ")
	if !found || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	tok := strings.TrimLeft(rest, " ")
	if tok == "" {
		return "", false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", false
		}
	}
	return tok, true
}

// unsecuredValidator is Kafka's OAuthBearerUnsecuredValidatorCallbackHandler
// over OAuthBearerUnsecuredJws: the JWS must be unsigned, exp is required,
// iat optional, nbf ignored. Kafka's quirks kept: a string scope is one
// scope (not split on spaces), and the insufficient_scope challenge names
// the whole required list as Java prints it, "[a, b]".
type unsecuredValidator struct {
	principalClaim string
	scopeClaim     string
	required       []string
	skew           time.Duration
}

func newUnsecuredValidator(o UnsecuredOptions) (*unsecuredValidator, error) {
	if o.AllowableClockSkew < 0 {
		return nil, fmt.Errorf("oauthbearer: allowable clock skew must not be negative")
	}
	v := &unsecuredValidator{principalClaim: "sub", scopeClaim: "scope", required: o.RequiredScope, skew: o.AllowableClockSkew}
	if n := strings.TrimSpace(o.PrincipalClaimName); n != "" {
		v.principalClaim = n
	}
	if n := strings.TrimSpace(o.ScopeClaimName); n != "" {
		v.scopeClaim = n
	}
	return v, nil
}

func (v *unsecuredValidator) validate(token string, now time.Time) (oauthToken, *oauthRefusal) {
	claims, ok := unsecuredClaims(token)
	if !ok {
		return oauthToken{}, invalidToken()
	}
	exp, hasExp, okExp := numberClaim(claims, "exp")
	iat, hasIat, okIat := numberClaim(claims, "iat")
	principal, okSub := claims[v.principalClaim].(string)
	scope, okScope := scopeClaim(claims[v.scopeClaim], false)
	if !okExp || !hasExp || !okIat || !okSub || strings.TrimSpace(principal) == "" || !okScope {
		return oauthToken{}, invalidToken()
	}
	nowMs, skewMs := now.UnixMilli(), v.skew.Milliseconds()
	expMs := secondsToMillis(exp)
	switch {
	case hasIat && secondsToMillis(iat) > nowMs+skewMs,
		nowMs-skewMs >= expMs,
		hasIat && exp <= iat:
		return oauthToken{}, invalidToken()
	}
	for _, r := range v.required {
		if !slices.Contains(scope, r) {
			return oauthToken{}, &oauthRefusal{status: "insufficient_scope", scope: "[" + strings.Join(v.required, ", ") + "]"}
		}
	}
	return oauthToken{principal: principal, expiry: time.UnixMilli(expMs)}, nil
}

// unsecuredClaims decodes header.claims. (empty signature) and checks the
// header's alg is "none".
func unsecuredClaims(token string) (map[string]any, bool) {
	if strings.Contains(token, "..") {
		return nil, false
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[2] != "" {
		return nil, false
	}
	header, ok := jsonSegment(parts[0])
	if !ok || header["alg"] != "none" {
		return nil, false
	}
	return jsonSegment(parts[1])
}

// jsonSegment decodes one base64url part of a JWS into a JSON object.
func jsonSegment(seg string) (map[string]any, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return nil, false
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// numberClaim returns a numeric claim; present says whether it is there,
// ok whether it is a number if it is.
func numberClaim(claims map[string]any, name string) (v float64, present, ok bool) {
	raw, present := claims[name]
	if !present {
		return 0, false, true
	}
	v, ok = raw.(float64)
	return v, true, ok
}

// scopeClaim reads a scope claim: absent, a string (one scope, trimmed, as
// Kafka reads it) or a list of strings. strict refuses blank and repeated
// entries, as Kafka's JWT validator does; the unsecured one drops blanks.
func scopeClaim(raw any, strict bool) ([]string, bool) {
	switch v := raw.(type) {
	case nil:
		return nil, true
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, !strict
		}
		return []string{strings.TrimSpace(v)}, true
	case []any:
		var out []string
		for _, e := range v {
			s, ok := e.(string)
			if !ok || (strict && strings.TrimSpace(s) == "") {
				return nil, false
			}
			s = strings.TrimSpace(s)
			if strict && slices.Contains(out, s) {
				return nil, false
			}
			if s != "" {
				out = append(out, s)
			}
		}
		return out, true
	}
	return nil, false
}

// secondsToMillis rounds as Java's Math.round does, clamped to int64.
func secondsToMillis(s float64) int64 {
	ms := math.Floor(s*1000 + 0.5)
	if ms >= math.MaxInt64 {
		return math.MaxInt64
	}
	if ms <= math.MinInt64 {
		return math.MinInt64
	}
	return int64(ms)
}

// asymmetricAlgs are the signature algorithms a JWKS token may use: a
// symmetric one (HS*) would let anyone holding the key mint tokens, and
// "none" is the unsecured validator's.
var asymmetricAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// jwtValidator is Kafka's BrokerJwtValidator.
type jwtValidator struct {
	jwks *JWKS
	// opts are the parser's options but the clock, given per validation.
	opts         []jwt.ParserOption
	expectAud    bool
	subClaim     string
	scopeClaim   string
	onUnknownKID func(string)
}

func newJWTValidator(cfg OAuthConfig) *jwtValidator {
	v := &jwtValidator{
		jwks:         cfg.JWKS,
		expectAud:    len(cfg.ExpectedAudience) > 0,
		subClaim:     orDefault(strings.TrimSpace(cfg.SubClaimName), "sub"),
		scopeClaim:   orDefault(strings.TrimSpace(cfg.ScopeClaimName), "scope"),
		onUnknownKID: cfg.OnUnknownKeyID,
	}
	skew := cfg.ClockSkew
	switch {
	case skew == 0:
		skew = DefaultOAuthClockSkew
	case skew < 0:
		skew = 0
	}
	v.opts = []jwt.ParserOption{
		jwt.WithValidMethods(asymmetricAlgs),
		jwt.WithLeeway(skew),
		jwt.WithExpirationRequired(),
	}
	if v.expectAud {
		v.opts = append(v.opts, jwt.WithAudience(cfg.ExpectedAudience...))
	}
	if cfg.ExpectedIssuer != "" {
		v.opts = append(v.opts, jwt.WithIssuer(cfg.ExpectedIssuer))
	}
	// Clipped, so that sessions appending their clock get a copy each
	// instead of racing on spare capacity.
	v.opts = slices.Clip(v.opts)
	return v
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (v *jwtValidator) validate(token string, now time.Time) (oauthToken, *oauthRefusal) {
	parser := jwt.NewParser(append(v.opts, jwt.WithTimeFunc(func() time.Time { return now }))...)
	claims := jwt.MapClaims{}
	if _, err := parser.ParseWithClaims(token, claims, v.key); err != nil {
		return oauthToken{}, invalidToken()
	}
	if aud, err := claims.GetAudience(); err != nil || (!v.expectAud && len(aud) > 0) {
		return oauthToken{}, invalidToken()
	}
	iat, err := claims.GetIssuedAt()
	if err != nil || iat == nil || iat.Unix() < 0 {
		return oauthToken{}, invalidToken()
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil || exp.Unix() < 0 {
		return oauthToken{}, invalidToken()
	}
	sub, _ := claims[v.subClaim].(string)
	_, okScope := scopeClaim(claims[v.scopeClaim], true)
	if strings.TrimSpace(sub) == "" || !okScope {
		return oauthToken{}, invalidToken()
	}
	return oauthToken{principal: strings.TrimSpace(sub), expiry: exp.Time}, nil
}

// key finds the verification key, telling the caller about a key ID the
// set lacks.
func (v *jwtValidator) key(t *jwt.Token) (any, error) {
	kf := v.jwks.keys.Load()
	if kf == nil {
		return nil, errors.New("oauthbearer: no JWKS loaded")
	}
	k, err := (*kf).Keyfunc(t)
	if err != nil && errors.Is(err, jwkset.ErrKeyNotFound) && v.onUnknownKID != nil {
		kid, _ := t.Header["kid"].(string)
		v.onUnknownKID(kid)
	}
	return k, err
}

// JWKS is the key set of sasl.oauthbearer.jwks.endpoint.url: an https or
// http URL, a file: URL or a file path. It starts no goroutine: keyfunc's
// own HTTP storage would refresh from one, so this type fetches the set
// itself and keeps it in keyfunc's in-memory storage. The caller calls
// Refresh on its schedule (Kafka's sasl.oauthbearer.jwks.endpoint.refresh.ms,
// one hour by default, and soon after OAuthConfig.OnUnknownKeyID, within
// sasl.oauthbearer.jwks.endpoint.retry.backoff.ms); sessions read the
// current set without locks.
type JWKS struct {
	source string
	client *http.Client
	keys   atomic.Pointer[keyfunc.Keyfunc]
}

// maxJWKSSize bounds a fetched key set; real ones are a few kilobytes.
const maxJWKSSize = 1 << 20

// LoadJWKS reads the key set at source once. client fetches http(s)
// sources; nil means http.DefaultClient, and ctx bounds the fetch.
func LoadJWKS(ctx context.Context, source string, client *http.Client) (*JWKS, error) {
	if client == nil {
		client = http.DefaultClient
	}
	j := &JWKS{source: source, client: client}
	if err := j.Refresh(ctx); err != nil {
		return nil, err
	}
	return j, nil
}

// Refresh reads the set again and swaps it in; on error the previous set
// stays.
func (j *JWKS) Refresh(ctx context.Context) error {
	raw, err := j.read(ctx)
	if err != nil {
		return fmt.Errorf("oauthbearer: jwks %s: %w", j.source, err)
	}
	kf, err := parseJWKS(raw)
	if err != nil {
		return fmt.Errorf("oauthbearer: jwks %s: %w", j.source, err)
	}
	j.keys.Store(&kf)
	return nil
}

func (j *JWKS) read(ctx context.Context) ([]byte, error) {
	u, err := url.Parse(j.source)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 {
		// A path, possibly a Windows one with a drive letter.
		return readJWKSFile(j.source)
	}
	switch u.Scheme {
	case "file":
		return readJWKSFile(u.Path)
	case "http", "https":
		return j.fetch(ctx)
	}
	return nil, fmt.Errorf("unsupported URL scheme %q", u.Scheme)
}

func readJWKSFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f)
}

func (j *JWKS) fetch(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.source, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %s", resp.Status)
	}
	return readBounded(resp.Body)
}

func readBounded(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxJWKSSize+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxJWKSSize {
		return nil, fmt.Errorf("key set larger than %d bytes", maxJWKSSize)
	}
	return raw, nil
}

// parseJWKS keeps the set's asymmetric keys meant for signatures; like
// jose4j it skips a key it cannot use rather than refuse the whole set.
func parseJWKS(raw []byte) (keyfunc.Keyfunc, error) {
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("not a JSON key set: %w", err)
	}
	store := jwkset.NewMemoryStorage()
	for _, km := range set.Keys {
		if km.KTY != jwkset.KtyRSA && km.KTY != jwkset.KtyEC && km.KTY != jwkset.KtyOKP {
			continue
		}
		k, err := jwkset.NewJWKFromMarshal(km, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		if err != nil {
			continue
		}
		if err := store.KeyWrite(context.Background(), k); err != nil {
			return nil, err
		}
	}
	if all, _ := store.KeyReadAll(context.Background()); len(all) == 0 {
		return nil, errors.New("no usable asymmetric key in the set")
	}
	return keyfunc.New(keyfunc.Options{Storage: store, UseWhitelist: []jwkset.USE{jwkset.UseSig, ""}})
}
