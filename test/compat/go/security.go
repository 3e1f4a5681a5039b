package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// securityFeatures are the security part's features (README, "Security"),
// in its order: a round trip over each protocol and mechanism, then the
// logins that must fail.
var securityFeatures = []string{
	"ssl", "mtls", "mtls-principal",
	"sasl-plain", "sasl-scram-sha-256", "sasl-scram-sha-512", "sasl-oauthbearer",
	"sasl-ssl-plain", "sasl-ssl-scram-sha-256", "sasl-ssl-scram-sha-512", "sasl-ssl-oauthbearer",
	"auth-wrong-password", "auth-unknown-user", "auth-expired-token", "auth-no-client-certificate",
}

// security is how a client connects to one secured listener.
type security struct {
	protocol  string // SSL, SASL_PLAINTEXT or SASL_SSL
	bootstrap string
	// TLS (SSL, SASL_SSL): the CA the broker's certificate is checked
	// against, and the client's certificate and key ("" for none).
	caFile, certFile, keyFile string
	// SASL: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER.
	mechanism      string
	user, password string
	// OAUTHBEARER: the token (a JWS) sent as is.
	token string
}

func (s *security) tls() bool  { return s != nil && s.protocol != "SASL_PLAINTEXT" }
func (s *security) sasl() bool { return s != nil && strings.HasPrefix(s.protocol, "SASL_") }

// tlsConfig trusts the CA file and presents the client certificate, if
// any; the server name is the dialed host, which each client fills in.
func (s *security) tlsConfig() (*tls.Config, error) {
	ca, err := os.ReadFile(s.caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", s.caFile)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if s.certFile != "" {
		pair, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// securedFamily is a family that can connect over a secured listener.
type securedFamily interface {
	family
	// withSecurity is the family connecting with s; an unsupportedError
	// when the client cannot (a mechanism it lacks).
	withSecurity(s security) (securedFamily, error)
	// login connects and makes one request, and returns the client's
	// error, if any.
	login(ctx context.Context) error
	// authFailed says whether err is the client's own error for a login
	// the broker refused (SASL_AUTHENTICATION_FAILED as the client
	// surfaces it).
	authFailed(err error) bool
	// produceOne writes one record to partition 0 of topic, the way that
	// shows the client's error for a topic it may not write.
	produceOne(ctx context.Context, topic string, r rec) error
	// topicDenied says whether err is the client's own error for
	// TOPIC_AUTHORIZATION_FAILED.
	topicDenied(err error) bool
}

// secEnv is what lib.sh's start_secure_samsa exports.
type secEnv struct {
	ssl, mtls, saslPlaintext, saslSSL string
	caFile, certFile, keyFile         string
	otherCertFile, otherKeyFile       string
	clientPrincipal, clientSubject    string
	principalTopicPrefix              string
	// authorizer is authorizer.class.name, "" when the broker has none.
	authorizer                             string
	plainUser, plainPassword               string
	scramUser, scramPassword               string
	unknownUser, wrongPassword             string
	oauthSubject, oauthToken, oauthExpired string
}

func loadSecEnv() (*secEnv, error) {
	var missing []string
	get := func(k string) string {
		v := os.Getenv(k)
		if v == "" {
			missing = append(missing, k)
		}
		return v
	}
	e := &secEnv{
		ssl: get("SAMSA_SSL_BOOTSTRAP"), mtls: get("SAMSA_MTLS_BOOTSTRAP"),
		saslPlaintext: get("SAMSA_SASL_PLAINTEXT_BOOTSTRAP"), saslSSL: get("SAMSA_SASL_SSL_BOOTSTRAP"),
		caFile: get("SAMSA_CA_FILE"), certFile: get("SAMSA_CLIENT_CERT"), keyFile: get("SAMSA_CLIENT_KEY"),
		otherCertFile: get("SAMSA_OTHER_CLIENT_CERT"), otherKeyFile: get("SAMSA_OTHER_CLIENT_KEY"),
		clientPrincipal: get("SAMSA_CLIENT_PRINCIPAL"), clientSubject: get("SAMSA_CLIENT_SUBJECT"),
		authorizer: os.Getenv("SAMSA_AUTHORIZER"), principalTopicPrefix: get("SAMSA_PRINCIPAL_TOPIC_PREFIX"),
		plainUser: get("SAMSA_PLAIN_USER"), plainPassword: get("SAMSA_PLAIN_PASSWORD"),
		scramUser: get("SAMSA_SCRAM_USER"), scramPassword: get("SAMSA_SCRAM_PASSWORD"),
		unknownUser: get("SAMSA_UNKNOWN_USER"), wrongPassword: get("SAMSA_WRONG_PASSWORD"),
		oauthSubject: get("SAMSA_OAUTH_SUBJECT"), oauthToken: get("SAMSA_OAUTH_TOKEN"),
		oauthExpired: get("SAMSA_OAUTH_TOKEN_EXPIRED"),
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the security part needs %s (test/compat/lib.sh start_secure_samsa)", strings.Join(missing, ", "))
	}
	return e, nil
}

// sasl is the connection with mechanism over SASL_PLAINTEXT, or SASL_SSL
// when overTLS, as the mechanism's user.
func (e *secEnv) sasl(mechanism string, overTLS bool) security {
	s := security{protocol: "SASL_PLAINTEXT", bootstrap: e.saslPlaintext, mechanism: mechanism}
	if overTLS {
		s.protocol, s.bootstrap, s.caFile = "SASL_SSL", e.saslSSL, e.caFile
	}
	switch mechanism {
	case "PLAIN":
		s.user, s.password = e.plainUser, e.plainPassword
	case "OAUTHBEARER":
		s.user, s.token = e.oauthSubject, e.oauthToken
	default:
		s.user, s.password = e.scramUser, e.scramPassword
	}
	return s
}

var securityFuncs = map[string]func(ctx context.Context, h *harness, fam family) error{
	"ssl": featSecured(func(e *secEnv) security {
		return security{protocol: "SSL", bootstrap: e.ssl, caFile: e.caFile}
	}),
	"mtls": featSecured(func(e *secEnv) security {
		return security{protocol: "SSL", bootstrap: e.mtls, caFile: e.caFile, certFile: e.certFile, keyFile: e.keyFile}
	}),
	"mtls-principal":         featMTLSPrincipal,
	"sasl-plain":             featSecured(func(e *secEnv) security { return e.sasl("PLAIN", false) }),
	"sasl-scram-sha-256":     featSecured(func(e *secEnv) security { return e.sasl("SCRAM-SHA-256", false) }),
	"sasl-scram-sha-512":     featSecured(func(e *secEnv) security { return e.sasl("SCRAM-SHA-512", false) }),
	"sasl-oauthbearer":       featSecured(func(e *secEnv) security { return e.sasl("OAUTHBEARER", false) }),
	"sasl-ssl-plain":         featSecured(func(e *secEnv) security { return e.sasl("PLAIN", true) }),
	"sasl-ssl-scram-sha-256": featSecured(func(e *secEnv) security { return e.sasl("SCRAM-SHA-256", true) }),
	"sasl-ssl-scram-sha-512": featSecured(func(e *secEnv) security { return e.sasl("SCRAM-SHA-512", true) }),
	"sasl-ssl-oauthbearer":   featSecured(func(e *secEnv) security { return e.sasl("OAUTHBEARER", true) }),

	"auth-wrong-password": featRefused(func(e *secEnv) []security {
		var out []security
		for _, m := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
			s := e.sasl(m, false)
			s.password = e.wrongPassword
			out = append(out, s)
		}
		return out
	}),
	"auth-unknown-user": featRefused(func(e *secEnv) []security {
		var out []security
		for _, m := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
			s := e.sasl(m, false)
			s.user = e.unknownUser
			out = append(out, s)
		}
		return out
	}),
	"auth-expired-token": featRefused(func(e *secEnv) []security {
		s := e.sasl("OAUTHBEARER", false)
		s.token = e.oauthExpired
		return []security{s}
	}),
	"auth-no-client-certificate": featRefused(func(e *secEnv) []security {
		return []security{{protocol: "SSL", bootstrap: e.mtls, caFile: e.caFile}}
	}),
}

