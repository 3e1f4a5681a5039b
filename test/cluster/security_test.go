package cluster

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
	"maps"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// writeTestPKI writes a CA and a certificate for 127.0.0.1 that every node
// presents, as PEM files: the key store (key then chain) and the trust
// store. It returns their paths and the client's TLS config.
func writeTestPKI(t *testing.T) (keystore, truststore string, client *tls.Config) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "samsa node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := t.TempDir()
	keystore, truststore = filepath.Join(dir, "node.pem"), filepath.Join(dir, "ca.pem")
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	ks := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	if err := os.WriteFile(keystore, ks, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truststore, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return keystore, truststore, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// secureOverrides make every listener of every node SASL_SSL, the
// client's, the inter-broker one and the controllers', with PLAIN logins:
// the nodes log in to each other as "node", clients as alice.
func secureOverrides(keystore, truststore, nodePassword string) map[string]string {
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="node" password="` + nodePassword +
		`" user_node="node-secret" user_alice="alice-secret";`
	return map[string]string{
		"listener.security.protocol.map":                  "PLAINTEXT:SASL_SSL,CONTROLLER:SASL_SSL",
		"ssl.keystore.type":                               "PEM",
		"ssl.keystore.location":                           keystore,
		"ssl.truststore.type":                             "PEM",
		"ssl.truststore.location":                         truststore,
		"sasl.enabled.mechanisms":                         "PLAIN",
		"sasl.mechanism.inter.broker.protocol":            "PLAIN",
		"sasl.mechanism.controller.protocol":              "PLAIN",
		"listener.name.plaintext.plain.sasl.jaas.config":  jaas,
		"listener.name.controller.plain.sasl.jaas.config": jaas,
	}
}

// TestSASLSSLBetweenEveryNode runs three nodes whose every listener is
// SASL_SSL: Raft between the voters, registration and heartbeats, replica
// fetches and clients all log in over TLS. A leader is killed under
// acks=all writes; every acknowledged record is read back from the
// survivors and, once it is back, from the restarted node.
func TestSASLSSLBetweenEveryNode(t *testing.T) { runSecuredCluster(t, nil) }

// TestSASLSSLBetweenEveryNodeWithAnAuthorizer is the same under Kafka's
// StandardAuthorizer, with the nodes' own principal (User:node, from their
// logins) as the super user instead of ANONYMOUS: replication, heartbeats
// and ISR changes pass the authorizer as that principal.
func TestSASLSSLBetweenEveryNodeWithAnAuthorizer(t *testing.T) {
	runSecuredCluster(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:node;User:alice",
	})
}

func runSecuredCluster(t *testing.T, extra map[string]string) {
	ks, ts, clientTLS := writeTestPKI(t)
	login := []kgo.Opt{kgo.DialTLSConfig(clientTLS), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())}
	ov := secureOverrides(ks, ts, "node-secret")
	maps.Copy(ov, extra)
	c := startClusterWith(t, devcluster.Config{Nodes: 3, Overrides: ov, ClientOpts: login})
	adm := adminClient(t, c, login...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	isr := "2"
	if r, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": &isr}, "secured"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic("secured"),
		kgo.RequiredAcks(kgo.AllISRAcks())}, login...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	produce(0, 100)
	if err := waitISR(ctx, adm, "secured", 3); err != nil {
		t.Fatalf("followers never caught up over SASL_SSL: %v", err)
	}
	leader := leaderOfSecured(ctx, t, adm)
	if err := c.Node(leader).Kill(); err != nil {
		t.Fatal(err)
	}
	produce(100, 200)
	if err := c.Node(leader).Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitISR(ctx, adm, "secured", 3); err != nil {
		t.Fatalf("the restarted node never rejoined the ISR: %v", err)
	}
	rd, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Node(leader).Addr()), kgo.ConsumeTopics("secured"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, login...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	seen := map[string]bool{}
	for len(seen) < 200 && ctx.Err() == nil {
		fs := rd.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if len(seen) != 200 {
		t.Fatalf("read %d of 200 acknowledged records", len(seen))
	}
}

// A node whose own login is wrong cannot join: its controller and
// inter-broker connections are refused, and it says why in its log.
func TestNodeWithAWrongPasswordCannotJoin(t *testing.T) {
	ks, ts, clientTLS := writeTestPKI(t)
	login := []kgo.Opt{kgo.DialTLSConfig(clientTLS), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())}
	c := startClusterWith(t, devcluster.Config{Nodes: 3, Overrides: secureOverrides(ks, ts, "node-secret"), ClientOpts: login})
	n := c.Node(3)
	if err := n.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	props, err := os.ReadFile(n.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.ReplaceAll(string(props), `password="node-secret"`, `password="not-the-secret"`)
	if err := os.WriteFile(n.ConfigPath(), []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(n.LogTail(200), "SASL_AUTHENTICATION_FAILED") {
		if time.Now().After(deadline) {
			t.Fatalf("node 3 never reported its failed login:\n%s", n.LogTail(60))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// It never finished starting: stopping it is a failed start (exit 1).
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
}

func waitISR(ctx context.Context, adm *kadm.Client, topic string, n int) error {
	for {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil {
			if p, ok := td[topic].Partitions[0]; ok && len(p.ISR) == n {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func leaderOfSecured(ctx context.Context, t *testing.T, adm *kadm.Client) int32 {
	td, err := adm.ListTopics(ctx, "secured")
	if err != nil {
		t.Fatal(err)
	}
	return td["secured"].Partitions[0].Leader
}
