package broker

// DescribeDelegationToken (key 41), versions 1-3 (KIP-48; v3 KIP-373).
//
// Lists the delegation tokens of the broker's current metadata image,
// sorted by token ID, each with its owner, requester (v3), timestamps,
// renewers and HMAC, as Kafka's KafkaApis.handleDescribeTokensRequest
// serves them from the broker's token cache. A null owner list means
// every token, an empty one none; otherwise a token is listed when one of
// the owners named owns or may renew it. Tokens past their expiry are
// listed until the controller removes them
// (delegation.token.expiry.check.interval.ms), as in Kafka.
//
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED from a token-authenticated or
// unauthenticated connection, DELEGATION_TOKEN_AUTH_DISABLED without
// delegation.token.secret.key on this broker. Version 0, which Kafka 4
// removed (KIP-896), is not served.
//
// Authorization (authz.go), as Kafka's DelegationTokenManager.filterToken:
// of the tokens the owner list selects, the principal sees those it owns
// or may renew, and any other only with DESCRIBE on the DELEGATION_TOKEN
// resource named by the token's ID or DESCRIBE_TOKENS on the USER resource
// named by its owner (Type:Name, KIP-373); the rest are left out, with no
// error. The checks are audited, as Kafka logs them. Without an authorizer
// everyone sees every token, as in Kafka.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeDelegationToken, min: 1, max: 3, handle: typed(handleDescribeDelegationToken)})
}

func handleDescribeDelegationToken(b *Broker, c *conn, req *kmsg.DescribeDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
	r := c.tokenRequester()
	secret := b.delegationTokenSecret()
	switch {
	case !r.allowed():
		resp.ErrorCode = kerr.DelegationTokenRequestNotAllowed.Code
		return resp, nil
	case secret == "":
		resp.ErrorCode = kerr.DelegationTokenAuthDisabled.Code
		return resp, nil
	case req.Owners != nil && len(req.Owners) == 0:
		return resp, nil
	}
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	for _, t := range img.DelegationTokens() {
		if !ownedByOneOf(t, req.Owners) {
			continue
		}
		if !b.mayDescribeToken(r, t) {
			continue
		}
		resp.TokenDetails = append(resp.TokenDetails, describedToken(t, secret))
	}
	return resp, nil
}

// mayDescribeToken is Kafka's DelegationTokenManager.filterToken: its
// owner and renewers see a token; anyone else needs DESCRIBE on the
// DELEGATION_TOKEN resource of its ID or, failing that, DESCRIBE_TOKENS on
// the USER resource of its owner. Both checks are audited when denied, as
// KafkaApis makes them with logIfDenied left true.
func (b *Broker) mayDescribeToken(r tokenRequester, t metadata.DelegationToken) bool {
	return t.OwnerOrRenewer(r.principal.String()) ||
		b.authorizeToken(r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeDelegationToken, t.TokenID) ||
		b.authorizeToken(r, kmsg.ACLOperationDescribeTokens, kmsg.ACLResourceTypeUser, t.Owner)
}

// ownedByOneOf: a null owner list selects every token, else a token one
// of the owners owns or may renew.
func ownedByOneOf(t metadata.DelegationToken, owners []kmsg.DescribeDelegationTokenRequestOwner) bool {
	if owners == nil {
		return true
	}
	for _, o := range owners {
		if t.OwnerOrRenewer(auth.Principal{Type: o.PrincipalType, Name: o.PrincipalName}.String()) {
			return true
		}
	}
	return false
}

func describedToken(t metadata.DelegationToken, secret string) kmsg.DescribeDelegationTokenResponseTokenDetail {
	d := kmsg.NewDescribeDelegationTokenResponseTokenDetail()
	owner, requester := principalOf(t.Owner), principalOf(t.Requester)
	d.PrincipalType, d.PrincipalName = owner.Type, owner.Name
	d.TokenRequesterPrincipalType, d.TokenRequesterPrincipalName = requester.Type, requester.Name
	d.IssueTimestamp, d.ExpiryTimestamp, d.MaxTimestamp = t.IssueTimestamp, t.ExpiryTimestamp, t.MaxTimestamp
	d.TokenID, d.HMAC = t.TokenID, auth.DelegationTokenHMAC(secret, t.TokenID)
	for _, rn := range t.Renewers {
		p := principalOf(rn)
		renewer := kmsg.NewDescribeDelegationTokenResponseTokenDetailRenewer()
		renewer.PrincipalType, renewer.PrincipalName = p.Type, p.Name
		d.Renewers = append(d.Renewers, renewer)
	}
	return d
}
