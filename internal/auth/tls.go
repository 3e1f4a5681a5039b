package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/internal/config"
)

// TLSSettings are the ssl.* configs of one listener, as Kafka names them.
// An empty string is an unset config. Passwords are held in clear; String
// hides them.
type TLSSettings struct {
	// Listener names the listener in messages; "" for a client's settings.
	Listener string

	// KeystoreType is ssl.keystore.type: JKS (Kafka's default, and what
	// empty means), PKCS12 or PEM. A JKS or PKCS12 file is read as what it
	// is, whichever of the two is configured, as Java's
	// keystore.type.compat does.
	KeystoreType string
	// KeystoreLocation is ssl.keystore.location: for PEM, one file holding
	// the private key and its certificate chain, leaf first.
	KeystoreLocation string
	// KeystorePassword is ssl.keystore.password, required for JKS and
	// PKCS12 and refused for PEM, as in Kafka.
	KeystorePassword string
	// KeyPassword is ssl.key.password: the JKS key's password (the store's
	// when unset), or the password of an encrypted PKCS#8 PEM key. Unlike
	// Kafka, a PEM key may be unencrypted and then needs none. It is
	// refused, as in Kafka, where the store has no use for it: for an
	// unencrypted PEM key, or a PKCS12 store unless it is the store's.
	KeyPassword string
	// KeystoreCertificateChain and KeystoreKey are the inline PEM
	// ssl.keystore.certificate.chain and ssl.keystore.key, for type PEM.
	KeystoreCertificateChain string
	KeystoreKey              string

	// TruststoreType (JKS when empty), TruststoreLocation,
	// TruststorePassword and TruststoreCertificates are the
	// ssl.truststore.* configs: the CA certificates that client
	// certificates (on a listener) or server certificates (on a client)
	// must chain to. A JKS trust store without a password is read without
	// its integrity check, as in Java; a PKCS12 one only if it was written
	// without a password.
	TruststoreType         string
	TruststoreLocation     string
	TruststorePassword     string
	TruststoreCertificates string

	// ClientAuth is ssl.client.auth: none, requested or required.
	ClientAuth string
	// EnabledProtocols is ssl.enabled.protocols: TLSv1.2 and TLSv1.3 (both
	// when empty). TLSv1, TLSv1.1 and SSL are refused as insecure.
	EnabledProtocols []string
	// CipherSuites is ssl.cipher.suites, in Java's names, which are the
	// IANA names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256); empty leaves Go's
	// defaults. Suites Go holds insecure are refused. The TLS 1.3 suites
	// (TLS_AES_128_GCM_SHA256, ...) are accepted, but Go does not let them
	// be chosen: a TLS 1.3 connection may use any of the three. A list with
	// no TLS 1.3 suite turns TLS 1.3 off and one with only TLS 1.3 suites
	// turns TLS 1.2 off, which is what Java does with such a list.
	CipherSuites []string
	// EndpointIdentificationAlgorithm is
	// ssl.endpoint.identification.algorithm, for the client side: https
	// checks the server's host name, empty checks only its chain.
	EndpointIdentificationAlgorithm string
	// PrincipalMappingRules is ssl.principal.mapping.rules; empty means
	// DEFAULT.
	PrincipalMappingRules string
	// AllowDNChanges and AllowSANChanges are ssl.allow.dn.changes and
	// ssl.allow.san.changes: whether a reloaded key store may change its
	// certificates' subject, or drop subject alternative names. Kafka
	// refuses both by default, so that a reload cannot silently change who
	// the broker is.
	AllowDNChanges  bool
	AllowSANChanges bool
}

