package broker

// Envelope (key 58), version 0 (KIP-590), controller listeners only.
//
// A broker that is not the active controller forwards a request to it in
// an Envelope that carries the client's principal, as
// DefaultKafkaPrincipalBuilder serializes it (DefaultPrincipalData: type,
// name, whether it logged in with a delegation token), and the client's
// address. The controller runs the request as that principal and answers
// its response, header included, in ResponseData.
//
// Samsa forwards the delegation token writes this way
// (CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken),
// whose owner and renewer checks need the client's principal; its other
// forwarded writes are sent as they are (forward.go). Envelope-level
// errors, as Kafka's EnvelopeUtils: NOT_CONTROLLER on a node that is not
// the active controller (the sender retries the new one);
// UNSUPPORTED_VERSION for an inner request that does not parse or whose
// version is not served; INVALID_REQUEST for an API that is not carried
// this way; PRINCIPAL_DESERIALIZATION_FAILURE for a principal that does
// not decode; INVALID_REQUEST for a client address that is not 4 or 16
// bytes (InetAddress.getByAddress).
//
// Authorization (authz.go): CLUSTER_ACTION on the CLUSTER resource, before
// anything else, else CLUSTER_AUTHORIZATION_FAILED in the Envelope's
// error (Kafka's ControllerApis.handleEnvelopeRequest): only brokers
// forward, as the ANONYMOUS of super.users over PLAINTEXT. The inner
// request is then authorized as its handler authorizes a client's, with
// the principal and client address the Envelope carries (a denial is
// audited on this connection, naming them).

import (
	"net"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
)

func init() {
	registerAPI(apiEntry{key: kmsg.Envelope, min: 0, max: 0, handle: typed(handleEnvelope), controllerOnly: true})
}

func handleEnvelope(b *Broker, c *conn, req *kmsg.EnvelopeRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.EnvelopeResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	if !b.ctrl.Active() {
		resp.ErrorCode = kerr.NotController.Code
		return resp, nil
	}
	h, inner, code := parseEnveloped(req.RequestData)
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	var p kmsg.DefaultPrincipalData
	if err := p.ReadFrom(req.RequestPrincipal); err != nil || p.Type == "" {
		resp.ErrorCode = kerr.PrincipalDeserializationFailure.Code
		return resp, nil
	}
	clientIP := net.IP(req.ClientHostAddress)
	if len(clientIP) != net.IPv4len && len(clientIP) != net.IPv6len {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	r := tokenRequester{principal: auth.Principal{Type: p.Type, Name: p.Name}, tokenAuthenticated: p.TokenAuthenticated,
		forwarded: true, controllerListener: true, host: c.remote(),
		aclHost: javaHostAddress(&net.TCPAddr{IP: clientIP}), c: c}
	var out kmsg.Response
	var err error
	switch ir := inner.(type) {
	case *kmsg.CreateDelegationTokenRequest:
		out, err = b.createDelegationToken(r, h.clientID, ir)
	case *kmsg.RenewDelegationTokenRequest:
		out, err = b.renewDelegationToken(r, h.clientID, ir)
	case *kmsg.ExpireDelegationTokenRequest:
		out, err = b.expireDelegationToken(r, h.clientID, ir)
	default:
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	if err != nil {
		return nil, err
	}
	// appendResponse writes the frame's size first; ResponseData has none.
	resp.ResponseData = appendResponse(nil, h.correlationID, out)[4:]
	return resp, nil
}

// enveloped are the APIs an Envelope may carry.
var enveloped = map[kmsg.Key]bool{
	kmsg.CreateDelegationToken: true,
	kmsg.RenewDelegationToken:  true,
	kmsg.ExpireDelegationToken: true,
}

// parseEnveloped decodes the request an Envelope carries, or returns the
// Envelope's error code.
func parseEnveloped(data []byte) (requestHeader, kmsg.Request, int16) {
	h, body, err := parseRequestHeader(data)
	if err != nil {
		return h, nil, kerr.UnsupportedVersion.Code
	}
	api, known := apiTable[kmsg.Key(h.key)]
	switch {
	case !known || !enveloped[api.key]:
		return h, nil, kerr.InvalidRequest.Code
	case h.version < api.min || h.version > api.max:
		return h, nil, kerr.UnsupportedVersion.Code
	}
	req := kmsg.RequestForKey(h.key)
	req.SetVersion(h.version)
	if req.IsFlexible() {
		if body, err = skipHeaderTags(body); err != nil {
			return h, nil, kerr.UnsupportedVersion.Code
		}
	}
	if err := req.ReadFrom(body); err != nil {
		return h, nil, kerr.UnsupportedVersion.Code
	}
	return h, req, 0
}

// appendRequestHeaderAndBody writes req with its request header (v1, or
// v2 with empty tagged fields for a flexible version) and no size: an
// Envelope's RequestData.
func appendRequestHeaderAndBody(dst []byte, req kmsg.Request, correlationID int32, clientID string) []byte {
	dst = kbin.AppendInt16(dst, req.Key())
	dst = kbin.AppendInt16(dst, req.GetVersion())
	dst = kbin.AppendInt32(dst, correlationID)
	dst = kbin.AppendNullableString(dst, &clientID)
	if req.IsFlexible() {
		dst = kbin.AppendUvarint(dst, 0)
	}
	return req.AppendTo(dst)
}

// decodeResponseHeaderAndBody reads an Envelope's ResponseData: the
// response to req, after its header (the correlation ID, and empty tagged
// fields for a flexible version).
func decodeResponseHeaderAndBody(data []byte, req kmsg.Request) (kmsg.Response, error) {
	resp := req.ResponseKind()
	r := kbin.Reader{Src: data}
	r.Int32()
	if resp.IsFlexible() {
		for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
			r.Uvarint()
			r.Span(int(r.Uvarint()))
		}
	}
	if !r.Ok() {
		return nil, errMalformed
	}
	if err := resp.ReadFrom(r.Src); err != nil {
		return nil, err
	}
	return resp, nil
}
