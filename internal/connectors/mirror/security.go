package mirror

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-io/samsa/internal/jaas"
	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

// The mirrored clusters' security, from source.cluster.X and
// target.cluster.X with Kafka's client names: PLAINTEXT, or SASL_PLAINTEXT
// with PLAIN or SCRAM-SHA-256/512 and the credentials in sasl.jaas.config.
// TLS (SSL, SASL_SSL) is refused, as is every other setting: nothing a
// config says is dropped.

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
	switch protocol {
	case "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		return nil, fail("security.protocol", "%s: TLS to the mirrored clusters is not supported by the Connect form yet (samsa mirror supports it); PLAINTEXT and SASL_PLAINTEXT are", protocol)
	default:
		return nil, fail("security.protocol", "%q: want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", c.Security["security.protocol"])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Security)) {
		switch {
		case k == "security.protocol":
		case strings.HasPrefix(k, "ssl."):
			return nil, fail(k, "set, but security.protocol %s does not use TLS", protocol)
		case protocol == "PLAINTEXT":
			return nil, fail(k, "set, but security.protocol %s does not use SASL", protocol)
		case k != "sasl.mechanism" && k != "sasl.jaas.config":
			return nil, fail(k, "not supported: the Connect form reads sasl.mechanism and sasl.jaas.config")
		}
	}
	if protocol == "PLAINTEXT" {
		return nil, nil
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
		return []kgo.Opt{kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism())}, nil
	case "SCRAM-SHA-256":
		return []kgo.Opt{kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism())}, nil
	}
	return []kgo.Opt{kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism())}, nil
}