// String shows the settings with every password and inline key hidden, so
// that settings printed by mistake leak nothing.
func (s TLSSettings) String() string {
	hide := func(v string) string {
		if v == "" {
			return ""
		}
		return "[hidden]"
	}
	return fmt.Sprintf("listener=%s keystore=%s:%s keystore.password=%s key.password=%s keystore.key=%s "+
		"truststore=%s:%s truststore.password=%s truststore.certificates=%s client.auth=%s protocols=%v "+
		"cipher.suites=%v endpoint.identification.algorithm=%q principal.mapping.rules=%q allow.dn.changes=%t allow.san.changes=%t",
		s.Listener, s.KeystoreType, s.KeystoreLocation, hide(s.KeystorePassword), hide(s.KeyPassword), hide(s.KeystoreKey),
		s.TruststoreType, s.TruststoreLocation, hide(s.TruststorePassword), hide(s.TruststoreCertificates), s.ClientAuth,
		s.EnabledProtocols, s.CipherSuites, s.EndpointIdentificationAlgorithm, s.PrincipalMappingRules, s.AllowDNChanges, s.AllowSANChanges)
}

// GoString is String, for %#v.
func (s TLSSettings) GoString() string { return s.String() }

// TLSSettingsFor reads one listener's ssl.* configs: each
// listener.name.<listener>.ssl.* over the plain ssl.* config. With listener
// "" it reads the plain configs.
//
// ssl.principal.mapping.rules, ssl.allow.dn.changes and
// ssl.allow.san.changes are read only when the config catalog has them
// (it does not yet); otherwise they keep Kafka's defaults (DEFAULT, false,
// false), and a caller may set the fields itself.
func TLSSettingsFor(v config.Values, listener string) TLSSettings {
	name := func(c string) string { return listenerConfig(listener, c) }
	return TLSSettings{
		Listener:                        listener,
		KeystoreType:                    v.String(name("ssl.keystore.type")),
		KeystoreLocation:                v.String(name("ssl.keystore.location")),
		KeystorePassword:                v.String(name("ssl.keystore.password")),
		KeyPassword:                     v.String(name("ssl.key.password")),
		KeystoreCertificateChain:        v.String(name("ssl.keystore.certificate.chain")),
		KeystoreKey:                     v.String(name("ssl.keystore.key")),
		TruststoreType:                  v.String(name("ssl.truststore.type")),
		TruststoreLocation:              v.String(name("ssl.truststore.location")),
		TruststorePassword:              v.String(name("ssl.truststore.password")),
		TruststoreCertificates:          v.String(name("ssl.truststore.certificates")),
		ClientAuth:                      v.String(name("ssl.client.auth")),
		EnabledProtocols:                v.List(name("ssl.enabled.protocols")),
		CipherSuites:                    v.List(name("ssl.cipher.suites")),
		EndpointIdentificationAlgorithm: v.String(name("ssl.endpoint.identification.algorithm")),
		PrincipalMappingRules:           optionalString(v, listener, "ssl.principal.mapping.rules", DefaultPrincipalMappingRules),
		AllowDNChanges:                  optionalBool(v, listener, "ssl.allow.dn.changes"),
		AllowSANChanges:                 optionalBool(v, listener, "ssl.allow.san.changes"),
	}
}

func listenerConfig(listener, name string) string {
	if listener == "" {
		return name
	}
	return "listener.name." + strings.ToLower(listener) + "." + name
}

// optionalEntry finds a config the catalog may not have yet, and the name
// to read it by.
func optionalEntry(v config.Values, listener, name string) (*config.Entry, string, bool) {
	e, ok := v.Catalog().Lookup(name)
	if !ok {
		return nil, "", false
	}
	if e.PerListener {
		name = listenerConfig(listener, name)
	}
	return e, name, true
}

func optionalString(v config.Values, listener, name, def string) string {
	e, key, ok := optionalEntry(v, listener, name)
	switch {
	case !ok:
		return def
	case e.Type == config.TypeList:
		return strings.Join(v.List(key), ",")
	case e.Type == config.TypeString || e.Type == config.TypePassword:
		return v.String(key)
	}
	return def
}

func optionalBool(v config.Values, listener, name string) bool {
	e, key, ok := optionalEntry(v, listener, name)
	return ok && e.Type == config.TypeBoolean && v.Bool(key)
}

