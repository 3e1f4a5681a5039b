package broker

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// testCA issues the certificates of a test: a broker's for 127.0.0.1 and
// clients' by common name.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "samsa test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate chain and key in PEM for subject.
func (ca *testCA) issue(t testing.TB, subject pkix.Name, serial int64, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// clientTLS trusts ca and, with a subject, presents a certificate of it.
func (ca *testCA) clientTLS(t testing.TB, cn string) *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.pem)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cn != "" {
		c, k := ca.issue(t, pkix.Name{CommonName: cn, Organization: []string{"Acme"}}, 100, false)
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// writeBrokerStore writes the broker's key store (key then chain, as
// Kafka's PEM key store file holds them) and the trust store into dir.
func (ca *testCA) writeBrokerStore(t testing.TB, dir string, serial int64) (keystore, truststore string) {
	t.Helper()
	c, k := ca.issue(t, pkix.Name{CommonName: "broker"}, serial, true)
	keystore, truststore = filepath.Join(dir, "broker.pem"), filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(keystore+".tmp", append(k, c...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(keystore+".tmp", keystore); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truststore, ca.pem, 0o644); err != nil {
		t.Fatal(err)
	}
	return keystore, truststore
}

func tlsBroker(t *testing.T, ca *testCA, listeners string, extra map[string]string) (*Broker, string) {
	t.Helper()
	dir := t.TempDir()
	ks, ts := ca.writeBrokerStore(t, dir, 2)
	ov := map[string]string{"listeners": listeners,
		"ssl.keystore.type": "PEM", "ssl.keystore.location": ks,
		"ssl.truststore.type": "PEM", "ssl.truststore.location": ts}
	for k, v := range extra {
		ov[k] = v
	}
	return startSecured(t, ov), dir
}

func metadataOver(t *testing.T, opts ...kgo.Opt) error {
	t.Helper()
	cl, err := kgo.NewClient(append(opts, kgo.RequestRetries(0), kgo.RetryTimeout(2*time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	return err
}

func TestTLSListenerServesAndProduces(t *testing.T) {
	ca := newTestCA(t)
	b, _ := tlsBroker(t, ca, "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(listenerAddr(t, b, "SSL")), kgo.DialTLSConfig(ca.clientTLS(t, "")),
		kgo.DefaultProduceTopic("over-tls"), kgo.AllowAutoTopicCreation(), kgo.ConsumeTopics("over-tls"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 200<<10)}).FirstErr(); err != nil {
		t.Fatalf("produce over TLS: %v", err)
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatalf("fetch over TLS: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || len(recs[0].Value) != 200<<10 {
		t.Fatalf("fetched %d records", len(recs))
	}
	// A plaintext client on the TLS listener gets nothing.
	if err := metadataOver(t, kgo.SeedBrokers(listenerAddr(t, b, "SSL"))); err == nil {
		t.Fatal("a plaintext client was served on the SSL listener")
	}
}

func TestTLSClientAuthRequired(t *testing.T) {
	ca := newTestCA(t)
	b, _ := tlsBroker(t, ca, "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", map[string]string{"listener.name.ssl.ssl.client.auth": "required"})
	addr := listenerAddr(t, b, "SSL")
	if err := metadataOver(t, kgo.SeedBrokers(addr), kgo.DialTLSConfig(ca.clientTLS(t, ""))); err == nil {
		t.Fatal("a client without a certificate was served with ssl.client.auth=required")
	}
	if err := metadataOver(t, kgo.SeedBrokers(addr), kgo.DialTLSConfig(ca.clientTLS(t, "alice"))); err != nil {
		t.Fatalf("a client with a certificate: %v", err)
	}
	other := newTestCA(t)
	cfg := ca.clientTLS(t, "")
	foreign := other.clientTLS(t, "mallory")
	cfg.Certificates = foreign.Certificates
	if err := metadataOver(t, kgo.SeedBrokers(addr), kgo.DialTLSConfig(cfg)); err == nil {
		t.Fatal("a certificate of another CA was accepted")
	}
}

func TestSASLOverTLS(t *testing.T) {
	ca := newTestCA(t)
	b, _ := tlsBroker(t, ca, "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0", map[string]string{
		"listener.name.sasl_ssl.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config":  plainJAAS,
	})
	addr := listenerAddr(t, b, "SASL_SSL")
	if err := metadataOver(t, kgo.SeedBrokers(addr), kgo.DialTLSConfig(ca.clientTLS(t, "")),
		kgo.SASL(plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism())); err != nil {
		t.Fatalf("PLAIN over TLS: %v", err)
	}
	if err := metadataOver(t, kgo.SeedBrokers(addr), kgo.DialTLSConfig(ca.clientTLS(t, ""))); err == nil {
		t.Fatal("served without SASL on SASL_SSL")
	}
}

// Replacing the key store's file is seen by the next connection, without a
// restart; connections open before keep working.
func TestTLSCertificateReloadedFromDisk(t *testing.T) {
	ca := newTestCA(t)
	b, dir := tlsBroker(t, ca, "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", nil)
	addr := listenerAddr(t, b, "SSL")
	serialOf := func() int64 {
		c, err := tls.Dial("tcp", addr, ca.clientTLS(t, ""))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serialOf(); got != 2 {
		t.Fatalf("serial %d, want 2", got)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(ca.clientTLS(t, "")))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	// The file's modification time must move for the check to see it.
	time.Sleep(1100 * time.Millisecond)
	ca.writeBrokerStore(t, dir, 3)
	deadline := time.Now().Add(10 * time.Second)
	for serialOf() != 3 {
		if time.Now().After(deadline) {
			t.Fatal("the new certificate was never served")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl); err != nil {
		t.Fatalf("a connection open before the reload: %v", err)
	}
}

// A dynamic config change of the key store's location (Kafka's way to
// rotate a listener's certificate) applies to new connections without a
// restart; a broken store is refused and the old certificate stays.
func TestTLSKeystoreChangedByAlterConfigs(t *testing.T) {
	ca := newTestCA(t)
	b, _ := tlsBroker(t, ca, "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", nil)
	addr := listenerAddr(t, b, "SSL")
	serialOf := func() int64 {
		c, err := tls.Dial("tcp", addr, ca.clientTLS(t, ""))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	adm := kadm.NewClient(newClient(t, b.Addr()))
	alter := func(path string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "listener.name.ssl.ssl.keystore.location", Value: &path}}, 1)
		if err == nil {
			for _, r := range res {
				err = errors.Join(err, r.Err)
			}
		}
		if err != nil {
			t.Fatalf("alter keystore location: %v", err)
		}
	}
	broken := filepath.Join(t.TempDir(), "broken.pem")
	if err := os.WriteFile(broken, []byte("not a key store"), 0o600); err != nil {
		t.Fatal(err)
	}
	alter(broken)
	next, _ := ca.writeBrokerStore(t, t.TempDir(), 7)
	alter(next)
	deadline := time.Now().Add(10 * time.Second)
	for serialOf() != 7 {
		if time.Now().After(deadline) {
			t.Fatal("the key store set by AlterConfigs was never served")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
