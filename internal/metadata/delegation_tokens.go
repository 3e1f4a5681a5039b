package metadata

import (
	"maps"
	"slices"
	"strings"
)

// DelegationToken is what the image keeps of a delegation token (KIP-48):
// who owns it, who asked for it, who may renew it, and its timestamps in
// Unix milliseconds. Its HMAC is not here; whoever holds the secret key
// derives it from TokenID. Renewers is shared and must not be modified.
type DelegationToken struct {
	TokenID   string
	Owner     string // Type:Name
	Requester string // Type:Name
	Renewers  []string
	// IssueTimestamp is when it was created; ExpiryTimestamp when it
	// stops being valid unless renewed; MaxTimestamp the latest a renewal
	// can move ExpiryTimestamp to.
	IssueTimestamp  int64
	ExpiryTimestamp int64
	MaxTimestamp    int64
}

// Expired reports whether the token is past its expiry or its maximum
// lifetime at nowMs, as Kafka compares them (a token is valid through its
// last millisecond).
func (t DelegationToken) Expired(nowMs int64) bool {
	return t.ExpiryTimestamp < nowMs || t.MaxTimestamp < nowMs
}

// OwnerOrRenewer reports whether principal (Type:Name) owns the token or
// may renew it, as Kafka's TokenInformation.ownerOrRenewer: who may renew
// and expire a token and always describe it.
func (t DelegationToken) OwnerOrRenewer(principal string) bool {
	return t.Owner == principal || slices.Contains(t.Renewers, principal)
}

// Record is the record that sets the token as it is.
func (t DelegationToken) Record() DelegationTokenRecord {
	return DelegationTokenRecord{TokenID: t.TokenID, Owner: t.Owner, Requester: t.Requester, Renewers: t.Renewers,
		IssueTimestamp: t.IssueTimestamp, MaxTimestamp: t.MaxTimestamp, ExpirationTimestamp: t.ExpiryTimestamp}
}

// DelegationToken returns a token by ID.
func (img *Image) DelegationToken(id string) (DelegationToken, bool) {
	t, ok := img.tokens[id]
	return t, ok
}

// DelegationTokens returns every token sorted by ID. The slice is the
// caller's; the renewer lists are shared.
func (img *Image) DelegationTokens() []DelegationToken {
	out := slices.Collect(maps.Values(img.tokens))
	slices.SortFunc(out, func(x, y DelegationToken) int { return strings.Compare(x.TokenID, y.TokenID) })
	return out
}

func (b *builder) ownTokens() {
	if !b.tokensOwned {
		b.img.tokens = maps.Clone(b.img.tokens)
		if b.img.tokens == nil {
			b.img.tokens = map[string]DelegationToken{}
		}
		b.tokensOwned = true
	}
}

// setDelegationToken adds or replaces a token. The controller validated
// the principals and timestamps; the image only needs an ID and an owner.
func (b *builder) setDelegationToken(r DelegationTokenRecord) error {
	switch {
	case r.TokenID == "":
		return invalid("delegation token with an empty id")
	case r.Owner == "":
		return invalid("delegation token %s without an owner", r.TokenID)
	}
	b.ownTokens()
	b.img.tokens[r.TokenID] = DelegationToken{
		TokenID: r.TokenID, Owner: r.Owner, Requester: r.Requester, Renewers: slices.Clone(r.Renewers),
		IssueTimestamp: r.IssueTimestamp, ExpiryTimestamp: r.ExpirationTimestamp, MaxTimestamp: r.MaxTimestamp,
	}
	return nil
}

func (b *builder) removeDelegationToken(r RemoveDelegationTokenRecord) error {
	if _, ok := b.img.tokens[r.TokenID]; !ok {
		return invalid("remove of unknown delegation token %s", r.TokenID)
	}
	b.ownTokens()
	delete(b.img.tokens, r.TokenID)
	return nil
}
