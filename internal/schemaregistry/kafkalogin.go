package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The SASL mechanisms KafkaLogin logs in with: those that carry a user
// and password, as a basic-auth header does.
var kafkaLoginMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// KafkaLogin is an Auth.Login that checks a user and password by logging
// in to the cluster with them: a connection through opts (seeds and TLS,
// no SASL of their own) authenticated by mechanism, PLAIN, SCRAM-SHA-256
// or SCRAM-SHA-512, then one metadata request. The registry's users are
// then the cluster's principals. timeout bounds one login.
func KafkaLogin(opts []kgo.Opt, mechanism string, timeout time.Duration) (func(ctx context.Context, user, password string) error, error) {
	mechanism = strings.ToUpper(strings.TrimSpace(mechanism))
	mech := func(user, password string) sasl.Mechanism {
		switch mechanism {
		case "SCRAM-SHA-256":
			return scram.Auth{User: user, Pass: password}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			return scram.Auth{User: user, Pass: password}.AsSha512Mechanism()
		}
		return plain.Auth{User: user, Pass: password}.AsMechanism()
	}
	valid := false
	for _, m := range kafkaLoginMechanisms {
		valid = valid || m == mechanism
	}
	if !valid {
		return nil, fmt.Errorf("schemaregistry: SASL mechanism %q cannot check a user and password: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mechanism)
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return func(ctx context.Context, user, password string) error {
		cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...),
			kgo.SASL(mech(user, password)), kgo.ClientID("samsa-schema-registry-auth"),
			kgo.RetryTimeout(timeout))...)
		if err != nil {
			return fmt.Errorf("schemaregistry: login client: %w", err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		err = cl.Ping(ctx)
		if errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.IllegalSaslState) {
			return fmt.Errorf("%w: %v", ErrLoginFailed, err)
		}
		return err
	}, nil
}
