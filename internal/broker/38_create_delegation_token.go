package broker

// CreateDelegationToken (key 38), versions 1-3 (KIP-48; v3 KIP-373).
//
// Creates a delegation token through the active controller
// (internal/controller's CreateDelegationToken, Kafka's
// DelegationTokenControlManager rules) and answers its ID and HMAC: a
// client then logs in with SCRAM as the token ID, the base64 HMAC as the
// password and tokenauth=true. The owner is the requester unless v3 names
// another (KIP-373); renewers may renew and expire it besides the owner.
// It expires delegation.token.expiry.time.ms after creation unless
// renewed and lives at most delegation.token.max.lifetime.ms, or
// MaxLifetimeMillis when positive and shorter.
//
// Refused, as Kafka's KafkaApis and ControllerApis, in their order:
//   - DELEGATION_TOKEN_REQUEST_NOT_ALLOWED from a connection that logged
//     in with a delegation token, or did not authenticate (PLAINTEXT, SSL
//     without a client certificate);
//   - DELEGATION_TOKEN_AUTHORIZATION_FAILED for an owner other than the
//     requester without CREATE_TOKENS on the USER resource named by the
//     owner (Type:Name, KIP-373); a requester may always create tokens
//     for itself (Authorization, below);
//   - INVALID_PRINCIPAL_TYPE for a renewer that is not a User (and, where
//     Kafka would fail on a null, for an owner name without a type);
//   - DELEGATION_TOKEN_AUTH_DISABLED without delegation.token.secret.key on
//     the controller.
//
// Authorization (authz.go): the one check above, made by the broker the
// client reached and again, with the Envelope's principal and client
// address, by the controller it forwards to, as Kafka's KafkaApis and
// ControllerApis both make it; audited when denied.
//
// The broker applies the image before it answers, so the token logs in at
// once. In a quorum a broker that is not the active controller forwards the
// request in an Envelope with the requester's principal (58_envelope.go).
// Version 0, which Kafka 4 removed (KIP-896), is not served.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.CreateDelegationToken, min: 1, max: 3, handle: handleCreateDelegationToken})
}

func handleCreateDelegationToken(b *Broker, c *conn, h requestHeader, r kmsg.Request) (*frame, error) {
	resp, err := b.createDelegationToken(c.tokenRequester(), h.clientID, r.(*kmsg.CreateDelegationTokenRequest))
	if err != nil {
		return nil, err
	}
	return encodeResponse(h, resp), nil
}

// createDelegationToken answers a CreateDelegationToken of r, from a
// client's connection or an Envelope.
func (b *Broker) createDelegationToken(r tokenRequester, clientID string, req *kmsg.CreateDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
	owner := r.principal
	ownerTyped := true
	if req.OwnerPrincipalName != nil && *req.OwnerPrincipalName != "" {
		owner = auth.Principal{Name: *req.OwnerPrincipalName}
		if req.OwnerPrincipalType != nil {
			owner.Type = *req.OwnerPrincipalType
		}
		ownerTyped = owner.Type != ""
	}
	resp.PrincipalType, resp.PrincipalName = owner.Type, owner.Name
	resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = r.principal.Type, r.principal.Name
	failed := func(code int16) *kmsg.CreateDelegationTokenResponse {
		resp.ErrorCode = code
		resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = -1, -1, -1
		return resp
	}
	if !r.allowed() {
		return failed(kerr.DelegationTokenRequestNotAllowed.Code), nil
	}
	if owner != r.principal && !b.authorizeToken(r, kmsg.ACLOperationCreateTokens, kmsg.ACLResourceTypeUser, owner.String()) {
		return failed(kerr.DelegationTokenAuthorizationFailed.Code), nil
	}
	renewers := make([]auth.Principal, len(req.Renewers))
	for i, rn := range req.Renewers {
		renewers[i] = auth.Principal{Type: rn.PrincipalType, Name: rn.PrincipalName}
		if rn.PrincipalType != auth.UserType {
			return failed(kerr.InvalidPrincipalType.Code), nil
		}
	}
	if !ownerTyped {
		return failed(kerr.InvalidPrincipalType.Code), nil
	}
	local := func(ctx context.Context) kmsg.Response {
		res := b.ctrl.CreateDelegationToken(ctx, controller.CreateDelegationToken{
			Owner: owner, Requester: r.principal, Renewers: renewers, MaxLifetimeMs: req.MaxLifetimeMillis})
		if res.ErrorCode != 0 {
			return failed(res.ErrorCode)
		}
		t := res.Token
		resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = t.IssueTimestamp, t.ExpiryTimestamp, t.MaxTimestamp
		resp.TokenID, resp.HMAC = t.TokenID, res.HMAC
		return resp
	}
	return b.tokenWrite(r, clientID, req, local, func(img *metadata.Image, out kmsg.Response) bool {
		cr := out.(*kmsg.CreateDelegationTokenResponse)
		_, ok := img.DelegationToken(cr.TokenID)
		return cr.ErrorCode != 0 || ok
	})
}
