package main

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/magiconair/properties"
)

// TestTLSFiles: the broker certificate verifies for 127.0.0.1 against the
// CA file, the key store file serves a handshake (key, then chain), and the
// probe names what was negotiated as Kafka names the protocol.
func TestTLSFiles(t *testing.T) {
	f, err := newTLSFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ks, err := os.ReadFile(f.Keystore)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(ks), "-----BEGIN PRIVATE KEY-----") {
		t.Errorf("key store does not open with the PKCS#8 key:\n%.60s", ks)
	}
	cert, err := tls.X509KeyPair(ks, ks)
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.Certificate) != 2 {
		t.Errorf("chain of %d certificates, want leaf and CA", len(cert.Certificate))
	}
	cfg, err := f.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: cfg.RootCAs}); err != nil {
		t.Errorf("broker certificate: %v", err)
	}

	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err == nil {
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	got, err := f.negotiated(l.Addr().String())
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "TLSv1.3 TLS_") {
		t.Errorf("negotiated %q", got)
	}
	if _, err := f.negotiated(net.JoinHostPort("127.0.0.1", "1")); err == nil {
		t.Error("negotiated with nothing listening")
	}
}

// TestKafkaTLSProperties: Kafka's TLS node has an SSL client and
// inter-broker listener, a plaintext controller listener, and its key and
// chain inline in a form Java's properties loader turns back into the PEM
// text (magiconair/properties reads the file as java.util.Properties does).
func TestKafkaTLSProperties(t *testing.T) {
	f, err := newTLSFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &broker{dir: "/d", port: 9092, ctrlPort: 9093}
	text := kafkaKind{tlsFiles: f}.serverProperties(b)
	p, err := properties.LoadString(text)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"listeners":                      "SSL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
		"inter.broker.listener.name":     "SSL",
		"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,SSL:SSL",
		"ssl.keystore.type":              "PEM",
		"ssl.keystore.key":               strings.TrimSpace(f.KeyPEM),
		"ssl.keystore.certificate.chain": strings.TrimSpace(f.ChainPEM),
		"ssl.truststore.type":            "PEM",
		"ssl.truststore.location":        f.CA,
	} {
		if got := p.GetString(k, "(unset)"); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for _, lack := range []string{"ssl.keystore.location", "ssl.key.password", "ssl.keystore.password"} {
		if _, ok := p.Get(lack); ok {
			t.Errorf("has %s", lack)
		}
	}
	if _, ok := p.Get("ssl.cipher.suites"); ok {
		t.Error("ssl.cipher.suites set by default")
	}
	pinned := kafkaKind{tlsFiles: f, cipherSuites: "TLS_AES_128_GCM_SHA256"}.serverProperties(b)
	if !strings.Contains(pinned, "\nssl.cipher.suites=TLS_AES_128_GCM_SHA256\n") {
		t.Errorf("-kafka-ssl-cipher-suites not set:\n%s", pinned)
	}
	if plain := (kafkaKind{}).serverProperties(b); strings.Contains(plain, "ssl.") || strings.Contains(plain, "SSL") {
		t.Errorf("plaintext node has TLS settings:\n%s", plain)
	}
	if n := (kafkaKind{tlsFiles: f}).name(); n != "kafka-tls" {
		t.Errorf("name %q", n)
	}
}

// TestSamsaTLSCommand: samsa-tls serves an SSL listener from the PEM key
// store file, and the bench client is told to use TLS and the CA.
func TestSamsaTLSCommand(t *testing.T) {
	f := &tlsFiles{CA: "/t/ca.pem", Keystore: "/t/ks.pem"}
	k := samsaKind{bin: "samsa", tlsFiles: f}
	b := &broker{kind: k, dir: "/d", port: 9092}
	args := k.command(b).Args
	for _, want := range [][]string{
		{"--listeners", "SSL://127.0.0.1:9092"},
		{"--override", "ssl.keystore.type=PEM"},
		{"--override", "ssl.keystore.location=/t/ks.pem"},
		{"--override", "ssl.truststore.location=/t/ca.pem"},
	} {
		i := slices.Index(args, want[1])
		if i < 1 || args[i-1] != want[0] {
			t.Errorf("args lack %q: %q", want, args)
		}
	}
	if got := b.clientArgs(); !slices.Equal(got, []string{"--tls", "--tls-ca", "/t/ca.pem"}) {
		t.Errorf("client args %q", got)
	}
	if n := k.name(); n != "samsa-tls" {
		t.Errorf("name %q", n)
	}
	plain := &broker{kind: samsaKind{bin: "samsa"}, dir: "/d", port: 9092}
	if args := plain.kind.command(plain).Args; !slices.Contains(args, "PLAINTEXT://127.0.0.1:9092") || plain.clientArgs() != nil {
		t.Errorf("plaintext samsa: %q, client args %q", args, plain.clientArgs())
	}
}
