package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/httpauth"
	"github.com/samsa-io/samsa/internal/keystore"
	"github.com/samsa-io/samsa/internal/schemaregistry"
	"github.com/samsa-io/samsa/internal/task"
)

// startRegistry runs the Schema Registry inside samsa serve when
// samsa.schema.registry.listener is set: a Kafka client of this broker's
// first PLAINTEXT listener, as it would be of any cluster. The listener
// is bound here (a port in use stops the start); the registry itself
// starts in the background and is handed to onReady once it answers (the
// broker's schema ID validation asks it). It returns a stop function and
// the registry's URL; nil, "", nil when the registry is off.
func startRegistry(b *broker.Broker, values config.Values, logger *slog.Logger, onReady func(*schemaregistry.Registry)) (func(), string, error) {
	listen := values.String("samsa.schema.registry.listener")
	if listen == "" {
		return nil, "", nil
	}
	seed := plaintextSeed(b)
	if seed == "" {
		if _, set := values.Given(config.SourceStaticBroker)["samsa.schema.registry.listener"]; !set {
			// Only the default asked for it: a broker whose listeners are
			// all secured still starts, and says why it runs no registry.
			logger.Info("schema registry off: the broker has no PLAINTEXT listener for it to reach the cluster through; run samsa registry with the client's security flags, or set samsa.schema.registry.listener= to say so",
				"component", "schemaregistry")
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("samsa.schema.registry.listener %s: the registry inside serve reaches the broker through a PLAINTEXT listener, and there is none; run samsa registry with the client's security flags instead, or set it empty", listen)
	}
	serverTLS, forwardTLS, err := registryTLS(values)
	if err != nil {
		return nil, "", err
	}
	auth, err := registryAuth(values, b)
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, "", fmt.Errorf("samsa.schema.registry.listener %s: %w", listen, err)
	}
	scheme := "http://"
	if serverTLS != nil {
		scheme = "https://"
	}
	cfg := schemaregistry.Config{
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(seed), kgo.ClientID("samsa-schema-registry")},
		Topic:      values.String("samsa.schema.registry.topic"),
		Logger:     logger,
		GroupID:    values.String("samsa.schema.registry.group.id"),
		URL:        scheme + ln.Addr().String(),
		TLS:        serverTLS,
		ForwardTLS: forwardTLS,
		Auth:       auth,
	}
	// The start goes on in the background, retried until the cluster can
	// hold the store (a node of a cluster still forming has fewer brokers
	// than the topic's replication factor): the broker does not wait for
	// it, and the listener answers "not ready" meanwhile.
	g := task.NewGroup(context.Background())
	g.Go(func(ctx context.Context) {
		err := schemaregistry.Run(ctx, ln, cfg, schemaregistry.RunOptions{Ready: func(reg *schemaregistry.Registry) {
			onReady(reg)
			logger.Info("schema registry serving", "component", "schemaregistry", "listener", ln.Addr().String(), "url", cfg.URL, "store", seed)
		}})
		if err != nil {
			logger.Error("schema registry stopped", "component", "schemaregistry", "err", err)
		}
	})
	logger.Info("schema registry starting", "component", "schemaregistry", "listener", ln.Addr().String(), "store", seed)
	return g.Stop, cfg.URL, nil
}

// plaintextSeed is the address of the broker's first PLAINTEXT listener,
// through which the services inside serve reach it; "" when it has none.
func plaintextSeed(b *broker.Broker) string {
	for _, l := range b.Listeners() {
		if l.SecurityProtocol == "PLAINTEXT" {
			return loopback(l)
		}
	}
	return ""
}

// registryTLS reads the samsa.schema.registry.ssl.* configs: nil, nil
// without a key store, and then none of the others may be set.
func registryTLS(values config.Values) (server, forward *tls.Config, err error) {
	return listenerTLS(values, "samsa.schema.registry.ssl.", "the Schema Registry")
}

// registryAuth reads the samsa.schema.registry.authentication.* configs:
// nil for NONE, which refuses the settings only BASIC uses.
func registryAuth(values config.Values, b *broker.Broker) (*httpauth.Auth, error) {
	auth, _, err := listenerAuth(values, "samsa.schema.registry.authentication.", b)
	return auth, err
}

