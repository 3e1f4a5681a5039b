package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xdg-go/scram"
)

// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's
// ScramSaslServer runs them, over the credentials KIP-554 keeps in the
// metadata log. github.com/xdg-go/scram computes the proofs; this file
// checks the messages against Kafka's grammar first, finds the credential,
// and maps every outcome to what Kafka tells the client:
//   - any failure but one: the generic "Authentication failed during
//     authentication due to invalid credentials with SASL mechanism
//     SCRAM-SHA-256" (Kafka raises SaslException, whose detail
//     SaslServerAuthenticator keeps off the wire). There is no "e=" server
//     final message; Kafka fails SaslAuthenticate instead.
//   - an authzid other than the user name: "Authentication failed: Client
//     requested an authorization id that is different from username".
//
// Unknown users. Kafka fails on the client-first message when it has no
// credential, which tells a prober at which step the user was refused, so
// whether it exists. Here the exchange runs to the end on a decoy
// credential and fails where a wrong password fails, with the same
// message. The decoy's salt is stable per name (a random one would differ
// between two probes) and shaped like the salts Kafka's tools make; only
// its iteration count (4096, Kafka's default) can differ from a real
// user's.
//
// Delegation tokens (KIP-48): a client-first message with the extension
// tokenauth=true names a token ID instead of a user. Without
// WithDelegationTokens such a login is refused; with it, the token's
// credential is checked, the principal is the token's owner and the
// session expires with the token.
//
// Where this follows RFC 5802 rather than Kafka: the GS2 flag "y" (the
// client could bind a channel but this server offers no -PLUS mechanism)
// and non-ASCII UTF-8 names are accepted; the reserved "m=" extension,
// which Kafka skips, fails as the RFC requires; the channel binding of
// the client-final message must be the GS2 header, which Kafka does not
// check. "p=" (channel binding) fails, as in Kafka.

// DelegationToken is a delegation token as a SCRAM login sees it: the
// token ID is the SCRAM user name and the token's HMAC its password.
type DelegationToken struct {
	Credential ScramCredential
	Owner      Principal
	Expiry     time.Time
}

// DelegationTokens finds a token's credential for one SCRAM mechanism. The
// broker implements it over the metadata image; it returns false for an
// unknown token and for an expired one, since it owns the clock.
type DelegationTokens interface {
	DelegationToken(mechanism, tokenID string) (DelegationToken, bool)
}

// TokenSession is implemented by SCRAM sessions. TokenAuthenticated is
// true after a delegation token login: Kafka refuses such principals some
// requests (creating or renewing tokens), so the broker has to know.
type TokenSession interface {
	TokenAuthenticated() bool
}

// ScramOption changes a SCRAM mechanism built by NewScram.
type ScramOption func(*scramMechanism)

// WithDelegationTokens accepts tokenauth=true logins against tokens. The
// default is none: such a login fails with "Authentication failed:
// delegation token authentication is not enabled".
func WithDelegationTokens(tokens DelegationTokens) ScramOption {
	return func(m *scramMechanism) { m.tokens = tokens }
}

// withScramNonce fixes the server nonce, for RFC 7677's test vector.
func withScramNonce(nonce func() string) ScramOption {
	return func(m *scramMechanism) { m.nonce = nonce }
}

// decoyIterations is the iteration count of an unknown user's decoy
// credential: kafka-configs' default.
const decoyIterations = 4096

const msgTokensDisabled = "Authentication failed: delegation token authentication is not enabled"

