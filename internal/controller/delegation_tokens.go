package controller

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
)

// Delegation tokens (KIP-48) as Kafka's DelegationTokenControlManager
// writes them: the active controller creates, renews and expires tokens
// and removes expired ones every delegation.token.expiry.check.interval.ms.
// A token's HMAC (its password) is derived from delegation.token.secret.key
// and its ID whenever it is needed; the metadata log never holds it.
//
// What the broker checks before it asks (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
// for a token-authenticated or unauthenticated connection, the owner's
// default, authorization) is its business: these methods take the
// principals as given.

// tokenErrorTimestamp is the expiry Kafka answers with an error.
const tokenErrorTimestamp = -1

// tokenSettings are the delegation.token.* configs.
type tokenSettings struct {
	secretKey     string // "" when tokens are off
	maxLifetimeMs int64
	expiryTimeMs  int64
}

func (c *Controller) tokenSettings() tokenSettings {
	return tokenSettings{
		secretKey:     c.static.String("delegation.token.secret.key"),
		maxLifetimeMs: c.static.Long("delegation.token.max.lifetime.ms"),
		expiryTimeMs:  c.static.Long("delegation.token.expiry.time.ms"),
	}
}

// DelegationTokensEnabled reports whether delegation.token.secret.key is
// set, without which Kafka answers every token API with
// DELEGATION_TOKEN_AUTH_DISABLED.
func (c *Controller) DelegationTokensEnabled() bool { return c.tokenSettings().secretKey != "" }

// CreateDelegationToken is a CreateDelegationToken request as the broker
// resolved it: the owner defaults to the requester there.
type CreateDelegationToken struct {
	Owner     auth.Principal
	Requester auth.Principal
	Renewers  []auth.Principal
	// MaxLifetimeMs shortens delegation.token.max.lifetime.ms when
	// positive; otherwise the config applies.
	MaxLifetimeMs int64
}

// CreateDelegationTokenResult is the new token and its HMAC, or an error
// code.
type CreateDelegationTokenResult struct {
	ErrorCode    int16
	ErrorMessage string
	Token        metadata.DelegationToken
	HMAC         []byte
}

// CreateDelegationToken creates a token, as Kafka's controller:
// DELEGATION_TOKEN_AUTH_DISABLED without a secret key,
// INVALID_PRINCIPAL_TYPE for a renewer that is not a User. The token
// expires delegation.token.expiry.time.ms from now unless renewed, and
// lives at most delegation.token.max.lifetime.ms (or the request's
// shorter maximum).
func (c *Controller) CreateDelegationToken(ctx context.Context, req CreateDelegationToken) CreateDelegationTokenResult {
	set := c.tokenSettings()
	if set.secretKey == "" {
		return CreateDelegationTokenResult{ErrorCode: kerr.DelegationTokenAuthDisabled.Code}
	}
	for _, r := range req.Renewers {
		if r.Type != auth.UserType {
			return CreateDelegationTokenResult{ErrorCode: kerr.InvalidPrincipalType.Code,
				ErrorMessage: "Renewers must be principals of type User, not " + r.String()}
		}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		return tokenFailure(proposeFailure(err))
	}
	img := c.Image()
	id, err := newTokenID(img)
	if err != nil {
		return tokenFailure(fail(kerr.UnknownServerError, "%v", err))
	}
	now := c.clock.Now().UnixMilli()
	lifetime := set.maxLifetimeMs
	if req.MaxLifetimeMs > 0 {
		lifetime = min(lifetime, req.MaxLifetimeMs)
	}
	maxTs := addMillis(now, lifetime)
	t := metadata.DelegationToken{
		TokenID: id, Owner: req.Owner.String(), Requester: req.Requester.String(),
		IssueTimestamp: now, MaxTimestamp: maxTs, ExpiryTimestamp: min(maxTs, addMillis(now, set.expiryTimeMs)),
	}
	for _, r := range req.Renewers {
		t.Renewers = append(t.Renewers, r.String())
	}
	if err := c.proposeLocked(ctx, []metadata.Record{t.Record()}); err != nil {
		return tokenFailure(proposeFailure(err))
	}
	c.log.Info("delegation token created", "token_id", t.TokenID, "owner", t.Owner, "requester", t.Requester,
		"expiry", time.UnixMilli(t.ExpiryTimestamp).UTC(), "max", time.UnixMilli(t.MaxTimestamp).UTC())
	return CreateDelegationTokenResult{Token: t, HMAC: auth.DelegationTokenHMAC(set.secretKey, id)}
}

