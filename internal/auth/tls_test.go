package auth

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/keystore"
	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
)

// testIdentity is a certificate and its key, as Go values, PEM and files.
type testIdentity struct {
	Cert     *x509.Certificate
	Key      crypto.Signer
	Chain    []*x509.Certificate // leaf first, without the root
	CertPEM  []byte              // the chain
	KeyPEM   []byte              // PKCS#8
	PEMFile  string              // key and chain in one file: a PEM key store
	CertFile string
	KeyFile  string
}

// testPKI is a CA with a broker (server) and a client certificate, written
// to files in a test's temporary directory.
type testPKI struct {
	Dir    string
	CA     *x509.Certificate
	CAKey  crypto.Signer
	CAPEM  []byte
	CAFile string
	Server testIdentity // CN=broker,OU=eng,O=Acme,C=US; localhost, 127.0.0.1
	Client testIdentity // CN=alice,OU=eng,O=Acme,C=US
	ca     *keystoretest.CA
}

// newTestPKI makes a CA and a broker and a client certificate it signs. The
// broker's certificate is valid for localhost and 127.0.0.1 and for both
// server and client authentication, as brokers use one for both sides.
func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	ca := keystoretest.NewCA(t)
	p := &testPKI{Dir: t.TempDir(), CA: ca.Cert, CAKey: ca.Key, CAPEM: ca.PEM, ca: ca}
	p.CAFile = writeTestFile(t, p.Dir, "ca.pem", p.CAPEM)
	p.Server = p.Issue(t, "broker", "broker")
	p.Client = p.Issue(t, "alice", "alice")
	return p
}

// Issue makes a certificate of CN=<cn>,OU=eng,O=Acme,C=US, written to
// files named after file.
func (p *testPKI) Issue(t testing.TB, file, cn string) testIdentity {
	t.Helper()
	return p.issue(t, file, keystoretest.Subject(cn), []string{"localhost"}, newTestKey(t))
}

func (p *testPKI) issue(t testing.TB, file string, subject pkix.Name, dnsNames []string, key crypto.Signer) testIdentity {
	t.Helper()
	signed := p.ca.Issue(t, subject, dnsNames, key)
	id := testIdentity{Cert: signed.Cert, Key: key, Chain: []*x509.Certificate{signed.Cert}, CertPEM: signed.CertPEM, KeyPEM: signed.KeyPEM}
	id.PEMFile = writeTestFile(t, p.Dir, file+".pem", append(append([]byte{}, id.KeyPEM...), id.CertPEM...))
	id.CertFile = writeTestFile(t, p.Dir, file+".crt", id.CertPEM)
	id.KeyFile = writeTestFile(t, p.Dir, file+".key", id.KeyPEM)
	return id
}

func newTestKey(t testing.TB) crypto.Signer { return keystoretest.NewKey(t) }

func pemEncode(typ string, der []byte) []byte { return keystoretest.PEM(typ, der) }

func writeTestFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serverSettings is a PEM listener with the PKI's broker certificate, which
// requires client certificates signed by the PKI's CA.
func (p *testPKI) serverSettings() TLSSettings {
	return TLSSettings{
		Listener:           "SSL",
		KeystoreType:       keystore.PEM,
		KeystoreLocation:   p.Server.PEMFile,
		TruststoreType:     keystore.PEM,
		TruststoreLocation: p.CAFile,
		ClientAuth:         "required",
	}
}

// clientSettings is a client presenting the PKI's client certificate.
func (p *testPKI) clientSettings() TLSSettings {
	return TLSSettings{
		KeystoreType:                    keystore.PEM,
		KeystoreLocation:                p.Client.PEMFile,
		TruststoreType:                  keystore.PEM,
		TruststoreLocation:              p.CAFile,
		EndpointIdentificationAlgorithm: "https",
	}
}

// handshakeResult is both ends of one connection.
type handshakeResult struct {
	server, client       tls.ConnectionState
	serverErr, clientErr error
	serverConn           *tls.Conn
	clientConn           *tls.Conn
}

// handshake runs keystoretest.RunHandshake: a client and a server over
// loopback, the connection left open until the test ends.
func handshake(t *testing.T, server, client *tls.Config) handshakeResult {
	t.Helper()
	h := keystoretest.RunHandshake(t, server, client)
	return handshakeResult{server: h.Server, client: h.Client, serverErr: h.ServerErr, clientErr: h.ClientErr,
		serverConn: h.ServerConn, clientConn: h.ClientConn}
}