// tlsParams are the settings that shape a handshake, checked.
type tlsParams struct {
	minVersion, maxVersion uint16
	cipherSuites           []uint16 // nil: Go's defaults
	clientAuth             tls.ClientAuthType
}

func (s TLSSettings) params() (tlsParams, error) {
	var p tlsParams
	var err error
	if p.minVersion, p.maxVersion, err = parseProtocols(s.EnabledProtocols); err != nil {
		return p, err
	}
	if p.cipherSuites, err = parseCipherSuites(s.CipherSuites, &p.minVersion, &p.maxVersion); err != nil {
		return p, err
	}
	p.clientAuth, err = parseClientAuth(s.ClientAuth)
	return p, err
}

var protocolVersions = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

func parseProtocols(names []string) (lo, hi uint16, err error) {
	if len(names) == 0 {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		v, ok := protocolVersions[n]
		switch {
		case !ok && slices.Contains([]string{"TLSv1", "TLSv1.1", "SSLv3", "SSLv2Hello"}, n):
			return 0, 0, fmt.Errorf("ssl.enabled.protocols: %s is insecure and not supported; use TLSv1.2 and TLSv1.3", n)
		case !ok:
			return 0, 0, fmt.Errorf("ssl.enabled.protocols: %q is not a TLS protocol; want TLSv1.2 or TLSv1.3", n)
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi, nil
}

// parseCipherSuites maps Java's suite names to Go's TLS 1.2 suites, and
// narrows the protocol range to the versions the list has suites for.
func parseCipherSuites(names []string, lo, hi *uint16) ([]uint16, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var ids []uint16
	var has12, has13 bool
	for _, n := range names {
		c, err := cipherSuite(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		switch {
		case c == nil: // a signalling value, not a suite
		case slices.Contains(c.SupportedVersions, tls.VersionTLS13):
			has13 = true
		default:
			has12 = true
			ids = append(ids, c.ID)
		}
	}
	if !has13 {
		*hi = min(*hi, tls.VersionTLS12)
	}
	if !has12 {
		*lo = max(*lo, tls.VersionTLS13)
	}
	if *lo > *hi {
		return nil, fmt.Errorf("ssl.cipher.suites has no suite for the protocols of ssl.enabled.protocols")
	}
	return ids, nil
}

// cipherSuite finds a suite by its Java name; nil for
// TLS_EMPTY_RENEGOTIATION_INFO_SCSV, which Java lists and Go sends by itself.
func cipherSuite(name string) (*tls.CipherSuite, error) {
	if name == "TLS_EMPTY_RENEGOTIATION_INFO_SCSV" {
		return nil, nil
	}
	goName := name
	if rest, ok := strings.CutPrefix(name, "SSL_"); ok { // Java's old aliases
		goName = "TLS_" + rest
	}
	for _, c := range tls.CipherSuites() {
		if c.Name == goName {
			return c, nil
		}
	}
	for _, c := range tls.InsecureCipherSuites() {
		if c.Name == goName {
			return nil, fmt.Errorf("ssl.cipher.suites: %s is insecure (no forward secrecy, or a broken cipher or MAC) and not supported", name)
		}
	}
	return nil, fmt.Errorf("ssl.cipher.suites: %q is not a cipher suite Samsa supports; supported: %s", name, strings.Join(secureSuiteNames(), ", "))
}

func secureSuiteNames() []string {
	var names []string
	for _, c := range tls.CipherSuites() {
		names = append(names, c.Name)
	}
	return names
}

func parseClientAuth(s string) (tls.ClientAuthType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none":
		return tls.NoClientCert, nil
	case "requested":
		return tls.VerifyClientCertIfGiven, nil
	case "required":
		return tls.RequireAndVerifyClientCert, nil
	}
	return 0, fmt.Errorf("ssl.client.auth %q: want none, requested or required", s)
}

// ServerTLS is the TLS side of one secured listener: its certificates,
// trusted CAs and principal mapping, replaced as a whole by a reload while
// connections keep being accepted.
type ServerTLS struct {
	now func() time.Time
	// log says when changed store files were reloaded or refused;
	// slog.Default until SetLogger.
	log atomic.Pointer[slog.Logger]
	mu  struct {
		sync.Mutex
		// current is what new handshakes use. A connection keeps the
		// config it was accepted with.
		current *serverState
		// checked is when the store files were last looked at, so that a
		// handshake looks at most once a second.
		checked time.Time
		// tried is the files' stamps at the last load, successful or not:
		// a failed load is tried again only once the files change again.
		tried []fileStamp
		// reloadErr is the error of the last automatic reload.
		reloadErr error
	}
}

// serverState is one loaded set of stores and settings. It never changes.
type serverState struct {
	settings TLSSettings
	config   *tls.Config
	mapper   PrincipalMapper
	leaves   []*x509.Certificate
	trusted  bool // a trust store is configured
}

// fileStamp is how a store file looked: a changed modification time or size
// means it was rewritten.
type fileStamp struct {
	path    string
	modTime int64 // Unix nanoseconds
	size    int64
}

// NewServerTLS loads a listener's stores. now is the clock that paces the
// automatic reload of changed store files.
func NewServerTLS(s TLSSettings, now func() time.Time) (*ServerTLS, error) {
	t := &ServerTLS{now: now}
	stamps := stampFiles(s)
	st, err := newServerState(s)
	if err != nil {
		return nil, err
	}
	t.mu.current, t.mu.tried, t.mu.checked = st, stamps, now()
	return t, nil
}

func newServerState(s TLSSettings) (*serverState, error) {
	st, err := loadServerState(s)
	if err != nil && s.Listener != "" {
		return nil, fmt.Errorf("auth: listener %s: %w", s.Listener, err)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return st, nil
}

func loadServerState(s TLSSettings) (*serverState, error) {
	p, err := s.params()
	if err != nil {
		return nil, err
	}
	mapper, err := parseMappingRules(s.PrincipalMappingRules)
	if err != nil {
		return nil, err
	}
	certs, err := loadKeyStore(s)
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, errors.New("a TLS listener needs a key store: set ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain")
	}
	trust, trusted, err := loadTrustStore(s)
	if err != nil {
		return nil, err
	}
	if err := checkClientAuthTrust(p.clientAuth, s.ClientAuth, trust, trusted); err != nil {
		return nil, err
	}
	st := &serverState{settings: s, mapper: mapper, trusted: trusted, config: &tls.Config{
		Certificates: certs,
		ClientAuth:   p.clientAuth,
		ClientCAs:    certPool(trust),
		MinVersion:   p.minVersion,
		MaxVersion:   p.maxVersion,
		CipherSuites: p.cipherSuites,
		// A resumed session skips the client certificate check, which
		// would let a session begun before a reload outlive a CA removed
		// from the trust store. Kafka's connections are long-lived, so a
		// full handshake on reconnect costs little.
		SessionTicketsDisabled: true,
	}}
	for _, c := range certs {
		st.leaves = append(st.leaves, c.Leaf)
	}
	return st, nil
}

func parseMappingRules(rules string) (PrincipalMapper, error) {
	if strings.TrimSpace(rules) == "" {
		return PrincipalMapper{}, nil
	}
	return ParsePrincipalMappingRules(rules)
}

// checkClientAuthTrust refuses client authentication without CAs to check
// the certificates against. Java would fall back to its default cacerts,
// letting any certificate from a public CA in as User:<its subject>.
func checkClientAuthTrust(auth tls.ClientAuthType, setting string, trust []*x509.Certificate, trusted bool) error {
	switch {
	case auth == tls.NoClientCert:
		return nil
	case !trusted:
		return fmt.Errorf("ssl.client.auth=%s needs a trust store: set ssl.truststore.location or ssl.truststore.certificates to the CAs of the client certificates", setting)
	case len(trust) == 0:
		return fmt.Errorf("ssl.client.auth=%s and the trust store holds no certificate: no client certificate could be verified", setting)
	}
	return nil
}

func certPool(certs []*x509.Certificate) *x509.CertPool {
	if len(certs) == 0 {
		return nil
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool
}

// Config is the configuration to accept the listener's connections with. It
// stays valid across reloads: each handshake gets the stores current at that
// moment, and looks for changed store files first.
func (t *ServerTLS) Config() *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		GetConfigForClient: t.configForClient,
	}
}

// configForClient serves the current stores. A handshake that finds the
// files changed loads them holding the lock, so the handshakes arriving
// meanwhile wait for that one load (milliseconds) and then get its result;
// the package starts no goroutine to load in the background.
func (t *ServerTLS) configForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reloadChangedLocked()
	return t.mu.current.config, nil
}