// NewScram is the SCRAM-SHA-256 or SCRAM-SHA-512 mechanism over creds.
func NewScram(mechanism string, creds ScramCredentials, opts ...ScramOption) (Mechanism, error) {
	var h scram.HashGeneratorFcn
	switch mechanism {
	case MechanismScramSHA256:
		h = scram.SHA256
	case MechanismScramSHA512:
		h = scram.SHA512
	default:
		return nil, fmt.Errorf("scram: unknown mechanism %q", mechanism)
	}
	if creds == nil {
		return nil, fmt.Errorf("scram: %s needs a credential store", mechanism)
	}
	m := &scramMechanism{name: mechanism, hash: h, creds: creds, decoyKey: make([]byte, 32)}
	rand.Read(m.decoyKey)
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

type scramMechanism struct {
	name   string
	hash   scram.HashGeneratorFcn
	creds  ScramCredentials
	tokens DelegationTokens
	// decoyKey, drawn once, derives the decoy credentials of unknown names.
	decoyKey []byte
	// nonce, when set, replaces the library's random server nonce.
	nonce scram.NonceGeneratorFcn
}

func (m *scramMechanism) Name() string { return m.name }

func (m *scramMechanism) NewSession() Session { return &scramSession{m: m} }

// decoy is the credential an unknown name is checked against. It is
// derived from the name, so asking twice gets the same salt as a real
// user would, and its salt is base-36 text of 130 bits as Kafka's
// ScramFormatter makes them. No password produces its keys.
func (m *scramMechanism) decoy(name string) ScramCredential {
	derive := func(label string) []byte {
		mac := hmac.New(m.hash, m.decoyKey)
		mac.Write([]byte(label + "\x00" + name))
		return mac.Sum(nil)
	}
	salt := new(big.Int).SetBytes(derive("salt")[:17])
	salt.Rsh(salt, 136-130)
	return ScramCredential{
		Salt:       []byte(salt.Text(36)),
		StoredKey:  derive("stored key"),
		ServerKey:  derive("server key"),
		Iterations: decoyIterations,
	}
}

// conversation runs the library's server side over one credential.
func (m *scramMechanism) conversation(c ScramCredential) (*scram.ServerConversation, error) {
	stored := scram.StoredCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(c.Salt), Iters: int(c.Iterations)},
		StoredKey:  c.StoredKey,
		ServerKey:  c.ServerKey,
	}
	srv, err := m.hash.NewServer(func(string) (scram.StoredCredentials, error) { return stored, nil })
	if err != nil {
		return nil, fmt.Errorf("scram: %s server: %w", m.name, err)
	}
	if m.nonce != nil {
		srv = srv.WithNonceGenerator(m.nonce)
	}
	return srv.NewConversation(), nil
}

type scramState int

const (
	scramAwaitFirst scramState = iota
	scramAwaitFinal
	scramEnded
)

type scramSession struct {
	m     *scramMechanism
	state scramState
	conv  *scram.ServerConversation
	// decoy is set when the name is unknown: the exchange goes on and fails
	// at the proof.
	decoy         bool
	token         bool
	authenticated bool
	principal     Principal
	expiry        time.Time
}

func (s *scramSession) Step(msg []byte) ([]byte, bool, error) {
	switch s.state {
	case scramAwaitFirst:
		return s.clientFirst(msg)
	case scramAwaitFinal:
		return s.clientFinal(msg)
	}
	return nil, true, errExchangeEnded
}

func (s *scramSession) failed() ([]byte, bool, error) {
	return nil, true, mechanismFailed(s.m.name)
}

func (s *scramSession) clientFirst(msg []byte) ([]byte, bool, error) {
	s.state = scramEnded
	first, ok := parseScramClientFirst(msg)
	if !ok {
		return s.failed()
	}
	cred, err := s.credential(first)
	if err != nil {
		return nil, true, err
	}
	if first.authzid != "" && first.authzid != first.name {
		return nil, true, Failed(msgAuthzidDiffers)
	}
	if cred.Iterations < MinScramIterations {
		return s.failed()
	}
	if s.conv, err = s.m.conversation(cred); err != nil {
		return nil, true, err
	}
	reply, err := s.conv.Step(string(msg))
	if err != nil {
		return s.failed()
	}
	s.state = scramAwaitFinal
	return []byte(reply), false, nil
}

// credential finds the user's or the token's credential, or a decoy.
func (s *scramSession) credential(first scramClientFirst) (ScramCredential, error) {
	if !first.tokenAuth {
		c, ok := s.m.creds.ScramCredential(s.m.name, first.name)
		if !ok {
			s.decoy = true
			return s.m.decoy(first.name), nil
		}
		s.principal = User(first.name)
		return c, nil
	}
	if s.m.tokens == nil {
		return ScramCredential{}, Failed(msgTokensDisabled)
	}
	t, ok := s.m.tokens.DelegationToken(s.m.name, first.name)
	if !ok {
		s.decoy = true
		return s.m.decoy(first.name), nil
	}
	s.token, s.principal, s.expiry = true, t.Owner, t.Expiry
	return t.Credential, nil
}