func (r handshakeResult) ok() bool { return r.serverErr == nil && r.clientErr == nil }

func (r handshakeResult) String() string {
	return "server: " + errString(r.serverErr) + "; client: " + errString(r.clientErr)
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// servedSerial is the serial number of the certificate the server presented.
func (r handshakeResult) servedSerial() *big.Int {
	if len(r.client.PeerCertificates) == 0 {
		return nil
	}
	return r.client.PeerCertificates[0].SerialNumber
}

func newServer(t *testing.T, s TLSSettings, now func() time.Time) *ServerTLS {
	t.Helper()
	srv, err := NewServerTLS(s, now)
	if err != nil {
		t.Fatalf("NewServerTLS: %v", err)
	}
	return srv
}

func newClient(t *testing.T, s TLSSettings, serverName string) *tls.Config {
	t.Helper()
	c, err := NewClientTLS(s, serverName)
	if err != nil {
		t.Fatalf("NewClientTLS: %v", err)
	}
	return c
}

func TestTLSClientAuth(t *testing.T) {
	p := newTestPKI(t)
	other := newTestPKI(t) // a CA the server does not trust
	clientDN := "User:CN=alice,OU=eng,O=Acme,C=US"
	noCert := p.clientSettings()
	noCert.KeystoreLocation = ""
	untrusted := p.clientSettings()
	untrusted.KeystoreLocation = other.Client.PEMFile
	tests := []struct {
		clientAuth string
		client     TLSSettings
		want       string // the principal, or "fail"
	}{
		{"none", p.clientSettings(), "User:ANONYMOUS"},
		{"none", noCert, "User:ANONYMOUS"},
		{"requested", p.clientSettings(), clientDN},
		{"requested", noCert, "User:ANONYMOUS"},
		{"requested", untrusted, "fail"},
		{"required", p.clientSettings(), clientDN},
		{"required", noCert, "fail"},
		{"required", untrusted, "fail"},
	}
	for _, tt := range tests {
		name := tt.clientAuth + "/" + filepath.Base(tt.client.KeystoreLocation)
		if tt.client.KeystoreLocation == "" {
			name = tt.clientAuth + "/no certificate"
		}
		if tt.client.KeystoreLocation == other.Client.PEMFile {
			name = tt.clientAuth + "/untrusted certificate"
		}
		t.Run(name, func(t *testing.T) {
			s := p.serverSettings()
			s.ClientAuth = tt.clientAuth
			srv := newServer(t, s, time.Now)
			r := handshake(t, srv.Config(), newClient(t, tt.client, "localhost"))
			if tt.want == "fail" {
				if r.ok() {
					t.Fatal("handshake succeeded, want it refused")
				}
				return
			}
			if !r.ok() {
				t.Fatalf("handshake: %v", r)
			}
			got, err := srv.Principal(r.server)
			if err != nil || got.String() != tt.want {
				t.Fatalf("Principal = %v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestTLSPrincipalMapping(t *testing.T) {
	p := newTestPKI(t)
	tests := []struct {
		rules string
		want  string // "" for a failed authentication
	}{
		{"", "User:CN=alice,OU=eng,O=Acme,C=US"},
		{"DEFAULT", "User:CN=alice,OU=eng,O=Acme,C=US"},
		{"RULE:^CN=([^,]*),OU=eng,.*$/$1/U,DEFAULT", "User:ALICE"},
		{"RULE:^CN=([^,]*),OU=ops,.*$/$1/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rules, func(t *testing.T) {
			s := p.serverSettings()
			s.PrincipalMappingRules = tt.rules
			srv := newServer(t, s, time.Now)
			r := handshake(t, srv.Config(), newClient(t, p.clientSettings(), "localhost"))
			if !r.ok() {
				t.Fatalf("handshake: %v", r)
			}
			got, err := srv.Principal(r.server)
			if tt.want == "" {
				if !IsAuthError(err) {
					t.Fatalf("Principal = %v, %v; want an authentication error", got, err)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Fatalf("Principal = %v, %v; want %s", got, err, tt.want)
			}
		})
	}
	s := p.serverSettings()
	s.PrincipalMappingRules = "RULE:(a)\\1/x/"
	if _, err := NewServerTLS(s, time.Now); err == nil || !strings.Contains(err.Error(), "backreference") {
		t.Fatalf("NewServerTLS with a bad rule: %v", err)
	}
}

func TestTLSEnabledProtocols(t *testing.T) {
	p := newTestPKI(t)
	tests := []struct {
		server, client []string
		want           uint16 // 0: the handshake fails
	}{
		{nil, nil, tls.VersionTLS13},
		{[]string{"TLSv1.3"}, []string{"TLSv1.2"}, 0},
		{[]string{"TLSv1.2"}, []string{"TLSv1.3"}, 0},
		{[]string{"TLSv1.2"}, nil, tls.VersionTLS12},
		{[]string{" TLSv1.3 ", "TLSv1.2"}, []string{"TLSv1.2"}, tls.VersionTLS12},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.server, ",")+"/"+strings.Join(tt.client, ","), func(t *testing.T) {
			s, c := p.serverSettings(), p.clientSettings()
			s.EnabledProtocols, c.EnabledProtocols = tt.server, tt.client
			r := handshake(t, newServer(t, s, time.Now).Config(), newClient(t, c, "localhost"))
			switch {
			case tt.want == 0 && r.ok():
				t.Fatalf("handshake succeeded with version %x, want it refused", r.client.Version)
			case tt.want != 0 && !r.ok():
				t.Fatalf("handshake: %v", r)
			case tt.want != 0 && r.client.Version != tt.want:
				t.Fatalf("version %x, want %x", r.client.Version, tt.want)
			}
		})
	}
}

func TestTLSCipherSuites(t *testing.T) {
	p := newTestPKI(t)
	tests := []struct {
		suites      []string
		wantVersion uint16
		wantSuite   uint16
	}{
		{[]string{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		{[]string{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"}, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256},
		{[]string{"TLS_AES_128_GCM_SHA256"}, tls.VersionTLS13, 0},
		{[]string{"TLS_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, tls.VersionTLS13, 0},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.suites, ","), func(t *testing.T) {
			s := p.serverSettings()
			s.CipherSuites = tt.suites
			r := handshake(t, newServer(t, s, time.Now).Config(), newClient(t, p.clientSettings(), "localhost"))
			if !r.ok() {
				t.Fatalf("handshake: %v", r)
			}
			if r.client.Version != tt.wantVersion || (tt.wantSuite != 0 && r.client.CipherSuite != tt.wantSuite) {
				t.Fatalf("negotiated %x with %s, want %x with %s", r.client.Version, tls.CipherSuiteName(r.client.CipherSuite), tt.wantVersion, tls.CipherSuiteName(tt.wantSuite))
			}
		})
	}
}

func TestTLSSettingsErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(*TLSSettings)
		want   string
	}{
		{"TLSv1.1", func(s *TLSSettings) { s.EnabledProtocols = []string{"TLSv1.1", "TLSv1.2"} }, "ssl.enabled.protocols: TLSv1.1 is insecure"},
		{"TLSv1", func(s *TLSSettings) { s.EnabledProtocols = []string{"TLSv1"} }, "TLSv1 is insecure"},
		{"SSLv3", func(s *TLSSettings) { s.EnabledProtocols = []string{"SSLv3"} }, "SSLv3 is insecure"},
		{"unknown protocol", func(s *TLSSettings) { s.EnabledProtocols = []string{"TLSv9"} }, `"TLSv9" is not a TLS protocol`},
		{"unknown suite", func(s *TLSSettings) { s.CipherSuites = []string{"TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"} }, `"TLS_DHE_RSA_WITH_AES_128_GCM_SHA256" is not a cipher suite Samsa supports; supported: TLS_AES_128_GCM_SHA256`},
		{"insecure suite", func(s *TLSSettings) { s.CipherSuites = []string{"TLS_RSA_WITH_AES_128_GCM_SHA256"} }, "TLS_RSA_WITH_AES_128_GCM_SHA256 is insecure"},
		{"insecure Java alias", func(s *TLSSettings) { s.CipherSuites = []string{"SSL_RSA_WITH_3DES_EDE_CBC_SHA"} }, "SSL_RSA_WITH_3DES_EDE_CBC_SHA is insecure"},
		{"RC4", func(s *TLSSettings) { s.CipherSuites = []string{"TLS_ECDHE_RSA_WITH_RC4_128_SHA"} }, "is insecure"},
		{"TLS 1.3 suites for TLS 1.2", func(s *TLSSettings) {
			s.EnabledProtocols, s.CipherSuites = []string{"TLSv1.2"}, []string{"TLS_AES_128_GCM_SHA256"}
		}, "ssl.cipher.suites has no suite for the protocols of ssl.enabled.protocols"},
		{"client auth", func(s *TLSSettings) { s.ClientAuth = "always" }, `ssl.client.auth "always"`},
	}
	p := newTestPKI(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := p.serverSettings()
			tt.change(&s)
			_, err := NewServerTLS(s, time.Now)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "listener SSL") {
				t.Fatalf("NewServerTLS = %v, want an error naming listener SSL and containing %q", err, tt.want)
			}
		})
	}
}

func TestClientTLSHostName(t *testing.T) {
	p := newTestPKI(t)
	other := newTestPKI(t)
	tests := []struct {
		name       string
		algorithm  string
		serverName string
		trust      string
		want       bool
	}{
		{"https, right name", "https", "localhost", p.CAFile, true},
		{"https, IP address", "HTTPS", "127.0.0.1", p.CAFile, true},
		{"https, wrong name", "https", "kafka.example", p.CAFile, false},
		{"empty, wrong name", "", "kafka.example", p.CAFile, true},
		{"empty, no name", "", "", p.CAFile, true},
		{"empty, untrusted CA", "", "localhost", other.CAFile, false},
		{"https, untrusted CA", "https", "localhost", other.CAFile, false},
	}
	srv := newServer(t, p.serverSettings(), time.Now)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := p.clientSettings()
			c.EndpointIdentificationAlgorithm, c.TruststoreLocation = tt.algorithm, tt.trust
			r := handshake(t, srv.Config(), newClient(t, c, tt.serverName))
			if r.ok() != tt.want {
				t.Fatalf("handshake: %v; want success %v", r, tt.want)
			}
		})
	}
	c := p.clientSettings()
	for _, tt := range []struct {
		algorithm, serverName, want string
	}{
		{"dns", "localhost", `ssl.endpoint.identification.algorithm "dns"`},
	} {
		c.EndpointIdentificationAlgorithm = tt.algorithm
		if _, err := NewClientTLS(c, tt.serverName); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewClientTLS(%q, %q) = %v, want an error containing %q", tt.algorithm, tt.serverName, err, tt.want)
		}
	}
}