func tokenFailure(f *failure) CreateDelegationTokenResult {
	return CreateDelegationTokenResult{ErrorCode: f.code(), ErrorMessage: f.message()}
}

// newTokenID draws a token ID in Kafka's form (a random UUID as
// Uuid.toString writes it) that no token has.
func newTokenID(img *metadata.Image) (string, error) {
	for {
		u, err := metadata.NewUUID(rand.Reader)
		if err != nil {
			return "", err
		}
		id := metadata.FormatUUID(u)
		if _, taken := img.DelegationToken(id); !taken {
			return id, nil
		}
	}
}

// TokenExpiryResult is the outcome of a renewal or an expiry: the token's
// new expiry in Unix milliseconds, or an error code and -1.
type TokenExpiryResult struct {
	ErrorCode       int16
	ErrorMessage    string
	ExpiryTimestamp int64
}

func expiryFailure(f *failure) TokenExpiryResult {
	return TokenExpiryResult{ErrorCode: f.code(), ErrorMessage: f.message(), ExpiryTimestamp: tokenErrorTimestamp}
}

// RenewDelegationToken moves the expiry of the token whose HMAC is given
// to delegation.token.expiry.time.ms from now (or renewPeriodMs, when
// positive and shorter), never past its maximum lifetime. As Kafka's
// controller, in this order: DELEGATION_TOKEN_AUTH_DISABLED,
// DELEGATION_TOKEN_NOT_FOUND, DELEGATION_TOKEN_EXPIRED, and
// DELEGATION_TOKEN_OWNER_MISMATCH unless principal is the owner or a
// renewer.
func (c *Controller) RenewDelegationToken(ctx context.Context, principal auth.Principal, tokenHMAC []byte, renewPeriodMs int64) TokenExpiryResult {
	set := c.tokenSettings()
	if set.secretKey == "" {
		return expiryFailure(fail(kerr.DelegationTokenAuthDisabled, ""))
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		return expiryFailure(proposeFailure(err))
	}
	t, ok := tokenByHMAC(c.Image(), set.secretKey, tokenHMAC)
	now := c.clock.Now().UnixMilli()
	switch {
	case !ok:
		return expiryFailure(fail(kerr.DelegationTokenNotFound, ""))
	case t.Expired(now):
		return expiryFailure(fail(kerr.DelegationTokenExpired, ""))
	case !t.OwnerOrRenewer(principal.String()):
		return expiryFailure(fail(kerr.DelegationTokenOwnerMismatch, ""))
	}
	period := set.expiryTimeMs
	if renewPeriodMs > 0 {
		period = min(period, renewPeriodMs)
	}
	t.ExpiryTimestamp = min(t.MaxTimestamp, addMillis(now, period))
	if err := c.proposeLocked(ctx, []metadata.Record{t.Record()}); err != nil {
		return expiryFailure(proposeFailure(err))
	}
	c.log.Info("delegation token renewed", "token_id", t.TokenID, "by", principal.String(), "expiry", time.UnixMilli(t.ExpiryTimestamp).UTC())
	return TokenExpiryResult{ExpiryTimestamp: t.ExpiryTimestamp}
}

