package broker

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
)

// listenerSecurity is what a listener's security protocol asks of its
// connections: a TLS handshake (SSL, SASL_SSL) and a SASL exchange
// (SASL_PLAINTEXT, SASL_SSL). Built once per listener at New; the TLS
// certificates inside reload without a restart.
type listenerSecurity struct {
	protocol string
	tls      *auth.ServerTLS
	// tlsSettings are the settings tls was last loaded from; applyImage
	// compares them with the dynamic config (reconfigureTLS).
	tlsSettings auth.TLSSettings
	// mechanisms enabled on the listener (sasl.enabled.mechanisms), by
	// name; nil without SASL.
	mechanisms map[string]auth.Mechanism
	enabled    []string
	// reauth is connections.max.reauth.ms per mechanism; 0: sessions do
	// not expire but with their credential.
	reauth           map[string]time.Duration
	saslMaxReceive   int32
	failedAuthDelay  time.Duration
	handshakeTimeout time.Duration
	// refreshers keep OAUTHBEARER's key sets current (started by Start).
	refreshers []*jwksRefresher
}

func (s *listenerSecurity) sasl() bool { return s != nil && s.mechanisms != nil }

// newListenerSecurity reads a listener's settings, with Kafka's
// listener.name.<listener>. prefix winning over the plain names.
func newListenerSecurity(v config.Values, l Listener, deps securityDeps) (*listenerSecurity, error) {
	s := &listenerSecurity{protocol: l.SecurityProtocol, handshakeTimeout: 10 * time.Second}
	prefix := "listener.name." + strings.ToLower(l.Name) + "."
	s.failedAuthDelay = time.Duration(v.Int("connection.failed.authentication.delay.ms")) * time.Millisecond
	switch l.SecurityProtocol {
	case "PLAINTEXT":
		return nil, nil
	case "SSL", "SASL_SSL":
		s.tlsSettings = auth.TLSSettingsFor(v, l.Name)
		t, err := auth.NewServerTLS(s.tlsSettings, time.Now)
		if err != nil {
			return nil, fmt.Errorf("broker: listener %s: %w", l, err)
		}
		t.SetLogger(deps.log)
		s.tls = t
	case "SASL_PLAINTEXT":
	default:
		return nil, fmt.Errorf("broker: listener %s: unknown security protocol %s", l, l.SecurityProtocol)
	}
	if !strings.HasPrefix(l.SecurityProtocol, "SASL_") {
		return s, nil
	}
	s.saslMaxReceive = v.Int("sasl.server.max.receive.size")
	s.enabled = v.List(prefix + "sasl.enabled.mechanisms")
	if len(s.enabled) == 0 {
		return nil, fmt.Errorf("broker: listener %s: sasl.enabled.mechanisms is empty", l)
	}
	s.mechanisms = map[string]auth.Mechanism{}
	s.reauth = map[string]time.Duration{}
	for _, name := range s.enabled {
		m, r, err := newMechanism(v, l, name, deps)
		if err != nil {
			return nil, fmt.Errorf("broker: listener %s: %w", l, err)
		}
		s.mechanisms[name] = m
		if r != nil {
			s.refreshers = append(s.refreshers, r)
		}
		key := prefix + strings.ToLower(name) + ".connections.max.reauth.ms"
		if !v.IsSet(key) {
			key = prefix + "connections.max.reauth.ms"
		}
		s.reauth[name] = time.Duration(v.Long(key)) * time.Millisecond
	}
	return s, nil
}

// initSecurity builds every secured listener's TLS and SASL. A listener
// whose settings do not hold (a missing key store, a mechanism without
// users) stops the broker from starting, with the reason.
func (b *Broker) initSecurity() error {
	b.authLog = newRateLimitedLog(b.log, time.Second)
	b.security = map[string]*listenerSecurity{}
	deps := securityDeps{scram: b, now: b.cfg.Clock.Now, log: b.cfg.Logger}
	if b.delegationTokenSecret() != "" {
		deps.tokens = newTokenLogins(b)
	}
	validatesJWTs := false
	for _, l := range b.cfg.Listeners {
		s, err := newListenerSecurity(b.cfg.Values, l, deps)
		if err != nil {
			return err
		}
		if s != nil {
			b.security[l.Name] = s
			validatesJWTs = validatesJWTs || len(s.refreshers) > 0
		}
	}
	if !validatesJWTs {
		for _, name := range append([]string{"sasl.oauthbearer.jwks.endpoint.url"}, jwtSettings...) {
			if b.cfg.Values.IsSet(name) {
				return fmt.Errorf("%s is set, but no listener validates OAUTHBEARER JWTs against a key set "+
					"(OAUTHBEARER in sasl.enabled.mechanisms with sasl.oauthbearer.jwks.endpoint.url): it would have no effect", name)
			}
		}
	}
	return b.initPeerSecurity()
}