func TestClientTLSWithoutKeyStore(t *testing.T) {
	p := newTestPKI(t)
	c := p.clientSettings()
	c.KeystoreLocation = ""
	cfg := newClient(t, c, "localhost")
	if len(cfg.Certificates) != 0 || cfg.RootCAs == nil {
		t.Fatalf("client config: %d certificates, roots %v", len(cfg.Certificates), cfg.RootCAs)
	}
	c.TruststoreLocation = ""
	if cfg = newClient(t, c, "localhost"); cfg.RootCAs != nil {
		t.Fatal("without a trust store the client must use the system's roots (RootCAs nil)")
	}
	empty := writeTestFile(t, p.Dir, "empty-trust.pem", []byte("-----BEGIN NOTHING-----\n-----END NOTHING-----\n"))
	c.TruststoreLocation = empty
	if _, err := NewClientTLS(c, "localhost"); err == nil || !strings.Contains(err.Error(), "holds no certificate") {
		t.Fatalf("NewClientTLS with an empty trust store: %v", err)
	}
}

// replaceFiles writes a new key store over the server's PEM file, as a
// certificate renewal does.
func replaceFiles(t *testing.T, path string, id testIdentity) {
	t.Helper()
	if err := os.WriteFile(path, append(append([]byte{}, id.KeyPEM...), id.CertPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// rewriteKeepingStamp replaces a PEM key store with another of the same
// size (padded with newlines, which PEM ignores) and modification time.
func rewriteKeepingStamp(t *testing.T, path string, id testIdentity) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data := append(append([]byte{}, id.KeyPEM...), id.CertPEM...)
	for int64(len(data)) < fi.Size() {
		data = append(data, '\n')
	}
	if int64(len(data)) != fi.Size() {
		t.Fatalf("the new key store is larger (%d bytes) than the old (%d)", len(data), fi.Size())
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func TestTLSReload(t *testing.T) {
	p := newTestPKI(t)
	clk := clock.NewManual(time.Now())
	s := p.serverSettings()
	srv := newServer(t, s, clk.Now)
	cfg := srv.Config()
	client := newClient(t, p.clientSettings(), "localhost")
	before := handshake(t, cfg, client)
	if !before.ok() || before.servedSerial().Cmp(p.Server.Cert.SerialNumber) != 0 {
		t.Fatalf("first handshake: %v, serial %v", before, before.servedSerial())
	}

	renewed := p.Issue(t, "renewed", "broker")
	replaceFiles(t, s.KeystoreLocation, renewed)
	if r := handshake(t, cfg, client); r.servedSerial().Cmp(p.Server.Cert.SerialNumber) != 0 {
		t.Fatalf("before Reload the old certificate must be served, got serial %v (%v)", r.servedSerial(), r)
	}
	if err := srv.Reload(); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	for _, c := range []*tls.Config{cfg, srv.Config()} {
		r := handshake(t, c, client)
		if !r.ok() || r.servedSerial().Cmp(renewed.Cert.SerialNumber) != 0 {
			t.Fatalf("after Reload: %v, serial %v, want %v", r, r.servedSerial(), renewed.Cert.SerialNumber)
		}
	}
	// The connection made before the reload goes on.
	buf := make([]byte, 10)
	_, err := before.serverConn.Write([]byte("still here"))
	if err == nil {
		_, err = io.ReadFull(before.clientConn, buf)
	}
	if err != nil || string(buf) != "still here" {
		t.Fatalf("old connection after Reload: %q, %v", buf, err)
	}
}

func TestTLSReloadWhenFilesChange(t *testing.T) {
	p := newTestPKI(t)
	clk := clock.NewManual(time.Now())
	s := p.serverSettings()
	// Room for rewriteKeepingStamp: certificates differ in size by a few bytes.
	padded := append(append(append([]byte{}, p.Server.KeyPEM...), p.Server.CertPEM...), strings.Repeat("\n", 16)...)
	if err := os.WriteFile(s.KeystoreLocation, padded, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, s, clk.Now)
	client := newClient(t, p.clientSettings(), "localhost")
	serves := func(want *big.Int) {
		t.Helper()
		r := handshake(t, srv.Config(), client)
		if !r.ok() || r.servedSerial().Cmp(want) != 0 {
			t.Fatalf("handshake: %v, serial %v, want %v", r, r.servedSerial(), want)
		}
	}
	serves(p.Server.Cert.SerialNumber)

	// Files are looked at, not read: new contents with the same size and
	// modification time go unnoticed.
	sameStamp := p.Issue(t, "samestamp", "broker")
	rewriteKeepingStamp(t, s.KeystoreLocation, sameStamp)
	clk.Advance(time.Second)
	serves(p.Server.Cert.SerialNumber)

	renewed := p.Issue(t, "renewed", "broker")
	replaceFiles(t, s.KeystoreLocation, renewed)
	clk.Advance(999 * time.Millisecond)
	serves(p.Server.Cert.SerialNumber) // looked at most once a second
	clk.Advance(time.Millisecond)
	serves(renewed.Cert.SerialNumber)
	if err := srv.ReloadError(); err != nil {
		t.Fatalf("ReloadError = %v", err)
	}

	// A key that does not match its certificate: the renewed one stays.
	broken := renewed
	broken.KeyPEM = p.Client.KeyPEM
	replaceFiles(t, s.KeystoreLocation, broken)
	clk.Advance(time.Second)
	serves(renewed.Cert.SerialNumber)
	if err := srv.ReloadError(); err == nil || !strings.Contains(err.Error(), "does not match the certificate") {
		t.Fatalf("ReloadError = %v, want the key mismatch", err)
	}

	// Fixed on disk: picked up at the next look.
	again := p.Issue(t, "again", "broker")
	replaceFiles(t, s.KeystoreLocation, again)
	clk.Advance(time.Second)
	serves(again.Cert.SerialNumber)
	if err := srv.ReloadError(); err != nil {
		t.Fatalf("ReloadError = %v", err)
	}
}

func TestTLSReloadFailureKeepsTheOldStores(t *testing.T) {
	p := newTestPKI(t)
	s := p.serverSettings()
	srv := newServer(t, s, time.Now)
	client := newClient(t, p.clientSettings(), "localhost")
	tests := []struct {
		name  string
		write func()
		want  string
	}{
		{"key mismatch", func() {
			replaceFiles(t, s.KeystoreLocation, testIdentity{KeyPEM: p.Client.KeyPEM, CertPEM: p.Server.CertPEM})
		}, "does not match the certificate"},
		{"empty file", func() { os.WriteFile(s.KeystoreLocation, nil, 0o600) }, "the file is empty"},
		{"missing file", func() { os.Remove(s.KeystoreLocation) }, "no such file"},
		{"another subject", func() { replaceFiles(t, s.KeystoreLocation, p.Issue(t, "bob", "bob")) }, "the certificate's subject changed from CN=broker,OU=eng,O=Acme,C=US to CN=bob,OU=eng,O=Acme,C=US"},
		{"a lost alternative name", func() {
			id := p.issue(t, "nosan", p.Server.Cert.Subject, nil, newTestKey(t))
			replaceFiles(t, s.KeystoreLocation, id)
		}, "lost the subject alternative name localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.write()
			if err := srv.Reload(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Reload = %v, want an error containing %q", err, tt.want)
			}
			r := handshake(t, srv.Config(), client)
			if !r.ok() || r.servedSerial().Cmp(p.Server.Cert.SerialNumber) != 0 {
				t.Fatalf("after a failed Reload: %v, serial %v", r, r.servedSerial())
			}
		})
	}
}

func TestTLSReloadAllowedChanges(t *testing.T) {
	p := newTestPKI(t)
	s := p.serverSettings()
	s.AllowDNChanges, s.AllowSANChanges = true, true
	srv := newServer(t, s, time.Now)
	bob := p.issue(t, "bob", pkix.Name{CommonName: "bob"}, nil, newTestKey(t))
	replaceFiles(t, s.KeystoreLocation, bob)
	if err := srv.Reload(); err != nil {
		t.Fatalf("Reload with ssl.allow.dn.changes and ssl.allow.san.changes: %v", err)
	}
}

func TestTLSUpdate(t *testing.T) {
	p := newTestPKI(t)
	srv := newServer(t, p.serverSettings(), time.Now)
	client := newClient(t, p.clientSettings(), "localhost")
	renewed := p.Issue(t, "renewed", "broker")
	s := p.serverSettings()
	s.KeystoreLocation = renewed.PEMFile
	s.PrincipalMappingRules = "RULE:^CN=([^,]*),.*$/$1/"
	if err := srv.Update(s); err != nil {
		t.Fatalf("Update: %v", err)
	}
	r := handshake(t, srv.Config(), client)
	if !r.ok() || r.servedSerial().Cmp(renewed.Cert.SerialNumber) != 0 {
		t.Fatalf("after Update: %v, serial %v", r, r.servedSerial())
	}
	if got, err := srv.Principal(r.server); err != nil || got != User("alice") {
		t.Fatalf("Principal after Update = %v, %v", got, err)
	}
	bad := s
	bad.KeystoreLocation = filepath.Join(p.Dir, "nope.pem")
	if err := srv.Update(bad); err == nil {
		t.Fatal("Update to a missing key store succeeded")
	}
	if err := srv.Reload(); err != nil {
		t.Fatalf("Reload after a failed Update must use the settings in force: %v", err)
	}
	noTrust := p.serverSettings()
	noTrust.TruststoreLocation, noTrust.ClientAuth = "", "none"
	srv = newServer(t, noTrust, time.Now)
	if err := srv.Update(p.serverSettings()); err == nil || !strings.Contains(err.Error(), "cannot add a trust store") {
		t.Fatalf("Update adding a trust store = %v", err)
	}
}

func TestTLSSettingsFor(t *testing.T) {
	static, err := config.Parse(config.Broker, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := static.WithDynamic(map[string]string{
		"ssl.keystore.location":                                        "/etc/kafka/broker.jks",
		"ssl.keystore.password":                                        "storepw",
		"ssl.key.password":                                             "keypw",
		"ssl.truststore.type":                                          "PKCS12",
		"ssl.truststore.location":                                      "/etc/kafka/trust.p12",
		"ssl.client.auth":                                              "requested",
		"ssl.cipher.suites":                                            "TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
		"listener.name.internal.ssl.keystore.type":                     "PEM",
		"listener.name.internal.ssl.keystore.location":                 "/etc/kafka/internal.pem",
		"listener.name.internal.ssl.client.auth":                       "required",
		"listener.name.internal.ssl.enabled.protocols":                 "TLSv1.3",
		"listener.name.internal.ssl.endpoint.identification.algorithm": "",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	external := TLSSettingsFor(v, "EXTERNAL")
	want := TLSSettings{
		Listener: "EXTERNAL", KeystoreType: "JKS", KeystoreLocation: "/etc/kafka/broker.jks", KeystorePassword: "storepw",
		KeyPassword: "keypw", TruststoreType: "PKCS12", TruststoreLocation: "/etc/kafka/trust.p12", ClientAuth: "requested",
		EnabledProtocols: []string{"TLSv1.2", "TLSv1.3"}, CipherSuites: []string{"TLS_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
		EndpointIdentificationAlgorithm: "https", PrincipalMappingRules: "DEFAULT",
	}
	if diff := settingsDiff(external, want); diff != "" {
		t.Errorf("EXTERNAL: %s", diff)
	}
	internal := TLSSettingsFor(v, "INTERNAL")
	want.Listener, want.KeystoreType, want.KeystoreLocation, want.ClientAuth = "INTERNAL", "PEM", "/etc/kafka/internal.pem", "required"
	want.EnabledProtocols, want.EndpointIdentificationAlgorithm = []string{"TLSv1.3"}, ""
	if diff := settingsDiff(internal, want); diff != "" {
		t.Errorf("INTERNAL: %s", diff)
	}
	plain := TLSSettingsFor(v, "")
	if plain.KeystoreLocation != "/etc/kafka/broker.jks" || plain.Listener != "" {
		t.Errorf("plain settings: %+v", plain)
	}
}

func settingsDiff(got, want TLSSettings) string {
	g, w := strings.ReplaceAll(fmtSettings(got), ", ", "\n"), strings.ReplaceAll(fmtSettings(want), ", ", "\n")
	if g == w {
		return ""
	}
	return "got\n" + g + "\nwant\n" + w
}

func fmtSettings(s TLSSettings) string {
	return strings.Join([]string{s.Listener, s.KeystoreType, s.KeystoreLocation, s.KeystorePassword, s.KeyPassword,
		s.KeystoreCertificateChain, s.KeystoreKey, s.TruststoreType, s.TruststoreLocation, s.TruststorePassword,
		s.TruststoreCertificates, s.ClientAuth, strings.Join(s.EnabledProtocols, "+"), strings.Join(s.CipherSuites, "+"),
		s.EndpointIdentificationAlgorithm, s.PrincipalMappingRules, boolString(s.AllowDNChanges), boolString(s.AllowSANChanges)}, ", ")
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestTLSPrincipalWithoutCertificate(t *testing.T) {
	p := newTestPKI(t)
	srv := newServer(t, p.serverSettings(), time.Now)
	if got, err := srv.Principal(tls.ConnectionState{}); got != Anonymous || err != nil {
		t.Fatalf("Principal without a certificate = %v, %v", got, err)
	}
	bad := &x509.Certificate{RawSubject: []byte{0x31}}
	if _, err := srv.Principal(tls.ConnectionState{PeerCertificates: []*x509.Certificate{bad}}); !IsAuthError(err) {
		t.Fatalf("Principal of a certificate with a bad subject: %v", err)
	}
}

// TestTLSNoSessionResumption checks every connection gets a full handshake,
// so that a reloaded trust store applies to returning clients too.
func TestTLSNoSessionResumption(t *testing.T) {
	p := newTestPKI(t)
	cfg := newServer(t, p.serverSettings(), time.Now).Config()
	for _, version := range []string{"TLSv1.2", "TLSv1.3"} {
		c := p.clientSettings()
		c.EnabledProtocols = []string{version}
		client := newClient(t, c, "localhost")
		client.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		for i := range 2 {
			r := handshake(t, cfg, client)
			if !r.ok() || r.client.DidResume {
				t.Fatalf("%s connection %d: %v, resumed %v", version, i, r, r.client.DidResume)
			}
		}
	}
}

func TestTLSSettingsStringHidesSecrets(t *testing.T) {
	s := TLSSettings{Listener: "SSL", KeystorePassword: "s3cret-store", KeyPassword: "s3cret-key", KeystoreKey: "-----BEGIN PRIVATE KEY----- MIIB",
		TruststorePassword: "s3cret-trust", TruststoreCertificates: "-----BEGIN CERTIFICATE----- MIIC", KeystoreLocation: "/k.jks"}
	for _, out := range []string{s.String(), fmt.Sprintf("%v", s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s)} {
		if strings.Contains(out, "s3cret") || strings.Contains(out, "MII") || !strings.Contains(out, "/k.jks") {
			t.Fatalf("settings printed as %s", out)
		}
	}
}