// listenerTLS reads the TLS configs of a service's HTTP listener, named
// from p (samsa.schema.registry.ssl.): nil, nil without a key store, and
// then none of the others may be set.
func listenerTLS(values config.Values, p, service string) (server, forward *tls.Config, err error) {
	ksPath := values.String(p + "keystore.location")
	if ksPath == "" {
		for _, name := range []string{"keystore.password", "key.password", "truststore.location", "truststore.password", "client.authentication"} {
			if values.IsSet(p + name) {
				return nil, nil, fmt.Errorf("%s%s is set but %skeystore.location is not: %s serves plain HTTP without a key store", p, name, p, service)
			}
		}
		return nil, nil, nil
	}
	typ := values.String(p + "keystore.type")
	raw, err := os.ReadFile(ksPath)
	if err != nil {
		return nil, nil, fmt.Errorf("%skeystore.location: %w", p, err)
	}
	certs, err := keystore.KeyStore(raw, typ, values.String(p+"keystore.password"), values.String(p+"key.password"))
	if err != nil {
		return nil, nil, fmt.Errorf("%skeystore.location %s: %w", p, ksPath, err)
	}
	var cas []*x509.Certificate
	if tsPath := values.String(p + "truststore.location"); tsPath != "" {
		raw, err := os.ReadFile(tsPath)
		if err != nil {
			return nil, nil, fmt.Errorf("%struststore.location: %w", p, err)
		}
		if cas, err = keystore.TrustStore(raw, typ, values.String(p+"truststore.password")); err != nil {
			return nil, nil, fmt.Errorf("%struststore.location %s: %w", p, tsPath, err)
		}
		if len(cas) == 0 {
			return nil, nil, fmt.Errorf("%struststore.location %s holds no certificate", p, tsPath)
		}
	} else if values.IsSet(p + "truststore.password") {
		return nil, nil, fmt.Errorf("%struststore.password is set but %struststore.location is not", p, p)
	}
	server, forward, err = httpauth.ListenerTLS(certs, cas, values.String(p+"client.authentication"))
	if err != nil {
		return nil, nil, fmt.Errorf("%sclient.authentication: %w", p, err)
	}
	return server, forward, nil
}

// listenerAuth reads the basic authentication configs of a service's
// HTTP listener, named from p (samsa.schema.registry.authentication.):
// nil for NONE, which refuses the settings only BASIC uses. login is the
// SASL_PLAINTEXT listener users are checked against, nil without
// kafka.sasl.mechanism.
func listenerAuth(values config.Values, p string, b *broker.Broker) (auth *httpauth.Auth, login *broker.Listener, err error) {
	usersFile, mechanism := values.String(p+"users.file"), values.String(p+"kafka.sasl.mechanism")
	if values.String(p+"method") != "BASIC" {
		for _, name := range []string{"users.file", "kafka.sasl.mechanism", "realm", "roles"} {
			if values.IsSet(p + name) {
				return nil, nil, fmt.Errorf("%s%s is set but %smethod is NONE: set it to BASIC, or drop the setting", p, name, p)
			}
		}
		return nil, nil, nil
	}
	if usersFile == "" && mechanism == "" {
		return nil, nil, fmt.Errorf("%smethod=BASIC needs %susers.file or %skafka.sasl.mechanism to check users against", p, p, p)
	}
	auth = &httpauth.Auth{Realm: values.String(p + "realm"), Roles: values.List(p + "roles")}
	if usersFile != "" {
		users, err := httpauth.LoadUsers(usersFile)
		if err != nil {
			return nil, nil, fmt.Errorf("%susers.file: %w", p, err)
		}
		auth.Users = users
	}
	if mechanism != "" {
		l, err := saslListener(values, b, mechanism)
		if err != nil {
			return nil, nil, fmt.Errorf("%skafka.sasl.mechanism: %w", p, err)
		}
		if auth.Login, err = httpauth.KafkaLogin([]kgo.Opt{kgo.SeedBrokers(loopback(l))}, mechanism, 10*time.Second); err != nil {
			return nil, nil, fmt.Errorf("%skafka.sasl.mechanism: %w", p, err)
		}
		login = &l
	}
	return auth, login, nil
}

// saslListener is the listener a user is checked against and logs in to
// with mechanism: this broker's first SASL_PLAINTEXT listener, which must
// enable the mechanism.
func saslListener(values config.Values, b *broker.Broker, mechanism string) (broker.Listener, error) {
	for _, l := range b.Listeners() {
		if l.SecurityProtocol != "SASL_PLAINTEXT" {
			continue
		}
		enabled := values.List("listener.name." + strings.ToLower(l.Name) + ".sasl.enabled.mechanisms")
		if !slices.Contains(enabled, mechanism) {
			return broker.Listener{}, fmt.Errorf("listener %s does not enable %s (it enables %s)", l.Name, mechanism, strings.Join(enabled, ","))
		}
		return l, nil
	}
	return broker.Listener{}, errors.New("the broker has no SASL_PLAINTEXT listener to check users against")
}

// loopback is a listener's address, 127.0.0.1 when it listens on every
// address.
func loopback(l broker.Listener) string {
	host := l.Host
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(l.Port))
}
