package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// saslStage is where a connection of a SASL listener is in Kafka's
// authentication sequence (the states of Kafka's SaslServerAuthenticator).
type saslStage uint8

const (
	// saslHandshake: ApiVersions or SaslHandshake comes next.
	saslHandshake saslStage = iota
	// saslAuthenticate: after SaslHandshake v1, SaslAuthenticate requests
	// carry the tokens.
	saslAuthenticate
	// saslRawToken: after SaslHandshake v0, the next frame is a bare
	// token, answered by a bare token (the pre-KIP-152 framing that sarama
	// still uses by default).
	saslRawToken
	// saslDone: authenticated; a SaslHandshake starts a re-authentication
	// (KIP-368).
	saslDone
)

// saslConn is the SASL state of one connection. Only the connection's
// read loop touches it, one request at a time.
type saslConn struct {
	sec   *listenerSecurity
	stage saslStage
	// mechanism of the current or last exchange; a re-authentication must
	// keep it, as in Kafka.
	mechanism string
	session   auth.Session
	// authenticated: a principal was established once; a later exchange
	// is a re-authentication and may not change it.
	authenticated bool
	// tokenAuthenticated: the last exchange logged in with a delegation
	// token (tokenauth=true), which may not create or renew tokens.
	tokenAuthenticated bool
	// expires ends the session (connections.max.reauth.ms, a token's
	// expiry); zero when it does not end.
	expires time.Time
}

// errSaslState closes a connection that sent a request its SASL stage does
// not allow, as Kafka closes it (IllegalSaslStateException).
var errSaslState = errors.New("broker: request out of SASL sequence")

// admit checks that a request may come now: before authentication only
// ApiVersions and the SASL exchange, and nothing but a re-authentication
// once the session has expired.
func (s *saslConn) admit(key kmsg.Key, now time.Time) error {
	switch s.stage {
	case saslHandshake:
		if key == kmsg.ApiVersions || key == kmsg.SASLHandshake {
			return nil
		}
	case saslAuthenticate:
		if key == kmsg.SASLAuthenticate {
			return nil
		}
	case saslDone:
		if key == kmsg.SASLHandshake || s.expires.IsZero() || now.Before(s.expires) {
			return nil
		}
		return fmt.Errorf("%w: %s after the session expired (connections.max.reauth.ms or the credential's lifetime); the client did not re-authenticate", errSaslState, key.Name())
	}
	return fmt.Errorf("%w: %s before SASL authentication completed", errSaslState, key.Name())
}

// maxReceive is the largest frame accepted before authentication
// completes (sasl.server.max.receive.size), or 0 once it has.
func (s *saslConn) maxReceive() int32 {
	if s.authenticated && s.stage == saslDone {
		return 0
	}
	return s.sec.saslMaxReceive
}

// startExchange begins an exchange after a SaslHandshake naming mechanism.
// It returns the Kafka error to answer with, nil to go on.
func (s *saslConn) startExchange(mechanism string, version int16) (msg string, ok bool) {
	m, found := s.sec.mechanisms[mechanism]
	switch {
	case s.stage == saslDone && mechanism != s.mechanism:
		return fmt.Sprintf("SASL mechanism %s requested by client is not supported for re-authentication of mechanism %s", mechanism, s.mechanism), false
	case s.stage == saslDone && version == 0:
		return "re-authentication needs SaslHandshake v1", false
	case !found:
		return fmt.Sprintf("Unsupported SASL mechanism %s", mechanism), false
	}
	s.mechanism = mechanism
	s.session = m.NewSession()
	s.stage = saslAuthenticate
	if version == 0 {
		s.stage = saslRawToken
	}
	return "", true
}

// step runs one token of the exchange. When it completes, the connection
// takes its principal, and the session's end is set.
func (c *conn) saslStep(token []byte) (reply []byte, done bool, err error) {
	s := c.sasl
	reply, done, err = s.session.Step(token)
	if err != nil {
		s.session = nil
		return nil, true, err
	}
	if !done {
		return reply, false, nil
	}
	p := s.session.Principal()
	if s.authenticated && p != c.principal {
		s.session = nil
		return nil, true, auth.Failed("Cannot change principals during re-authentication from %s: %s", c.principal, p)
	}
	now := c.b.cfg.Clock.Now()
	s.expires = time.Time{}
	if d := s.sec.reauth[s.mechanism]; d > 0 {
		s.expires = now.Add(d)
	}
	if exp := s.session.Expiry(); !exp.IsZero() && (s.expires.IsZero() || exp.Before(s.expires)) {
		s.expires = exp
	}
	ts, isTokenSession := s.session.(auth.TokenSession)
	s.tokenAuthenticated = isTokenSession && ts.TokenAuthenticated()
	c.principal, s.authenticated, s.stage, s.session = p, true, saslDone, nil
	c.authenticatedAs(p)
	c.b.metrics.listener(c.listener).authSuccesses.Add(1)
	return reply, true, nil
}

// lifetimeMillis is SaslAuthenticate's SessionLifetimeMillis: how long the
// client has until it must re-authenticate, 0 for no limit.
func (s *saslConn) lifetimeMillis(now time.Time) int64 {
	if s.expires.IsZero() {
		return 0
	}
	return max(s.expires.Sub(now).Milliseconds(), 1)
}

// saslRawToken answers a bare token after SaslHandshake v0. A failure
// closes the connection without an answer: the v0 framing has no room
// for an error, and Kafka closes it too.
func (c *conn) saslRawToken(token []byte) (*frame, error) {
	reply, _, err := c.saslStep(token)
	if err != nil {
		return nil, fmt.Errorf("SASL authentication failed: %s", c.authFailed(err))
	}
	buf := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(reply)), uint32(len(reply)))
	return &frame{buf: append(buf, reply...)}, nil
}

// authFailed logs a failed authentication (rate-limited: a client retrying
// a wrong password must not flood the log) and waits
// connection.failed.authentication.delay.ms before the failure is sent and
// the connection closed, as Kafka does to slow password guessing. It
// returns the message for the client.
func (c *conn) authFailed(err error) string {
	c.b.metrics.listener(c.listener).authFailures.Add(1)
	msg := "Authentication failed due to an internal error"
	if auth.IsAuthError(err) {
		msg = err.Error()
	} else {
		c.log.Error("SASL authentication error", "mechanism", c.sasl.mechanism, "err", err)
	}
	c.b.authLog.log(c.b.cfg.Clock.Now(), "failed authentication", "listener", c.listener, "remote", c.remote(),
		"mechanism", c.sasl.mechanism, "reason", msg)
	if d := c.sasl.sec.failedAuthDelay; d > 0 {
		time.Sleep(d)
	}
	return msg
}

// saslExchange reports whether a request is part of logging in, which a
// connection may do before its listener serves anything else.
func saslExchange(key kmsg.Key) bool {
	return key == kmsg.ApiVersions || key == kmsg.SASLHandshake || key == kmsg.SASLAuthenticate
}