// jwtSettings are the OAUTHBEARER settings that only JWT validation
// against a key set reads; the unsecured validator takes its options from
// the JAAS config.
var jwtSettings = []string{
	"sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
	"sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.clock.skew.seconds",
	"sasl.oauthbearer.jwks.endpoint.refresh.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
}

// initPeerSecurity sets up how this node reaches the others: the
// inter-broker listener (replica fetches, transaction markers, Raft to a
// broker-only node) and the controller listener (registration, heartbeats,
// forwarded writes, Raft between voters), each as its security protocol
// asks. A controller-only node reaches brokers on inter.broker.listener.name
// when set, else in plaintext.
func (b *Broker) initPeerSecurity() error {
	c := &b.cfg
	if !c.quorum.cluster() {
		return nil
	}
	inter := strings.ToUpper(c.Values.String("inter.broker.listener.name"))
	if inter == "" {
		for _, l := range c.Listeners {
			if !c.quorum.isControllerListener(l.Name) {
				inter = l.Name
				break
			}
		}
	}
	var err error
	if inter != "" {
		if b.peers.interBroker, err = newClientSecurity(c.Values, inter, "sasl.mechanism.inter.broker.protocol"); err != nil {
			return err
		}
	}
	if len(c.quorum.listeners) > 0 {
		if b.peers.controller, err = newClientSecurity(c.Values, c.quorum.listeners[0], "sasl.mechanism.controller.protocol"); err != nil {
			return err
		}
	}
	return nil
}

// dialRaft opens Raft's connection to another node: a voter on its
// controller listener, a broker-only node on its inter-broker listener.
func (b *Broker) dialRaft(addr string, timeout time.Duration) (net.Conn, error) {
	if b.isVoterAddr(addr) {
		return b.peers.controller.dialRaft(addr, timeout)
	}
	return b.peers.interBroker.dialRaft(addr, timeout)
}

func (b *Broker) isVoterAddr(addr string) bool {
	q := b.cfg.quorum
	for _, v := range append(append(slices.Clone(q.voters), q.initialVoters...), b.ctrl.Voters()...) {
		if v.Addr == addr {
			return true
		}
	}
	return slices.Contains(q.bootstrap, addr)
}

// securityDeps is what mechanisms look credentials up in: the broker's
// current metadata image.
type securityDeps struct {
	scram auth.ScramCredentials
	// tokens finds delegation tokens for SCRAM's tokenauth=true logins;
	// nil without delegation.token.secret.key, which refuses them.
	tokens auth.DelegationTokens
	now    func() time.Time
	log    *slog.Logger
}

// secure runs the TLS handshake of a connection on an SSL or SASL_SSL
// listener, bounded in time so a silent client cannot hold the slot, and
// takes the principal of its client certificate; it prepares the SASL
// exchange on SASL listeners.
func (c *conn) secure(ctx context.Context) error {
	c.principal = auth.Anonymous
	if c.sec == nil {
		return nil
	}
	if c.sec.tls != nil {
		tc := tls.Server(c.nc, c.sec.tls.Config())
		hctx, cancel := context.WithTimeout(ctx, c.sec.handshakeTimeout)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			c.b.metrics.listener(c.listener).authFailures.Add(1)
			c.b.authLog.log(c.b.cfg.Clock.Now(), "failed TLS handshake", "listener", c.listener, "remote", c.remote(), "err", err)
			return fmt.Errorf("TLS handshake: %w", err)
		}
		c.nc = tc
		if !c.sec.sasl() {
			p, err := c.sec.tls.Principal(tc.ConnectionState())
			if err != nil {
				return fmt.Errorf("principal of the client certificate: %w", err)
			}
			c.principal = p
			// On SSL the handshake is the authentication; on SASL_SSL the
			// SASL exchange that follows is counted instead.
			c.b.metrics.listener(c.listener).authSuccesses.Add(1)
		}
	}
	if c.sec.sasl() {
		c.sasl = &saslConn{sec: c.sec}
	}
	return nil
}

// rateLimitedLog writes at most one line per interval for a kind of event
// a client can repeat at will (failed logins, denials), and says in the
// next line how many it held back.
type rateLimitedLog struct {
	out      *slog.Logger
	interval time.Duration
	mu       struct {
		sync.Mutex
		last       map[string]time.Time
		suppressed map[string]int64
	}
}

