// Command secure prepares the secured broker of the compatibility suites'
// security part (test/compat/README.md, "Security"): a throwaway CA with
// the broker's and two clients' certificates, unsecured OAUTHBEARER tokens,
// and, once the broker runs, its SCRAM users.
//
//	secure init DIR
//	secure scram-users -admin HOST:PORT -sasl HOST:PORT -user NAME -password PW
//	secure allow -admin HOST:PORT -principal User:NAME -topic-prefix PREFIX
//
// init writes into DIR the PEM files below and env.sh, the variables the
// suites read (tokens included), for the shell to source; the broker's
// settings are lib.sh's business. scram-users creates a user's
// SCRAM-SHA-256 and SCRAM-SHA-512 credentials with
// AlterUserScramCredentials through the PLAINTEXT listener, as
// kafka-configs.sh does, and returns once both log in on the SASL
// listener. allow creates the ACLs that let principal write, read and
// describe the topics named with prefix (PREFIXED), and no one else but the
// super users: what mtls-principal checks.
//
// Certificates are made here rather than with openssl so that the suites
// need nothing beyond Go to get them.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The client certificate's subject, and the principal the broker's
// ssl.principal.mapping.rules (lib.sh) make of it; another client's, of the
// same CA, whose principal no ACL names.
const (
	clientCN        = "compat-client"
	clientSubject   = "CN=compat-client,OU=compat,O=Samsa"
	clientPrincipal = "User:compat-client"
	otherCN         = "compat-other"
	oauthSubject    = "compat-oauth"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "init":
		if len(os.Args) != 3 {
			usage()
		}
		err = initDir(os.Args[2], time.Now())
	case "scram-users":
		err = scramUsers(os.Args[2:])
	case "allow":
		err = allow(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "secure:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: secure init DIR | secure scram-users -admin ADDR -sasl ADDR -user NAME -password PW"+
		" | secure allow -admin ADDR -principal User:NAME -topic-prefix PREFIX")
	os.Exit(2)
}

// ca signs the run's certificates.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(now time.Time) (*ca, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "samsa compat CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &ca{cert: cert, key: key}, nil
}

// issue makes a leaf certificate for subject: a server's for 127.0.0.1
// and localhost, else a client's. It returns the certificate and its
// PKCS#8 key, PEM encoded.
func (c *ca) issue(subject pkix.Name, serial int64, server bool, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}

func (c *ca) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw})
}

// unsecuredToken is a JWS with alg none, as Kafka's unsecured OAUTHBEARER
// login module makes: the claims sub, iat and exp.
func unsecuredToken(sub string, iat, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	claims, _ := json.Marshal(map[string]any{"sub": sub, "iat": iat.Unix(), "exp": exp.Unix()})
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(claims) + "."
}

// initDir writes the stores, the client's files and env.sh into dir.
func initDir(dir string, now time.Time) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	c, err := newCA(now)
	if err != nil {
		return err
	}
	brokerCert, brokerKey, err := c.issue(pkix.Name{CommonName: "localhost", Organization: []string{"Samsa"}}, 2, true, now)
	if err != nil {
		return err
	}
	clientCert, clientKey, err := c.issue(pkix.Name{CommonName: clientCN, OrganizationalUnit: []string{"compat"},
		Organization: []string{"Samsa"}}, 3, false, now)
	if err != nil {
		return err
	}
	otherCert, otherKey, err := c.issue(pkix.Name{CommonName: otherCN, OrganizationalUnit: []string{"compat"},
		Organization: []string{"Samsa"}}, 4, false, now)
	if err != nil {
		return err
	}
	// The CA goes after each leaf: a PEM key store holds the key, then the
	// chain (Kafka's ssl.keystore.type=PEM, and Java's client takes the
	// same file).
	files := map[string][]byte{
		"ca.pem":              c.pem(),
		"broker.pem":          join(brokerKey, brokerCert, c.pem()),
		"client.pem":          join(clientCert, c.pem()),
		"client.key":          clientKey,
		"client-keystore.pem": join(clientKey, clientCert, c.pem()),
		"other.pem":           join(otherCert, c.pem()),
		"other.key":           otherKey,
		"other-keystore.pem":  join(otherKey, otherCert, c.pem()),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	// The valid token outlives any suite; the expired one ended an hour
	// ago, past any clock skew the broker allows.
	env := [][2]string{
		{"SAMSA_CA_FILE", filepath.Join(dir, "ca.pem")},
		{"SAMSA_CLIENT_CERT", filepath.Join(dir, "client.pem")},
		{"SAMSA_CLIENT_KEY", filepath.Join(dir, "client.key")},
		{"SAMSA_CLIENT_KEYSTORE", filepath.Join(dir, "client-keystore.pem")},
		{"SAMSA_CLIENT_SUBJECT", clientSubject},
		{"SAMSA_CLIENT_PRINCIPAL", clientPrincipal},
		{"SAMSA_OTHER_CLIENT_CERT", filepath.Join(dir, "other.pem")},
		{"SAMSA_OTHER_CLIENT_KEY", filepath.Join(dir, "other.key")},
		{"SAMSA_OTHER_CLIENT_KEYSTORE", filepath.Join(dir, "other-keystore.pem")},
		{"SAMSA_OAUTH_SUBJECT", oauthSubject},
		{"SAMSA_OAUTH_TOKEN", unsecuredToken(oauthSubject, now.Add(-time.Minute), now.Add(6*time.Hour))},
		{"SAMSA_OAUTH_TOKEN_EXPIRED", unsecuredToken(oauthSubject, now.Add(-2*time.Hour), now.Add(-time.Hour))},
	}
	var sh strings.Builder
	for _, kv := range env {
		fmt.Fprintf(&sh, "export %s='%s'\n", kv[0], kv[1])
	}
	return os.WriteFile(filepath.Join(dir, "env.sh"), []byte(sh.String()), 0o600)
}

