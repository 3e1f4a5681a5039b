package broker

import (
	"context"
	"crypto/hmac"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
)

// Delegation tokens (KIP-48) on the broker: who may use the token APIs
// (tokenRequester), the way a token write reaches the active controller
// with its requester (here, or forwarded in an Envelope), and the SCRAM
// credentials of tokens for tokenauth=true logins (tokenLogins). The
// controller (internal/controller/delegation_tokens.go) decides; the
// metadata image is where every broker finds the tokens.

// tokenRequester is who asks a token API: the principal of the
// connection, or the one a forwarding broker put in an Envelope.
type tokenRequester struct {
	principal auth.Principal
	// tokenAuthenticated: the principal logged in with a delegation token.
	tokenAuthenticated bool
	// protocol is the security protocol of the connection the request
	// came on.
	protocol string
	// forwarded: the request came in an Envelope from a broker that
	// checked the client's connection itself.
	forwarded bool
	// controllerListener: the connection is on a controller listener,
	// where nothing is forwarded again.
	controllerListener bool
	// host is the client's address, for logs.
	host string
	// aclHost is the client's IP as ACLs name it (conn.aclHost): the
	// connection's, or the one an Envelope carries.
	aclHost string
	// c is the connection the request came on (the client's, or the
	// forwarding broker's Envelope), whose audit records a denial; nil in
	// tests that call the token APIs directly.
	c *conn
}

func (c *conn) tokenRequester() tokenRequester {
	r := tokenRequester{principal: c.principal, protocol: "PLAINTEXT", controllerListener: c.controllerListener, host: c.remote(),
		aclHost: c.aclHost(), c: c}
	if c.sec != nil {
		r.protocol = c.sec.protocol
	}
	if c.sasl != nil {
		r.tokenAuthenticated = c.sasl.tokenAuthenticated
	}
	return r
}

// allowed is Kafka's allowTokenRequests: a principal that logged in with
// a token may not use the token APIs (a token could otherwise beget
// tokens that outlive it), nor may a connection that did not
// authenticate: PLAINTEXT, or SSL without a client certificate. A
// forwarded request was checked by the broker the client is connected to.
func (r tokenRequester) allowed() bool {
	switch {
	case r.tokenAuthenticated:
		return false
	case r.forwarded:
		return true
	case r.protocol == "PLAINTEXT":
		return false
	case r.protocol == "SSL" && r.principal == auth.Anonymous:
		return false
	}
	return true
}

// authorizeToken is authorize for the requester of a token API: its
// principal from its host, which an Envelope may carry in place of the
// connection's (Kafka authorizes a forwarded request with the context
// EnvelopeUtils builds from them). A denial is audited on the connection
// the request came on, naming the requester.
func (b *Broker) authorizeToken(r tokenRequester, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	a := b.authorizer()
	if a == nil || a.Authorize(r.principal, r.aclHost, op, rt, name) {
		return true
	}
	if r.c != nil {
		b.deniedAs(r.c, r.principal, r.aclHost, op, rt, name)
	}
	return false
}

// forwardsTokenWrite reports whether a token write goes to the active
// controller in an Envelope: in a quorum, on a node that is not the active
// controller, for a client (a controller listener's connection is the
// forwarded copy or a tool that reached the controller itself).
func (b *Broker) forwardsTokenWrite(r tokenRequester) bool {
	return b.cfg.quorum.cluster() && !r.controllerListener && !r.forwarded && !b.ctrl.Active()
}

// tokenWrite runs a token write: on the controller here, or forwarded in
// an Envelope that carries the requester. local runs it here and returns
// its response; awaited tells, from the response, when the local image
// shows the write, so that the client's next request to this broker (a
// login with the new token) finds it. An error means no controller
// answered within forwardTimeout: the connection is closed, and the client
// reconnects and retries, as after a failed forward.
func (b *Broker) tokenWrite(r tokenRequester, clientID string, req kmsg.Request, local func(context.Context) kmsg.Response,
	awaited func(*metadata.Image, kmsg.Response) bool) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(b.tasks.Context(), forwardTimeout)
	defer cancel()
	var resp kmsg.Response
	if b.forwardsTokenWrite(r) {
		var err error
		if resp, err = b.forwardInEnvelope(ctx, r, clientID, req); err != nil {
			return nil, fmt.Errorf("broker: forward %s: %w", kmsg.NameForKey(req.Key()), err)
		}
	} else {
		resp = local(ctx)
	}
	// As awaitForwarded: briefly, a committed write is answered either way.
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	b.awaitImage(wctx, func() bool { return awaited(b.ctrl.Image(), resp) })
	b.catchUpMetadata()
	return resp, nil
}

// forwardInEnvelope sends req to the active controller in an Envelope
// (key 58, KIP-590) with the requester's principal, as Kafka's brokers
// forward the token writes, and decodes the response the controller put
// in it.
func (b *Broker) forwardInEnvelope(ctx context.Context, r tokenRequester, clientID string, req kmsg.Request) (kmsg.Response, error) {
	principal := kmsg.NewDefaultPrincipalData()
	principal.Type, principal.Name, principal.TokenAuthenticated = r.principal.Type, r.principal.Name, r.tokenAuthenticated
	env := kmsg.NewPtrEnvelopeRequest()
	env.RequestData = appendRequestHeaderAndBody(nil, req, 0, clientID)
	env.RequestPrincipal = principal.AppendTo(nil)
	env.ClientHostAddress = clientHostAddress(r.host)
	out, err := b.toController(ctx, env, func(resp kmsg.Response) bool {
		return resp.(*kmsg.EnvelopeResponse).ErrorCode == kerr.NotController.Code
	})
	if err != nil {
		return nil, err
	}
	envResp := out.(*kmsg.EnvelopeResponse)
	if err := kerr.ErrorForCode(envResp.ErrorCode); err != nil {
		return nil, err
	}
	return decodeResponseHeaderAndBody(envResp.ResponseData, req)
}

// clientHostAddress is the IP of host:port as Envelope carries it (4 or
// 16 bytes), empty when it does not parse.
func clientHostAddress(hostPort string) []byte {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		return []byte{}
	}
	ip := net.ParseIP(host)
	if ip4 := ip.To4(); ip4 != nil {
		return ip4
	}
	if ip == nil {
		return []byte{}
	}
	return ip
}

// tokenOfHMAC finds the token an HMAC belongs to in img.
func tokenOfHMAC(img *metadata.Image, secret string, tokenHMAC []byte) (metadata.DelegationToken, bool) {
	if secret == "" || len(tokenHMAC) == 0 {
		return metadata.DelegationToken{}, false
	}
	for _, t := range img.DelegationTokens() {
		if hmac.Equal(auth.DelegationTokenHMAC(secret, t.TokenID), tokenHMAC) {
			return t, true
		}
	}
	return metadata.DelegationToken{}, false
}

// tokenExpiryShown reports whether img has the token of an HMAC at the
// expiry a renewal or an expiry answered: a forwarded write has reached
// this broker. A broker without the secret key cannot tell and does not
// wait.
func tokenExpiryShown(img *metadata.Image, secret string, tokenHMAC []byte, expiry int64) bool {
	if secret == "" {
		return true
	}
	t, ok := tokenOfHMAC(img, secret, tokenHMAC)
	return ok && t.ExpiryTimestamp == expiry
}