// featSecured produces 10 records over the connection conn gives, takes
// the end offset with the client's own ListOffsets over it, consumes to
// it over it, and compares exactly.
func featSecured(conn func(*secEnv) security) func(ctx context.Context, h *harness, fam family) error {
	return func(ctx context.Context, h *harness, fam family) error {
		sf, ok := fam.(securedFamily)
		if !ok {
			return unsupported("%s has no secured connection in this suite", fam.name())
		}
		s := conn(h.sec)
		sfam, err := sf.withSecurity(s)
		if err != nil {
			return err
		}
		topic, err := h.topic(ctx, fam, "secured", 1, nil)
		if err != nil {
			return err
		}
		return roundTrip(ctx, h, sfam, topic, describe(s))
	}
}

// roundTrip produces 10 records to partition 0 of topic with fam, takes the
// end offset with fam's ListOffsets, consumes to it with fam and compares
// exactly; over says how fam connects, for the errors.
func roundTrip(ctx context.Context, h *harness, fam securedFamily, topic, over string) error {
	recs := makeRecords(topic, 10, 1, nowMs())
	if err := fam.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, recs); err != nil {
		return fmt.Errorf("produce over %s: %w", over, err)
	}
	if err := h.inject(ctx, topic, recs); err != nil {
		return err
	}
	end, err := fam.listOffset(ctx, topic, 0, -1)
	if err != nil {
		return fmt.Errorf("list the end offset over %s: %w", over, err)
	}
	got, err := fam.consume(ctx, topic, map[int32]readEnd{0: {end: end, last: end - 1}}, false)
	if err != nil {
		return fmt.Errorf("consume to the end offset %d over %s: %w", end, over, err)
	}
	return checkConsumed(recs, got, zero(), fam.nullAware())
}

