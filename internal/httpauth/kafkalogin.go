package httpauth

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

// KafkaLogin is an Auth.Login that checks a user and password by logging
// in to the cluster with them: a connection through opts (seeds and TLS,
// no SASL of their own) authenticated by mechanism, PLAIN, SCRAM-SHA-256
// or SCRAM-SHA-512, then one metadata request. A service's users are
// then the cluster's principals. timeout bounds one login.
func KafkaLogin(opts []kgo.Opt, mechanism string, timeout time.Duration) (func(ctx context.Context, user, password string) error, error) {
	if _, err := Mechanism(mechanism, "", ""); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return func(ctx context.Context, user, password string) error {
		mech, err := Mechanism(mechanism, user, password)
		if err != nil {
			return err
		}
		cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...),
			kgo.SASL(mech), kgo.ClientID("samsa-http-auth"),
			kgo.RetryTimeout(timeout))...)
		if err != nil {
			return fmt.Errorf("httpauth: login client: %w", err)
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

// Mechanism is the SASL mechanism named (PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512, any case) logging in as user with password: how a
// service logs in to the cluster as the user a basic-auth header names.
func Mechanism(name, user, password string) (sasl.Mechanism, error) {
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "PLAIN":
		return plain.Auth{User: user, Pass: password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("httpauth: SASL mechanism %q cannot check a user and password: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", name)
}