func newRateLimitedLog(l *slog.Logger, interval time.Duration) *rateLimitedLog {
	r := &rateLimitedLog{out: l, interval: interval}
	r.mu.last, r.mu.suppressed = map[string]time.Time{}, map[string]int64{}
	return r
}

// log writes msg with attrs unless a line of the same msg went out less
// than interval ago.
func (r *rateLimitedLog) log(now time.Time, msg string, attrs ...any) {
	r.mu.Lock()
	if last, ok := r.mu.last[msg]; ok && now.Sub(last) < r.interval {
		r.mu.suppressed[msg]++
		r.mu.Unlock()
		return
	}
	n := r.mu.suppressed[msg]
	r.mu.last[msg], r.mu.suppressed[msg] = now, 0
	r.mu.Unlock()
	if n > 0 {
		attrs = append(attrs, "suppressed_since_last", n)
	}
	r.out.Warn(msg, attrs...)
}

// newMechanism builds one SASL mechanism of a listener from Kafka's
// listener.name.<listener>.<mechanism>. settings (falling back to the plain
// names).
func newMechanism(v config.Values, l Listener, name string, deps securityDeps) (auth.Mechanism, *jwksRefresher, error) {
	prefix := "listener.name." + strings.ToLower(l.Name) + "." + strings.ToLower(name) + "."
	jaas := func() (auth.JAASConfig, error) {
		raw := v.String(prefix + "sasl.jaas.config")
		if raw == "" {
			return auth.JAASConfig{}, fmt.Errorf("%s needs %ssasl.jaas.config", name, prefix)
		}
		j, err := auth.ParseJAAS(raw)
		if err != nil {
			return auth.JAASConfig{}, fmt.Errorf("%ssasl.jaas.config: %w", prefix, err)
		}
		return j, nil
	}
	switch name {
	case auth.MechanismPlain:
		j, err := jaas()
		if err != nil {
			return nil, nil, err
		}
		users, err := auth.PlainUsersFromJAAS(j)
		if err != nil {
			return nil, nil, fmt.Errorf("%ssasl.jaas.config: %w", prefix, err)
		}
		return auth.NewPlain(users), nil, nil
	case auth.MechanismScramSHA256, auth.MechanismScramSHA512:
		var opts []auth.ScramOption
		if deps.tokens != nil {
			opts = append(opts, auth.WithDelegationTokens(deps.tokens))
		}
		m, err := auth.NewScram(name, deps.scram, opts...)
		return m, nil, err
	case auth.MechanismOAuthBearer:
		return newOAuthBearer(v, prefix, jaas, deps)
	case "GSSAPI":
		return nil, nil, fmt.Errorf("sasl.enabled.mechanisms: GSSAPI (Kerberos) is not supported; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER")
	}
	return nil, nil, fmt.Errorf("sasl.enabled.mechanisms: unknown mechanism %s (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", name)
}