// reloadChangedLocked reloads the stores when their files changed. Kafka
// reloads only on an AlterConfigs; certificates renewed on disk by a tool
// such as cert-manager then need nobody to act.
func (t *ServerTLS) reloadChangedLocked() {
	now := t.now()
	if now.Sub(t.mu.checked) < time.Second {
		return
	}
	t.mu.checked = now
	s := t.mu.current.settings
	if slices.Equal(stampFiles(s), t.mu.tried) {
		return
	}
	t.mu.reloadErr = t.loadLocked(s)
	log := slog.Default()
	if l := t.log.Load(); l != nil {
		log = l
	}
	log = log.With("component", "auth", "listener", s.Listener)
	if t.mu.reloadErr != nil {
		log.Warn("store files changed and do not load; new connections keep the previous certificates", "err", t.mu.reloadErr)
		return
	}
	log.Info("store files changed; new connections use the reloaded certificates")
}

// SetLogger sends the reload lines to l (the broker's logger).
func (t *ServerTLS) SetLogger(l *slog.Logger) { t.log.Store(l) }

// Reload reads the stores again, as Kafka does when AlterConfigs sets a
// listener's ssl.keystore.location, even to the same path. If they fail to
// load, the previous ones stay in use and the error says why.
func (t *ServerTLS) Reload() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.loadLocked(t.mu.current.settings)
}