// ExpireDelegationToken sets the expiry of the token whose HMAC is given
// to expiryPeriodMs from now, never past its maximum lifetime; a negative
// period removes the token at once. As Kafka's controller, in this order:
// DELEGATION_TOKEN_AUTH_DISABLED, DELEGATION_TOKEN_NOT_FOUND,
// DELEGATION_TOKEN_OWNER_MISMATCH unless principal is the owner or a
// renewer, and, for a period of 0 or more, DELEGATION_TOKEN_EXPIRED for
// a token already expired.
func (c *Controller) ExpireDelegationToken(ctx context.Context, principal auth.Principal, tokenHMAC []byte, expiryPeriodMs int64) TokenExpiryResult {
	set := c.tokenSettings()
	if set.secretKey == "" {
		return expiryFailure(fail(kerr.DelegationTokenAuthDisabled, ""))
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		return expiryFailure(proposeFailure(err))
	}
	t, ok := tokenByHMAC(c.Image(), set.secretKey, tokenHMAC)
	now := c.clock.Now().UnixMilli()
	switch {
	case !ok:
		return expiryFailure(fail(kerr.DelegationTokenNotFound, ""))
	case !t.OwnerOrRenewer(principal.String()):
		return expiryFailure(fail(kerr.DelegationTokenOwnerMismatch, ""))
	case expiryPeriodMs >= 0 && t.Expired(now):
		return expiryFailure(fail(kerr.DelegationTokenExpired, ""))
	}
	var rec metadata.Record = metadata.RemoveDelegationTokenRecord{TokenID: t.TokenID}
	expiry := now
	if expiryPeriodMs >= 0 {
		t.ExpiryTimestamp = min(t.MaxTimestamp, addMillis(now, expiryPeriodMs))
		rec, expiry = t.Record(), t.ExpiryTimestamp
	}
	if err := c.proposeLocked(ctx, []metadata.Record{rec}); err != nil {
		return expiryFailure(proposeFailure(err))
	}
	c.log.Info("delegation token expired on request", "token_id", t.TokenID, "by", principal.String(), "expiry", time.UnixMilli(expiry).UTC())
	return TokenExpiryResult{ExpiryTimestamp: expiry}
}

// tokenByHMAC finds the token an HMAC belongs to: the one whose ID the
// secret key turns into that HMAC, compared in constant time.
func tokenByHMAC(img *metadata.Image, secretKey string, tokenHMAC []byte) (metadata.DelegationToken, bool) {
	if len(tokenHMAC) == 0 {
		return metadata.DelegationToken{}, false
	}
	for _, t := range img.DelegationTokens() {
		if hmac.Equal(auth.DelegationTokenHMAC(secretKey, t.TokenID), tokenHMAC) {
			return t, true
		}
	}
	return metadata.DelegationToken{}, false
}

// addMillis is now+d without overflow, as Kafka's sum.
func addMillis(now, d int64) int64 {
	if d > 0 && now > math.MaxInt64-d {
		return math.MaxInt64
	}
	return now + d
}

// removeExpiredDelegationTokens removes, in one batch, every token past
// its expiry or maximum lifetime on the controller's clock, as Kafka's
// sweepExpiredDelegationTokens. It does nothing on a controller that is
// not active.
func (c *Controller) removeExpiredDelegationTokens(ctx context.Context) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.checkWritableLocked() != nil {
		return nil
	}
	now := c.clock.Now().UnixMilli()
	var recs []metadata.Record
	var ids []string
	for _, t := range c.Image().DelegationTokens() {
		if t.Expired(now) {
			recs = append(recs, metadata.RemoveDelegationTokenRecord{TokenID: t.TokenID})
			ids = append(ids, t.TokenID)
		}
	}
	if len(recs) == 0 {
		return nil
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		return err
	}
	c.log.Info("expired delegation tokens removed", "token_ids", ids)
	return nil
}

// watchDelegationTokens removes expired tokens every
// delegation.token.expiry.check.interval.ms while this node is the active
// controller and tokens are on. The ticker only polls; the schedule runs
// on the controller's clock (balanceSchedule: an interval after becoming
// active, then every interval).
func (c *Controller) watchDelegationTokens(ctx context.Context) {
	s := balanceSchedule{interval: time.Duration(c.static.Long("delegation.token.expiry.check.interval.ms")) * time.Millisecond}
	tick := time.NewTicker(min(max(s.interval/10, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !s.due(c.clock.Now(), c.Active()) {
			continue
		}
		if err := c.removeExpiredDelegationTokens(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("removing expired delegation tokens failed", "err", err)
		}
	}
}
