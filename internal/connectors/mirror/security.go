package mirror

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-io/samsa/internal/jaas"
	"github.com/samsa-io/samsa/internal/keystore"
	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

// The mirrored clusters' security, from source.cluster.X and
// target.cluster.X with Kafka's client names and defaults: PLAINTEXT, SSL,
// SASL_PLAINTEXT or SASL_SSL; TLS from key and trust stores (JKS, PKCS12
// or PEM files, internal/keystore), the host name checked unless
// ssl.endpoint.identification.algorithm is empty; SASL PLAIN or
// SCRAM-SHA-256/512 with the credentials in sasl.jaas.config. Any other
// setting is refused: nothing a config says is dropped.

// mechanisms are the SASL mechanisms supported, with their login modules.
var mechanisms = map[string]string{
	"PLAIN":         jaas.PlainLoginModule,
	"SCRAM-SHA-256": jaas.ScramLoginModule,
	"SCRAM-SHA-512": jaas.ScramLoginModule,
}

// securityOpts maps a cluster's security settings to franz-go options;
// prefix (source.cluster. or target.cluster.) names them in errors.
func securityOpts(c *mirrorconf.Cluster, prefix string) ([]kgo.Opt, error) {
	protocol := strings.ToUpper(strings.TrimSpace(c.Security["security.protocol"]))
	if protocol == "" {
		protocol = "PLAINTEXT"
	}
	fail := func(key, format string, args ...any) error {
		return &mirrorconf.Error{Key: prefix + key, Msg: fmt.Sprintf(format, args...)}
	}
	var withTLS, withSASL bool
	switch protocol {
	case "PLAINTEXT":
	case "SSL":
		withTLS = true
	case "SASL_PLAINTEXT":
		withSASL = true
	case "SASL_SSL":
		withTLS, withSASL = true, true
	default:
		return nil, fail("security.protocol", "%q: want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", c.Security["security.protocol"])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Security)) {
		switch {
		case k == "security.protocol":
		case strings.HasPrefix(k, "ssl.") && !withTLS:
			return nil, fail(k, "set, but security.protocol %s does not use TLS", protocol)
		case strings.HasPrefix(k, "sasl.") && !withSASL:
			return nil, fail(k, "set, but security.protocol %s does not use SASL", protocol)
		case strings.HasPrefix(k, "ssl.") && !slices.Contains(tlsSettings, k):
			return nil, fail(k, "not supported: the Connect form reads %s", strings.Join(tlsSettings, ", "))
		case strings.HasPrefix(k, "sasl.") && k != "sasl.mechanism" && k != "sasl.jaas.config":
			return nil, fail(k, "not supported: the Connect form reads sasl.mechanism and sasl.jaas.config")
		}
	}
	var opts []kgo.Opt
	if withTLS {
		cfg, err := tlsConfig(c.Security, fail)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if !withSASL {
		return opts, nil
	}
	mech := strings.ToUpper(strings.TrimSpace(c.Security["sasl.mechanism"]))
	if mech == "" {
		mech = "GSSAPI" // Kafka's default
	}
	module, ok := mechanisms[mech]
	if !ok {
		return nil, fail("sasl.mechanism", "%s is not supported: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mech)
	}
	raw, ok := c.Security["sasl.jaas.config"]
	if !ok {
		return nil, fail("sasl.jaas.config", "required for %s: %s required username=\"...\" password=\"...\";", mech, module)
	}
	j, err := jaas.Parse(raw)
	if err != nil {
		return nil, fail("sasl.jaas.config", "%v", err)
	}
	if j.LoginModule != module {
		return nil, fail("sasl.jaas.config", "the login module is %s, but sasl.mechanism %s takes %s", j.LoginModule, mech, module)
	}
	for _, k := range slices.Sorted(maps.Keys(j.Options)) {
		if k != "username" && k != "password" {
			return nil, fail("sasl.jaas.config", "option %s is not supported (username and password are)", k)
		}
	}
	user, pass := j.Options["username"], j.Options["password"]
	if user == "" || pass == "" {
		return nil, fail("sasl.jaas.config", "username and password are required")
	}
	switch mech {
	case "PLAIN":
		return append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism())), nil
	case "SCRAM-SHA-256":
		return append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism())), nil
	}
	return append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism())), nil
}

// tlsSettings are the ssl.* settings read.
var tlsSettings = []string{"ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password",
	"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
	"ssl.endpoint.identification.algorithm"}

// tlsConfig reads the stores (Kafka's default type JKS; no trust store
// trusts the system's roots) and the host name check (Kafka's default
// https: checked; empty: the chain only).
func tlsConfig(sec map[string]string, fail func(key, format string, args ...any) error) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	storeType := func(k string) string {
		if v := strings.TrimSpace(sec[k]); v != "" {
			return v
		}
		return keystore.JKS
	}
	if path := sec["ssl.truststore.location"]; path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fail("ssl.truststore.location", "%v", err)
		}
		certs, err := keystore.TrustStore(data, storeType("ssl.truststore.type"), sec["ssl.truststore.password"])
		if err != nil {
			return nil, fail("ssl.truststore.location", "%s: %v", path, err)
		}
		if len(certs) == 0 {
			return nil, fail("ssl.truststore.location", "%s holds no certificate", path)
		}
		cfg.RootCAs = x509.NewCertPool()
		for _, c := range certs {
			cfg.RootCAs.AddCert(c)
		}
	} else if _, ok := sec["ssl.truststore.password"]; ok {
		return nil, fail("ssl.truststore.password", "set without ssl.truststore.location")
	}
	if path := sec["ssl.keystore.location"]; path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fail("ssl.keystore.location", "%v", err)
		}
		certs, err := keystore.KeyStore(data, storeType("ssl.keystore.type"), sec["ssl.keystore.password"], sec["ssl.key.password"])
		if err != nil {
			return nil, fail("ssl.keystore.location", "%s: %v", path, err)
		}
		cfg.Certificates = certs
	} else {
		for _, k := range []string{"ssl.keystore.password", "ssl.key.password"} {
			if _, ok := sec[k]; ok {
				return nil, fail(k, "set without ssl.keystore.location")
			}
		}
	}
	switch alg := sec["ssl.endpoint.identification.algorithm"]; strings.ToLower(strings.TrimSpace(alg)) {
	case "https":
	case "":
		if _, set := sec["ssl.endpoint.identification.algorithm"]; set {
			// The chain is still checked; only the name is not.
			cfg.InsecureSkipVerify = true
			cfg.VerifyConnection = verifyChain(cfg.RootCAs)
		}
	default:
		return nil, fail("ssl.endpoint.identification.algorithm", "%q: want https, or empty to skip the host name check", alg)
	}
	return cfg, nil
}

// verifyChain checks the broker's chain against roots (the system's when
// nil), without its name.
func verifyChain(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the broker sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}