// Update replaces the settings, as AlterConfigs of a listener's ssl.*
// configs does, and loads the stores they name. On an error the previous
// settings and stores stay in use.
func (t *ServerTLS) Update(s TLSSettings) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.loadLocked(s)
}

// ReloadError is the error of the last automatic reload of changed store
// files, nil if it succeeded or there was none.
func (t *ServerTLS) ReloadError() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.reloadErr
}

func (t *ServerTLS) loadLocked(s TLSSettings) error {
	// Stamped before reading: a file rewritten while it is read shows as
	// changed at the next look.
	stamps := stampFiles(s)
	next, err := newServerState(s)
	if err == nil {
		err = t.mu.current.compatible(next)
	}
	t.mu.tried = stamps
	if err != nil {
		return err
	}
	t.mu.current = next
	return nil
}

// compatible applies Kafka's checks on a reloaded key store (SslFactory's
// CertificateEntries): the same number of certificates, each with the same
// subject and at least the same alternative names unless allowed; and no
// trust store appearing on a listener that had none.
func (st *serverState) compatible(next *serverState) error {
	if !st.trusted && next.trusted {
		return errors.New("auth: cannot add a trust store to a listener that was started without one")
	}
	if len(st.leaves) != len(next.leaves) {
		return fmt.Errorf("auth: the key store held %d certificates and now holds %d", len(st.leaves), len(next.leaves))
	}
	for i, old := range st.leaves {
		if err := compatibleCertificate(old, next.leaves[i], next.settings); err != nil {
			return fmt.Errorf("auth: reloaded key store: %w", err)
		}
	}
	return nil
}

func compatibleCertificate(old, next *x509.Certificate, s TLSSettings) error {
	oldDN, _ := subjectDN(old)
	nextDN, _ := subjectDN(next)
	if !s.AllowDNChanges && !strings.EqualFold(oldDN, nextDN) {
		return fmt.Errorf("the certificate's subject changed from %s to %s (ssl.allow.dn.changes is false)", oldDN, nextDN)
	}
	if s.AllowSANChanges {
		return nil
	}
	have := alternativeNames(next)
	for _, n := range alternativeNames(old) {
		if !slices.Contains(have, n) {
			return fmt.Errorf("the certificate lost the subject alternative name %s (ssl.allow.san.changes is false)", n)
		}
	}
	return nil
}

