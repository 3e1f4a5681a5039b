package broker

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
)

// envelopeOf wraps req as a broker forwards it, for principal.
func envelopeOf(req kmsg.Request, principal auth.Principal, tokenAuthenticated bool) *kmsg.EnvelopeRequest {
	p := kmsg.NewDefaultPrincipalData()
	p.Type, p.Name, p.TokenAuthenticated = principal.Type, principal.Name, tokenAuthenticated
	env := kmsg.NewPtrEnvelopeRequest()
	env.RequestData = appendRequestHeaderAndBody(nil, req, 9, "test-broker")
	env.RequestPrincipal, env.ClientHostAddress = p.AppendTo(nil), []byte{127, 0, 0, 1}
	return env
}

func dialController(t *testing.T, n *clusterNode) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", "127.0.0.1:"+n.ctrlPort, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t: t, nc: nc}
}

// TestClusterForwardsDelegationTokenWritesInAnEnvelope: in a quorum, a
// broker that is not the active controller forwards the token writes in an
// Envelope carrying the client's principal, which the controller uses as
// the token's owner and requester and checks renewals against; the
// forwarding broker answers once its own image shows the write. The
// controller refuses an Envelope's token-authenticated principal, an API
// an Envelope does not carry, and Envelopes when it is not active.
func TestClusterForwardsDelegationTokenWritesInAnEnvelope(t *testing.T) {
	c := newTestCluster(t, 3, map[string]string{"delegation.token.secret.key": "cluster-token-secret"})
	active := c.activeController()
	var others []*clusterNode
	for _, n := range c.nodes {
		if n != active {
			others = append(others, n)
		}
	}
	via, renewVia := others[0].get(), others[1].get()
	alice := tokenRequester{principal: auth.User("alice"), protocol: "SASL_PLAINTEXT", host: "127.0.0.1:40000"}

	create := kmsg.NewPtrCreateDelegationTokenRequest()
	create.Version = 3
	create.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "User", PrincipalName: "bob"}}
	out, err := via.createDelegationToken(alice, "test", create)
	if err != nil {
		t.Fatal(err)
	}
	cr := out.(*kmsg.CreateDelegationTokenResponse)
	if cr.ErrorCode != 0 || cr.PrincipalName != "alice" || cr.TokenRequesterPrincipalName != "alice" {
		t.Fatalf("create via node %d: %v, owner %s, requester %s", others[0].id, kerr.ErrorForCode(cr.ErrorCode), cr.PrincipalName, cr.TokenRequesterPrincipalName)
	}
	tok, ok := via.meta.Load().DelegationToken(cr.TokenID)
	if !ok || tok.Owner != "User:alice" || tok.Requester != "User:alice" {
		t.Fatalf("node %d answered with its image holding %+v, %v", others[0].id, tok, ok)
	}

	renew := kmsg.NewPtrRenewDelegationTokenRequest()
	renew.Version, renew.HMAC, renew.RenewTimeMillis = 2, cr.HMAC, 60_000
	mallory := alice
	mallory.principal = auth.User("mallory")
	out, err = renewVia.renewDelegationToken(mallory, "test", renew)
	if err != nil {
		t.Fatal(err)
	}
	if code := out.(*kmsg.RenewDelegationTokenResponse).ErrorCode; code != kerr.DelegationTokenOwnerMismatch.Code {
		t.Fatalf("mallory renews via node %d: %v", others[1].id, kerr.ErrorForCode(code))
	}
	bob := alice
	bob.principal = auth.User("bob")
	out, err = renewVia.renewDelegationToken(bob, "test", renew)
	if err != nil {
		t.Fatal(err)
	}
	rr := out.(*kmsg.RenewDelegationTokenResponse)
	if got, _ := renewVia.meta.Load().DelegationToken(cr.TokenID); rr.ErrorCode != 0 || got.ExpiryTimestamp != rr.ExpiryTimestamp {
		t.Fatalf("bob renews via node %d: %v, expiry %d, its image %d", others[1].id, kerr.ErrorForCode(rr.ErrorCode), rr.ExpiryTimestamp, got.ExpiryTimestamp)
	}

	// Straight to the active controller: a token-authenticated principal,
	// and an API an Envelope does not carry.
	rc := dialController(t, active)
	env := rc.roundTrip(envelopeOf(create, auth.User("alice"), true), 1).(*kmsg.EnvelopeResponse)
	inner, err := decodeResponseHeaderAndBody(env.ResponseData, create)
	if err != nil || env.ErrorCode != 0 || inner.(*kmsg.CreateDelegationTokenResponse).ErrorCode != kerr.DelegationTokenRequestNotAllowed.Code {
		t.Fatalf("a token-authenticated principal's create: envelope %v, %+v, %v", kerr.ErrorForCode(env.ErrorCode), inner, err)
	}
	topics := kmsg.NewPtrCreateTopicsRequest()
	topics.Version = 7
	if env := rc.roundTrip(envelopeOf(topics, auth.User("alice"), false), 2).(*kmsg.EnvelopeResponse); env.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("CreateTopics in an Envelope: %v", kerr.ErrorForCode(env.ErrorCode))
	}
	if env := dialController(t, others[0]).roundTrip(envelopeOf(create, auth.User("alice"), false), 1).(*kmsg.EnvelopeResponse); env.ErrorCode != kerr.NotController.Code {
		t.Fatalf("an Envelope to node %d, not the active controller: %v", others[0].id, kerr.ErrorForCode(env.ErrorCode))
	}

	expire := kmsg.NewPtrExpireDelegationTokenRequest()
	expire.Version, expire.HMAC, expire.ExpiryPeriodMillis = 2, cr.HMAC, -1
	out, err = via.expireDelegationToken(alice, "test", expire)
	if err != nil {
		t.Fatal(err)
	}
	if code := out.(*kmsg.ExpireDelegationTokenResponse).ErrorCode; code != 0 {
		t.Fatalf("expire via node %d: %v", others[0].id, kerr.ErrorForCode(code))
	}
	if _, ok := via.meta.Load().DelegationToken(cr.TokenID); ok {
		t.Fatalf("node %d answered before its image lost the token", others[0].id)
	}
}