// featMTLSPrincipal checks the principal the broker makes of a client
// certificate. start_secure_samsa's ACL lets only SAMSA_CLIENT_PRINCIPAL
// (the MTLS listener's mapping rule applied to the subject) write, read and
// describe the topics named SAMSA_PRINCIPAL_TOPIC_PREFIX...: a certificate
// of another subject must be refused with TOPIC_AUTHORIZATION_FAILED
// (tried until the ACL has taken effect), and the round trip with the
// client's certificate must pass. It needs an authorizer: main leaves it
// out when the broker has none.
func featMTLSPrincipal(ctx context.Context, h *harness, fam family) error {
	sf, ok := fam.(securedFamily)
	if !ok {
		return unsupported("%s has no secured connection in this suite", fam.name())
	}
	e := h.sec
	topic := e.principalTopicPrefix + h.name(fam, "principal")
	if err := h.createTopic(ctx, topic, 1, nil); err != nil {
		return err
	}
	other, err := sf.withSecurity(security{protocol: "SSL", bootstrap: e.mtls, caFile: e.caFile,
		certFile: e.otherCertFile, keyFile: e.otherKeyFile})
	if err != nil {
		return err
	}
	var denied error
	for denied == nil {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := other.produceOne(pctx, topic, makeRecords(topic, 1, 1, nowMs())[0])
		cancel()
		switch {
		case err != nil && other.topicDenied(err):
			denied = err
		case ctx.Err() != nil:
			return fmt.Errorf("another certificate's produce to %s, which only %s may write: %v, want TOPIC_AUTHORIZATION_FAILED", topic, e.clientPrincipal, err)
		default:
			time.Sleep(200 * time.Millisecond) // the ACL is not in force yet
		}
	}
	mine, err := sf.withSecurity(security{protocol: "SSL", bootstrap: e.mtls, caFile: e.caFile, certFile: e.certFile, keyFile: e.keyFile})
	if err != nil {
		return err
	}
	if err := roundTrip(ctx, h, mine, topic, "MTLS as "+e.clientPrincipal); err != nil {
		return err
	}
	return passNote{fmt.Sprintf("%s (subject %s) wrote and read a topic only it may; another subject: %s",
		e.clientPrincipal, e.clientSubject, oneLine(denied.Error(), 120))}
}

// refusalDeadline bounds one refused login: the client's error must come
// well before the feature's timeout, else the refusal is a hang.
const refusalDeadline = 20 * time.Second

// featRefused tries each connection conns gives; each must fail with the
// client's error for a refused login (for a missing client certificate: a
// TLS error naming it), within refusalDeadline. The errors go in the
// detail.
func featRefused(conns func(*secEnv) []security) func(ctx context.Context, h *harness, fam family) error {
	return func(ctx context.Context, h *harness, fam family) error {
		sf, ok := fam.(securedFamily)
		if !ok {
			return unsupported("%s has no secured connection in this suite", fam.name())
		}
		var seen, skipped []string
		for _, s := range conns(h.sec) {
			what := s.mechanism
			if what == "" {
				what = "TLS without a client certificate"
			}
			sfam, err := sf.withSecurity(s)
			var ue unsupportedError
			if errors.As(err, &ue) {
				skipped = append(skipped, fmt.Sprintf("%s: %s", what, ue.why))
				continue
			}
			if err != nil {
				return err
			}
			lctx, cancel := context.WithTimeout(ctx, refusalDeadline)
			start := time.Now()
			err = sfam.login(lctx)
			cancel()
			took := time.Since(start).Round(time.Millisecond)
			switch {
			case err == nil:
				return fmt.Errorf("%s: the login succeeded, want it refused", what)
			case s.mechanism == "" && !certificateRefused(err):
				return fmt.Errorf("%s: want a TLS error for the missing certificate, got after %v: %v", what, took, err)
			case s.mechanism != "" && !sfam.authFailed(err):
				return fmt.Errorf("%s: want the client's authentication error, got after %v: %v", what, took, err)
			}
			seen = append(seen, fmt.Sprintf("%s: %v (%v)", what, oneLine(err.Error(), 160), took))
		}
		if len(seen) == 0 {
			return unsupported("%s", strings.Join(skipped, "; "))
		}
		note := strings.Join(seen, "; ")
		if len(skipped) > 0 {
			note += "; not tried: " + strings.Join(skipped, "; ")
		}
		return passNote{note}
	}
}

// certificateRefused recognizes the TLS alert a server sends when it
// requires a client certificate and got none: "certificate required" in
// TLS 1.3, "bad certificate" or "handshake failure" in TLS 1.2, as Go's
// and OpenSSL's errors spell them.
func certificateRefused(err error) bool {
	s := strings.ToLower(err.Error())
	for _, m := range []string{"certificate required", "bad certificate", "handshake failure"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func describe(s security) string {
	if s.mechanism == "" {
		return s.protocol
	}
	return s.protocol + " " + s.mechanism
}

// oneLine keeps the first n bytes of s on one line.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
