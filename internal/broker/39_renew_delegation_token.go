package broker

// RenewDelegationToken (key 39), versions 1-2 (KIP-48).
//
// Moves the expiry of the token whose HMAC the request carries to
// delegation.token.expiry.time.ms from now, or RenewTimeMillis when
// positive and shorter, never past the token's maximum lifetime, through
// the active controller (Kafka's DelegationTokenControlManager), and
// answers the new expiry. Errors, with an expiry of -1, in Kafka's order:
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED from a token-authenticated or
// unauthenticated connection, DELEGATION_TOKEN_AUTH_DISABLED without a
// secret key, DELEGATION_TOKEN_NOT_FOUND for an HMAC no token has,
// DELEGATION_TOKEN_EXPIRED, DELEGATION_TOKEN_OWNER_MISMATCH unless the
// requester owns the token or is one of its renewers. A session logged in
// with the token keeps its old expiry until the client re-authenticates
// (KIP-368). In a quorum a broker that is not the active controller
// forwards the request in an Envelope. Version 0, which Kafka 4 removed
// (KIP-896), is not served.
//
// Authorization: no ACL, as in Kafka (KafkaApis, ControllerApis and
// DelegationTokenControlManager check none): who may act on a token is
// its owner and renewers, which the controller checks
// (DELEGATION_TOKEN_OWNER_MISMATCH above), even for a super user.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.RenewDelegationToken, min: 1, max: 2, handle: handleRenewDelegationToken})
}

func handleRenewDelegationToken(b *Broker, c *conn, h requestHeader, r kmsg.Request) (*frame, error) {
	resp, err := b.renewDelegationToken(c.tokenRequester(), h.clientID, r.(*kmsg.RenewDelegationTokenRequest))
	if err != nil {
		return nil, err
	}
	return encodeResponse(h, resp), nil
}

func (b *Broker) renewDelegationToken(r tokenRequester, clientID string, req *kmsg.RenewDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
	if !r.allowed() {
		resp.ErrorCode, resp.ExpiryTimestamp = kerr.DelegationTokenRequestNotAllowed.Code, -1
		return resp, nil
	}
	local := func(ctx context.Context) kmsg.Response {
		res := b.ctrl.RenewDelegationToken(ctx, r.principal, req.HMAC, req.RenewTimeMillis)
		resp.ErrorCode, resp.ExpiryTimestamp = res.ErrorCode, res.ExpiryTimestamp
		return resp
	}
	return b.tokenWrite(r, clientID, req, local, func(img *metadata.Image, out kmsg.Response) bool {
		rr := out.(*kmsg.RenewDelegationTokenResponse)
		return rr.ErrorCode != 0 || tokenExpiryShown(img, b.delegationTokenSecret(), req.HMAC, rr.ExpiryTimestamp)
	})
}