func alternativeNames(c *x509.Certificate) []string {
	names := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		names = append(names, "IP:"+ip.String())
	}
	for _, e := range c.EmailAddresses {
		names = append(names, "email:"+e)
	}
	for _, u := range c.URIs {
		names = append(names, "URI:"+u.String())
	}
	return names
}

// stampFiles looks at the store files; a missing file has a zero stamp.
func stampFiles(s TLSSettings) []fileStamp {
	var stamps []fileStamp
	for _, path := range []string{s.KeystoreLocation, s.TruststoreLocation} {
		if path == "" {
			continue
		}
		st := fileStamp{path: path}
		if fi, err := os.Stat(path); err == nil {
			st.modTime, st.size = fi.ModTime().UnixNano(), fi.Size()
		}
		stamps = append(stamps, st)
	}
	return stamps
}

// Principal is who a connection authenticated as: ANONYMOUS without a
// client certificate, else User:<the certificate's subject as Java prints
// it, passed through ssl.principal.mapping.rules>. A subject no rule maps is
// a failed authentication (IsAuthError), as in Kafka.
func (t *ServerTLS) Principal(cs tls.ConnectionState) (Principal, error) {
	if len(cs.PeerCertificates) == 0 {
		return Anonymous, nil
	}
	dn, err := subjectDN(cs.PeerCertificates[0])
	if err != nil {
		return Principal{}, Failed("client certificate: %v", err)
	}
	t.mu.Lock()
	mapper := t.mu.current.mapper
	t.mu.Unlock()
	name, err := mapper.Map(dn)
	if err != nil {
		return Principal{}, err
	}
	return User(name), nil
}

// NewClientTLS is the configuration of a connection to another broker:
// the trust store as the CAs to verify the server against (the system's
// roots without one, as Java's cacerts), the key store's certificate as the
// client certificate when one is configured, and the server's host name
// checked unless ssl.endpoint.identification.algorithm is empty.
func NewClientTLS(s TLSSettings, serverName string) (*tls.Config, error) {
	cfg, err := newClientTLS(s, serverName)
	if err != nil {
		return nil, fmt.Errorf("auth: client TLS: %w", err)
	}
	return cfg, nil
}

func newClientTLS(s TLSSettings, serverName string) (*tls.Config, error) {
	p, err := s.params()
	if err != nil {
		return nil, err
	}
	certs, err := loadKeyStore(s)
	if err != nil {
		return nil, err
	}
	trust, trusted, err := loadTrustStore(s)
	if err != nil {
		return nil, err
	}
	if trusted && len(trust) == 0 {
		return nil, errors.New("the trust store holds no certificate: no server certificate could be verified")
	}
	cfg := &tls.Config{
		Certificates: certs,
		RootCAs:      certPool(trust),
		ServerName:   serverName,
		MinVersion:   p.minVersion,
		MaxVersion:   p.maxVersion,
		CipherSuites: p.cipherSuites,
	}
	switch strings.ToLower(strings.TrimSpace(s.EndpointIdentificationAlgorithm)) {
	case "https":
		// An empty serverName is set per connection by the dialer: kgo
		// sets each broker's host, dialRaft the peer's.
	case "":
		// Go verifies the chain and the name together; skip both and
		// verify the chain alone.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyChain(cfg.RootCAs)
	default:
		return nil, fmt.Errorf("ssl.endpoint.identification.algorithm %q: want https, or empty to skip the host name check", s.EndpointIdentificationAlgorithm)
	}
	return cfg, nil
}

func verifyChain(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("auth: the server sent no certificate")
		}
		opts := x509.VerifyOptions{
			Roots:         roots,
			Intermediates: x509.NewCertPool(),
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}
