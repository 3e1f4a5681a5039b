package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tlsFiles are the TLS mode's PEM material: a throwaway CA and a broker
// certificate it signed for 127.0.0.1, written under one directory for the
// brokers and the client to read.
type tlsFiles struct {
	// CA is the CA certificate's file: the client's --tls-ca and the
	// brokers' trust store.
	CA string
	// Keystore is the broker key (unencrypted PKCS#8) followed by its
	// chain, leaf first: Samsa's ssl.keystore.location.
	Keystore string
	// KeyPEM and ChainPEM are the key and the chain as text, for Kafka's
	// inline ssl.keystore.key and ssl.keystore.certificate.chain: Kafka
	// reads a PEM key store file only with an encrypted key and
	// ssl.key.password (DefaultSslEngineFactory), an unencrypted one only
	// inline.
	KeyPEM, ChainPEM string
}

// tlsValidity is how long the certificates are valid: longer than any run.
const tlsValidity = 30 * 24 * time.Hour

// newTLSFiles makes a CA (ECDSA P-256, as the broker key) and a broker
// certificate for 127.0.0.1 and localhost, and writes them to dir.
func newTLSFiles(dir string) (*tlsFiles, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "samsa bench/compare throwaway CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(tlsValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("tls: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(tlsValidity),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// ClientAuth too: a broker's key store is also its certificate
		// as a client of another broker's listener, should one ask.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("tls: broker certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	caPEM := pemString("CERTIFICATE", caDER)
	f := &tlsFiles{
		CA:       filepath.Join(dir, "ca.pem"),
		Keystore: filepath.Join(dir, "broker-keystore.pem"),
		KeyPEM:   pemString("PRIVATE KEY", keyDER),
		ChainPEM: pemString("CERTIFICATE", leafDER) + caPEM,
	}
	if err := os.WriteFile(f.CA, []byte(caPEM), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.Keystore, []byte(f.KeyPEM+f.ChainPEM), 0o600); err != nil {
		return nil, err
	}
	return f, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

func pemString(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

// clientConfig is the TLS of the driver's own probes: what `samsa bench
// --tls --tls-ca` sets up (TLS 1.2 at least, Go's defaults otherwise, the
// name checked against the host dialled), so the probe negotiates what the
// workloads do.
func (f *tlsFiles) clientConfig() (*tls.Config, error) {
	data, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("tls: no certificate in %s", f.CA)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}, nil
}

// benchArgs are the flags that make `samsa bench` speak TLS to the broker.
func (f *tlsFiles) benchArgs() []string { return []string{"--tls", "--tls-ca", f.CA} }

// negotiated does one handshake with addr and names the protocol version
// and cipher suite the broker chose for this client, e.g. "TLSv1.3
// TLS_AES_128_GCM_SHA256": a JVM and Go may pick different suites from the
// same offer, which bears on the CPU figures.
func (f *tlsFiles) negotiated(addr string) (string, error) {
	cfg, err := f.clientConfig()
	if err != nil {
		return "", err
	}
	host, _, _ := net.SplitHostPort(addr)
	cfg.ServerName = host
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("tls: handshake with %s: %w", addr, err)
	}
	defer c.Close()
	st := c.(*tls.Conn).ConnectionState()
	return javaVersionName(st.Version) + " " + tls.CipherSuiteName(st.CipherSuite), nil
}

// javaVersionName is the version as Kafka's ssl.enabled.protocols names it.
func javaVersionName(v uint16) string {
	return strings.Replace(tls.VersionName(v), "TLS 1", "TLSv1", 1)
}

// inlinePEM is a PEM text as a one-line value of a Java properties file,
// whose loader turns each \n back into a line break.
func inlinePEM(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", `\n`)
}
