package broker

// ExpireDelegationToken (key 40), versions 1-2 (KIP-48).
//
// Sets the expiry of the token whose HMAC the request carries to
// ExpiryPeriodMillis from now, never past its maximum lifetime, through
// the active controller (Kafka's DelegationTokenControlManager); a
// negative period removes the token at once, after which it no longer
// logs in. Answers the new expiry. Errors, with an expiry of -1, in
// Kafka's order: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED from a
// token-authenticated or unauthenticated connection,
// DELEGATION_TOKEN_AUTH_DISABLED without a secret key,
// DELEGATION_TOKEN_NOT_FOUND, DELEGATION_TOKEN_OWNER_MISMATCH unless the
// requester owns the token or is one of its renewers, and, for a period of
// 0 or more, DELEGATION_TOKEN_EXPIRED. Connections logged in with the token
// keep their sessions until these end (the token's expiry when they
// logged in, or connections.max.reauth.ms), as in Kafka. In a quorum a
// broker that is not the active controller forwards the request in an
// Envelope. Version 0, which Kafka 4 removed (KIP-896), is not served.
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
	registerAPI(apiEntry{key: kmsg.ExpireDelegationToken, min: 1, max: 2, handle: handleExpireDelegationToken})
}

func handleExpireDelegationToken(b *Broker, c *conn, h requestHeader, r kmsg.Request) (*frame, error) {
	resp, err := b.expireDelegationToken(c.tokenRequester(), h.clientID, r.(*kmsg.ExpireDelegationTokenRequest))
	if err != nil {
		return nil, err
	}
	return encodeResponse(h, resp), nil
}

func (b *Broker) expireDelegationToken(r tokenRequester, clientID string, req *kmsg.ExpireDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
	if !r.allowed() {
		resp.ErrorCode, resp.ExpiryTimestamp = kerr.DelegationTokenRequestNotAllowed.Code, -1
		return resp, nil
	}
	local := func(ctx context.Context) kmsg.Response {
		res := b.ctrl.ExpireDelegationToken(ctx, r.principal, req.HMAC, req.ExpiryPeriodMillis)
		resp.ErrorCode, resp.ExpiryTimestamp = res.ErrorCode, res.ExpiryTimestamp
		return resp
	}
	return b.tokenWrite(r, clientID, req, local, func(img *metadata.Image, out kmsg.Response) bool {
		er := out.(*kmsg.ExpireDelegationTokenResponse)
		if er.ErrorCode != 0 {
			return true
		}
		if req.ExpiryPeriodMillis < 0 {
			_, found := tokenOfHMAC(img, b.delegationTokenSecret(), req.HMAC)
			return !found
		}
		return tokenExpiryShown(img, b.delegationTokenSecret(), req.HMAC, er.ExpiryTimestamp)
	})
}