// newOAuthBearer is OAUTHBEARER with Kafka's two validators: JWTs signed
// by a key set (sasl.oauthbearer.jwks.endpoint.url) or, by default, the
// unsecured tokens Kafka accepts for development, configured in the JAAS
// options.
func newOAuthBearer(v config.Values, prefix string, jaas func() (auth.JAASConfig, error), deps securityDeps) (auth.Mechanism, *jwksRefresher, error) {
	cfg := auth.OAuthConfig{Now: deps.now}
	url := v.String(prefix + "sasl.oauthbearer.jwks.endpoint.url")
	if url == "" {
		if v.String(prefix+"sasl.server.callback.handler.class") == "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler" {
			return nil, nil, fmt.Errorf("OAUTHBEARER: %ssasl.server.callback.handler.class validates JWTs but sasl.oauthbearer.jwks.endpoint.url is not set", prefix)
		}
		for _, name := range jwtSettings {
			if v.IsSet(prefix + name) {
				return nil, nil, fmt.Errorf("OAUTHBEARER: %s%s applies to JWTs validated against a key set, and %ssasl.oauthbearer.jwks.endpoint.url "+
					"is not set; the unsecured validator takes its options from sasl.jaas.config (unsecuredValidatorRequiredScope, "+
					"unsecuredValidatorPrincipalClaimName, unsecuredValidatorScopeClaimName, unsecuredValidatorAllowableClockSkewMs)", prefix, name, prefix)
			}
		}
		j, err := jaas()
		if err != nil {
			return nil, nil, err
		}
		if cfg.Unsecured, err = auth.UnsecuredOptionsFromJAAS(j); err != nil {
			return nil, nil, err
		}
		m, err := auth.NewOAuthBearer(cfg)
		return m, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jwks, err := auth.LoadJWKS(ctx, url, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("OAUTHBEARER: %w", err)
	}
	cfg.JWKS = jwks
	cfg.ExpectedAudience = v.List(prefix + "sasl.oauthbearer.expected.audience")
	cfg.ExpectedIssuer = v.String(prefix + "sasl.oauthbearer.expected.issuer")
	cfg.SubClaimName = v.String(prefix + "sasl.oauthbearer.sub.claim.name")
	cfg.ScopeClaimName = v.String(prefix + "sasl.oauthbearer.scope.claim.name")
	if cfg.ClockSkew = time.Duration(v.Int(prefix+"sasl.oauthbearer.clock.skew.seconds")) * time.Second; cfg.ClockSkew == 0 {
		cfg.ClockSkew = -1 // none, which OAuthConfig spells negative
	}
	r := &jwksRefresher{jwks: jwks, wake: make(chan struct{}, 1),
		every:      time.Duration(v.Long(prefix+"sasl.oauthbearer.jwks.endpoint.refresh.ms")) * time.Millisecond,
		backoff:    time.Duration(v.Long(prefix+"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms")) * time.Millisecond,
		backoffMax: time.Duration(v.Long(prefix+"sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms")) * time.Millisecond}
	cfg.OnUnknownKeyID = r.poke
	m, err := auth.NewOAuthBearer(cfg)
	if err != nil {
		return nil, nil, err
	}
	return m, r, nil
}

// jwksRefresher fetches an OAUTHBEARER key set again every refresh.ms, and
// soon after a token named a key the set lacks (a key rotation), as
// Kafka's refreshing key set does; a failed fetch keeps the old set and
// is retried with a growing backoff.
type jwksRefresher struct {
	jwks                       *auth.JWKS
	wake                       chan struct{}
	every, backoff, backoffMax time.Duration
}

// poke asks for an early fetch; it never blocks a login.
func (r *jwksRefresher) poke(string) {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *jwksRefresher) run(ctx context.Context, log *slog.Logger) {
	wait, failures := r.every, 0
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-r.wake:
			t.Stop()
			if !sleepCtx(ctx, r.backoff) { // let a burst of unknown keys settle
				return
			}
		case <-t.C:
		}
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := r.jwks.Refresh(fctx)
		cancel()
		if err == nil {
			wait, failures = r.every, 0
			continue
		}
		failures++
		wait = min(r.backoff<<min(failures, 20), r.backoffMax, r.every)
		log.Warn("OAUTHBEARER key set fetch failed; keeping the previous keys", "err", err, "retry_in", wait)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// startSecurity starts the listeners' background work: the key-set
// refreshes.
func (b *Broker) startSecurity() {
	for _, s := range b.security {
		for _, r := range s.refreshers {
			b.tasks.Go(func(ctx context.Context) { r.run(ctx, b.log) })
		}
	}
}

// ScramCredential finds a SCRAM user's salted keys in the current
// metadata image: the credentials AlterUserScramCredentials and
// `samsa storage format --add-scram` wrote to the metadata log.
func (b *Broker) ScramCredential(mechanism, user string) (auth.ScramCredential, bool) {
	img := b.meta.Load()
	if img == nil {
		return auth.ScramCredential{}, false
	}
	m := metadata.ScramSHA256
	if mechanism == auth.MechanismScramSHA512 {
		m = metadata.ScramSHA512
	}
	c, ok := img.ScramCredential(user, m)
	if !ok {
		return auth.ScramCredential{}, false
	}
	return auth.ScramCredential{Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations}, true
}

// reconfigureTLS applies a dynamic change of a listener's ssl.* configs
// (AlterConfigs of listener.name.<l>.ssl.keystore.location and the like, as
// Kafka reconfigures its listeners): new connections get the new stores.
// Stores that do not load keep the old ones, with the reason logged.
// Called by applyImage, one image at a time.
func (b *Broker) reconfigureTLS(v config.Values) {
	for _, l := range b.cfg.Listeners {
		s := b.security[l.Name]
		if s == nil || s.tls == nil {
			continue
		}
		next := auth.TLSSettingsFor(v, l.Name)
		if reflect.DeepEqual(next, s.tlsSettings) {
			continue
		}
		if err := s.tls.Update(next); err != nil {
			b.log.Error("dynamic TLS config not applied; the listener keeps its certificates", "listener", l.Name, "err", err)
		} else {
			b.log.Info("TLS reconfigured", "listener", l.Name)
		}
		s.tlsSettings = next
	}
}
