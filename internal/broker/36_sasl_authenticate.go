package broker

// SaslAuthenticate (key 36), versions 0-2.
//
// Carries the SASL tokens after SaslHandshake v1 (KIP-152). Each token goes
// to the session of the mechanism chosen (internal/auth); its reply comes
// back in SASLAuthBytes. When the exchange completes, the connection takes
// the authenticated principal and, from v1 (KIP-368), learns in
// SessionLifetimeMillis how long it has before it must re-authenticate: the
// listener's connections.max.reauth.ms for the mechanism, or the
// credential's own expiry if sooner; 0 when neither applies.
//
// A failed authentication is answered with SASL_AUTHENTICATION_FAILED and a
// message that never holds a secret, after
// connection.failed.authentication.delay.ms, and the connection is closed,
// as Kafka does. Out of sequence or on a listener without SASL the answer
// is ILLEGAL_SASL_STATE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.SASLAuthenticate, min: 0, max: 2, handle: handleSaslAuthenticate})
}

func handleSaslAuthenticate(b *Broker, c *conn, h requestHeader, r kmsg.Request) (*frame, error) {
	req := r.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if c.sasl == nil || c.sasl.stage != saslAuthenticate {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return encodeResponse(h, resp), nil
	}
	reply, done, err := c.saslStep(req.SASLAuthBytes)
	if err != nil {
		msg := c.authFailed(err)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		resp.ErrorMessage = &msg
		f := encodeResponse(h, resp)
		f.closeAfter = true
		return f, nil
	}
	resp.SASLAuthBytes = reply
	if done {
		resp.SessionLifetimeMillis = c.sasl.lifetimeMillis(b.cfg.Clock.Now())
	}
	return encodeResponse(h, resp), nil
}
