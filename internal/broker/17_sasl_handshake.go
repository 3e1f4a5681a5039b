package broker

// SaslHandshake (key 17), versions 0-1.
//
// Picks the SASL mechanism of a connection on a SASL_PLAINTEXT or SASL_SSL
// listener, from the listener's sasl.enabled.mechanisms. After v0 the
// tokens follow as bare frames (saslRawToken); after v1 they come in
// SaslAuthenticate requests (KIP-152). An unknown mechanism is answered
// with UNSUPPORTED_SASL_MECHANISM and the enabled list, and the connection
// closed, as Kafka does.
//
// Once authenticated, a SaslHandshake v1 starts a re-authentication
// (KIP-368), which must use the same mechanism. On a listener without SASL,
// or out of sequence, the answer is ILLEGAL_SASL_STATE, as Kafka's request
// handler answers it.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.SASLHandshake, min: 0, max: 1, handle: handleSaslHandshake})
}

func handleSaslHandshake(b *Broker, c *conn, h requestHeader, r kmsg.Request) (*frame, error) {
	req := r.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	s := c.sasl
	if s == nil || (s.stage != saslHandshake && s.stage != saslDone) {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return encodeResponse(h, resp), nil
	}
	resp.SupportedMechanisms = s.sec.enabled
	if msg, ok := s.startExchange(req.Mechanism, req.Version); !ok {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		c.log.Info("SASL handshake refused", "mechanism", req.Mechanism, "reason", msg)
		f := encodeResponse(h, resp)
		f.closeAfter = true
		return f, nil
	}
	return encodeResponse(h, resp), nil
}