func join(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// scramUsers creates one user's credentials for both SCRAM mechanisms and
// waits until each logs in.
func scramUsers(args []string) error {
	fs := flag.NewFlagSet("scram-users", flag.ExitOnError)
	admin := fs.String("admin", "", "the PLAINTEXT listener")
	saslAddr := fs.String("sasl", "", "the SASL_PLAINTEXT listener, to check the logins")
	user := fs.String("user", "", "user name")
	password := fs.String("password", "", "password")
	fs.Parse(args)
	if *admin == "" || *saslAddr == "" || *user == "" || *password == "" {
		usage()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(*admin))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// Kafka takes a user once per request: one request per mechanism.
	for _, m := range []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512} {
		res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: *user, Mechanism: m, Iterations: 4096, Password: *password}})
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			return fmt.Errorf("AlterUserScramCredentials %s for %s: %w", m, *user, err)
		}
	}
	a := scram.Auth{User: *user, Pass: *password}
	for name, m := range map[string]sasl.Mechanism{"SCRAM-SHA-256": a.AsSha256Mechanism(), "SCRAM-SHA-512": a.AsSha512Mechanism()} {
		if err := untilLogin(ctx, *saslAddr, m); err != nil {
			return fmt.Errorf("%s login as %s: %w", name, *user, err)
		}
	}
	return nil
}

// untilLogin retries a metadata request authenticated with m until it
// succeeds: the credentials reach the broker's metadata image a moment
// after the controller commits them.
func untilLogin(ctx context.Context, addr string, m sasl.Mechanism) error {
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(m), kgo.RequestRetries(0))
		if err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = kmsg.NewPtrMetadataRequest().RequestWith(rctx, cl)
		cancel()
		cl.Close()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// allow creates a PREFIXED ACL allowing principal WRITE, READ and DESCRIBE
// on the topics named with prefix.
func allow(args []string) error {
	fs := flag.NewFlagSet("allow", flag.ExitOnError)
	admin := fs.String("admin", "", "the PLAINTEXT listener")
	principal := fs.String("principal", "", "User:NAME")
	prefix := fs.String("topic-prefix", "", "the topics' prefix")
	fs.Parse(args)
	if *admin == "" || *principal == "" || *prefix == "" {
		usage()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(*admin))
	if err != nil {
		return err
	}
	defer cl.Close()
	b := kadm.NewACLs().Allow(*principal).AllowHosts().Topics(*prefix).
		Operations(kadm.OpWrite, kadm.OpRead, kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternPrefixed)
	res, err := kadm.NewClient(cl).CreateACLs(ctx, b)
	for _, r := range res {
		err = errors.Join(err, r.Err)
	}
	if err != nil {
		return fmt.Errorf("CreateAcls allowing %s on topics %s*: %w", *principal, *prefix, err)
	}
	return nil
}