func (s *scramSession) clientFinal(msg []byte) ([]byte, bool, error) {
	s.state = scramEnded
	if !validScramClientFinal(msg) {
		return s.failed()
	}
	reply, err := s.conv.Step(string(msg))
	if err != nil || !s.conv.Valid() || s.decoy {
		return s.failed()
	}
	s.authenticated = true
	return []byte(reply), true, nil
}

func (s *scramSession) Principal() Principal {
	if !s.authenticated {
		return Principal{}
	}
	return s.principal
}

// Expiry is the delegation token's expiry; zero for a password login.
func (s *scramSession) Expiry() time.Time {
	if !s.authenticated {
		return time.Time{}
	}
	return s.expiry
}

func (s *scramSession) TokenAuthenticated() bool { return s.authenticated && s.token }

// scramClientFirst is what the server needs of a client-first message.
type scramClientFirst struct {
	authzid   string
	name      string
	tokenAuth bool
}

// parseScramClientFirst checks
//
//	gs2-cbind-flag "," [ "a=" saslname ] "," "n=" saslname "," "r=" nonce *("," ext)
//
// and decodes the names. The library parses the message again: it keeps the
// bare message verbatim for the proof, extensions included, as the client
// signed it.
func parseScramClientFirst(msg []byte) (scramClientFirst, bool) {
	var f scramClientFirst
	if !utf8.Valid(msg) {
		return f, false
	}
	fields := strings.Split(string(msg), ",")
	if len(fields) < 4 || (fields[0] != "n" && fields[0] != "y") {
		return f, false
	}
	ok := true
	if fields[1] != "" {
		a, isAuthzid := strings.CutPrefix(fields[1], "a=")
		f.authzid, ok = decodeSaslName(a)
		ok = ok && isAuthzid
	}
	n, isName := strings.CutPrefix(fields[2], "n=")
	name, nameOK := decodeSaslName(n)
	r, isNonce := strings.CutPrefix(fields[3], "r=")
	if !ok || !isName || !nameOK || !isNonce || !validScramNonce(r) {
		return f, false
	}
	f.name = name
	for _, e := range fields[4:] {
		k, v, ok := parseScramExtension(e)
		if !ok {
			return f, false
		}
		if k == "tokenauth" {
			f.tokenAuth = strings.EqualFold(v, "true")
		}
	}
	return f, true
}

// validScramClientFinal checks
//
//	"c=" base64 "," "r=" nonce *("," ext) "," "p=" base64
func validScramClientFinal(msg []byte) bool {
	if !utf8.Valid(msg) {
		return false
	}
	fields := strings.Split(string(msg), ",")
	if len(fields) < 3 {
		return false
	}
	c, isBinding := strings.CutPrefix(fields[0], "c=")
	r, isNonce := strings.CutPrefix(fields[1], "r=")
	p, isProof := strings.CutPrefix(fields[len(fields)-1], "p=")
	if !isBinding || !isNonce || !isProof || !validBase64(c) || !validScramNonce(r) || p == "" || !validBase64(p) {
		return false
	}
	for _, e := range fields[2 : len(fields)-1] {
		if _, _, ok := parseScramExtension(e); !ok {
			return false
		}
	}
	return true
}

// decodeSaslName undoes RFC 5802's escaping of ',' as =2C and '=' as =3D;
// any other '=' makes the name invalid, as does NUL.
func decodeSaslName(s string) (string, bool) {
	if s == "" || strings.IndexByte(s, 0) >= 0 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// validScramNonce: printable ASCII but ','.
func validScramNonce(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e || s[i] == ',' {
			return false
		}
	}
	return true
}

// parseScramExtension reads attr "=" value, attr a single letter or more
// (Kafka's tokenauth), value anything but NUL and ','.
func parseScramExtension(e string) (key, value string, ok bool) {
	k, v, found := strings.Cut(e, "=")
	if !found || k == "" || v == "" || strings.IndexByte(v, 0) >= 0 {
		return "", "", false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i] | 0x20; c < 'a' || c > 'z' {
			return "", "", false
		}
	}
	return k, v, true
}

func validBase64(s string) bool {
	_, err := base64.StdEncoding.Strict().DecodeString(s)
	return err == nil
}
