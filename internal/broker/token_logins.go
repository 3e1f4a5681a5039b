package broker

import (
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
)

// delegationTokenSecret is delegation.token.secret.key, "" when tokens
// are off.
func (b *Broker) delegationTokenSecret() string {
	return b.cfg.Values.String("delegation.token.secret.key")
}

// tokenLogins finds delegation tokens in the broker's current image for
// SCRAM logins with tokenauth=true (auth.DelegationTokens). The password
// of a token is its base64 HMAC, which the broker derives from the secret
// key; the SCRAM credential that password salts to is computed once per
// token and mechanism (4096 PBKDF2 rounds) and kept while the token is in
// the image, as Kafka's brokers keep one per token.
type tokenLogins struct {
	b      *Broker
	secret string
	mu     struct {
		sync.Mutex
		creds map[tokenCredentialKey]auth.ScramCredential
	}
}

type tokenCredentialKey struct{ mechanism, tokenID string }

func newTokenLogins(b *Broker) *tokenLogins {
	l := &tokenLogins{b: b, secret: b.delegationTokenSecret()}
	l.mu.creds = map[tokenCredentialKey]auth.ScramCredential{}
	return l
}

// DelegationToken finds a token that has not expired. The principal of a
// token login is User:<owner's name>, as Kafka's SCRAM server makes it,
// and its session ends with the token's expiry.
func (l *tokenLogins) DelegationToken(mechanism, tokenID string) (auth.DelegationToken, bool) {
	img := l.b.meta.Load()
	if img == nil {
		return auth.DelegationToken{}, false
	}
	t, ok := img.DelegationToken(tokenID)
	if !ok || t.Expired(l.b.cfg.Clock.Now().UnixMilli()) {
		return auth.DelegationToken{}, false
	}
	cred, err := l.credential(img, mechanism, tokenID)
	if err != nil {
		l.b.log.Error("delegation token credential", "mechanism", mechanism, "err", err)
		return auth.DelegationToken{}, false
	}
	return auth.DelegationToken{Credential: cred, Owner: auth.User(principalOf(t.Owner).Name), Expiry: time.UnixMilli(t.ExpiryTimestamp)}, true
}

func (l *tokenLogins) credential(img *metadata.Image, mechanism, tokenID string) (auth.ScramCredential, error) {
	k := tokenCredentialKey{mechanism, tokenID}
	l.mu.Lock()
	cred, ok := l.mu.creds[k]
	l.mu.Unlock()
	if ok {
		return cred, nil
	}
	// Salted outside the lock: other logins need not wait for it.
	cred, err := auth.NewDelegationTokenCredential(mechanism, auth.DelegationTokenHMAC(l.secret, tokenID))
	if err != nil {
		return auth.ScramCredential{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if have, ok := l.mu.creds[k]; ok {
		return have, nil // a concurrent login won; keep one salt per token
	}
	l.mu.creds[k] = cred
	// Forget the tokens the image no longer has, so the map stays the size
	// of the image's tokens, not of every token ever seen.
	for old := range l.mu.creds {
		if _, live := img.DelegationToken(old.tokenID); !live {
			delete(l.mu.creds, old)
		}
	}
	return cred, nil
}

// principalOf reads a token's Type:Name principal as the image keeps it.
func principalOf(s string) auth.Principal {
	p, err := auth.ParsePrincipal(s)
	if err != nil {
		return auth.Principal{Name: s}
	}
	return p
}
