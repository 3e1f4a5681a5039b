package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/httpauth"
	"github.com/samsa-io/samsa/internal/keystore"
	"github.com/samsa-io/samsa/internal/schemaregistry"
)

// newRegistryCommand runs Confluent's Schema Registry API against any
// Kafka cluster, its state in a compacted topic of that cluster.
func newRegistryCommand() *cobra.Command {
	var conn connection
	var listener, topic, group, advertised string
	var rf int16
	var lf registryListenerFlags
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Run a Schema Registry (Confluent's API) backed by a Kafka topic",
		Long: `Run a Schema Registry that speaks Confluent's REST API, with its schemas,
configs and modes kept in a compacted topic of the cluster (--topic, created
if missing). It works against any Kafka cluster. Several instances may share
a store topic: they elect one primary through a Kafka group (--group), and
the others forward writes to it. It serves until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := conn.clientOpts(cmd, nil)
			if err != nil {
				return err
			}
			serverTLS, forwardTLS, err := lf.tls()
			if err != nil {
				return err
			}
			auth, err := lf.auth(cmd, &conn)
			if err != nil {
				return err
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			ln, err := net.Listen("tcp", listener)
			if err != nil {
				return fmt.Errorf("registry: listen on %s: %w", listener, err)
			}
			defer ln.Close()
			url := advertised
			if url == "" {
				url = advertisedURL(ln.Addr().(*net.TCPAddr), serverTLS != nil)
			}
			reg, err := schemaregistry.New(schemaregistry.Config{
				ClientOpts:        opts,
				Topic:             topic,
				ReplicationFactor: rf,
				Timeout:           conn.timeout,
				Logger:            slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)),
				GroupID:           group,
				URL:               url,
				TLS:               serverTLS,
				ForwardTLS:        forwardTLS,
				Auth:              auth,
			})
			if err != nil {
				return err
			}
			defer reg.Close()
			startCtx, cancel := conn.opContext(ctx)
			err = reg.Start(startCtx)
			cancel()
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			scheme := "http"
			if serverTLS != nil {
				scheme = "https"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "schema registry serving on %s://%s (store topic %s)\n", scheme, ln.Addr(), topic)
			return reg.Serve(ctx, ln)
		},
	}
	conn.register(cmd)
	f := cmd.Flags()
	f.StringVar(&listener, "listener", "127.0.0.1:8081", "host:port the HTTP API listens on")
	f.StringVar(&topic, "topic", schemaregistry.DefaultTopic, "the store topic (Confluent's kafkastore.topic)")
	f.StringVar(&group, "group", "schema-registry",
		"Kafka group through which the instances sharing the store topic elect the one that writes (Confluent's schema.registry.group.id); empty: no election, and this must be the topic's only instance")
	f.StringVar(&advertised, "advertised-url", "",
		"URL the other instances forward writes to (default: http:// and the listener's address, the host name when it listens on all addresses)")
	f.Int16Var(&rf, "replication-factor", 0, "replication factor of the store topic when created; 0 takes the cluster's default.replication.factor")
	lf.register(f)
	return cmd
}

// registryListenerFlags secure the registry's own HTTP listener: TLS
// (Confluent's https listener and ssl.client.authentication) and basic
// authentication (authentication.method=BASIC).
type registryListenerFlags struct {
	tlsCert, tlsKey, tlsCA, clientAuth string
	users, kafkaMechanism, realm       string
	roles                              []string
}

func (l *registryListenerFlags) register(f *pflag.FlagSet) {
	f.StringVar(&l.tlsCert, "listener-tls-cert", "", "PEM file of the API's certificate chain, leaf first: serve https")
	f.StringVar(&l.tlsKey, "listener-tls-key", "", "PEM file of the API certificate's private key")
	f.StringVar(&l.tlsCA, "listener-tls-ca", "", "PEM file of the CAs client certificates are verified against, and other instances' certificates when writes are forwarded (default for forwarding: the system's)")
	f.StringVar(&l.clientAuth, "listener-tls-client-auth", "NONE", "client certificates on the API (Confluent's ssl.client.authentication): NONE, REQUESTED or REQUIRED (these need --listener-tls-ca)")
	f.StringVar(&l.users, "auth-users", "", "basic authentication: the users file, Jetty's PropertyFileLoginModule format (user: password[,role ...])")
	f.StringVar(&l.kafkaMechanism, "auth-kafka-mechanism", "", "basic authentication: check users not in --auth-users by a SASL login with their credentials to the cluster (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512), over the connection flags' TLS")
	f.StringVar(&l.realm, "auth-realm", "SchemaRegistry", "basic authentication: the realm of the challenge (Confluent's authentication.realm)")
	f.StringSliceVar(&l.roles, "auth-roles", []string{"*"}, "basic authentication: the roles allowed in, * for every user (Confluent's authentication.roles)")
}

// tls reads the --listener-tls-* flags: nil, nil for plain HTTP.
func (l *registryListenerFlags) tls() (server, forward *tls.Config, err error) {
	if l.tlsCert == "" && l.tlsKey == "" {
		if l.tlsCA != "" || !strings.EqualFold(l.clientAuth, "NONE") {
			return nil, nil, errors.New("--listener-tls-ca and --listener-tls-client-auth need --listener-tls-cert and --listener-tls-key")
		}
		return nil, nil, nil
	}
	if l.tlsCert == "" || l.tlsKey == "" {
		return nil, nil, errors.New("--listener-tls-cert and --listener-tls-key go together")
	}
	cert, err := os.ReadFile(l.tlsCert)
	if err != nil {
		return nil, nil, fmt.Errorf("--listener-tls-cert: %w", err)
	}
	key, err := os.ReadFile(l.tlsKey)
	if err != nil {
		return nil, nil, fmt.Errorf("--listener-tls-key: %w", err)
	}
	certs, err := keystore.KeyStore(append(append(key, '\n'), cert...), keystore.PEM, "", "")
	if err != nil {
		return nil, nil, fmt.Errorf("--listener-tls-cert and --listener-tls-key: %w", err)
	}
	var cas []*x509.Certificate
	if l.tlsCA != "" {
		raw, err := os.ReadFile(l.tlsCA)
		if err != nil {
			return nil, nil, fmt.Errorf("--listener-tls-ca: %w", err)
		}
		if cas, err = keystore.TrustStore(raw, keystore.PEM, ""); err != nil || len(cas) == 0 {
			return nil, nil, fmt.Errorf("--listener-tls-ca %s: no certificate read (%v)", l.tlsCA, err)
		}
	}
	server, forward, err = httpauth.ListenerTLS(certs, cas, l.clientAuth)
	if err != nil {
		return nil, nil, fmt.Errorf("--listener-tls-client-auth: %w", err)
	}
	return server, forward, nil
}

// auth reads the --auth-* flags: nil when neither a users file nor a
// Kafka mechanism asks for basic authentication.
func (l *registryListenerFlags) auth(cmd *cobra.Command, conn *connection) (*httpauth.Auth, error) {
	if l.users == "" && l.kafkaMechanism == "" {
		for _, name := range []string{"auth-realm", "auth-roles"} {
			if cmd.Flags().Changed(name) {
				return nil, fmt.Errorf("--%s needs --auth-users or --auth-kafka-mechanism", name)
			}
		}
		return nil, nil
	}
	a := &httpauth.Auth{Realm: l.realm, Roles: l.roles}
	if l.users != "" {
		users, err := httpauth.LoadUsers(l.users)
		if err != nil {
			return nil, fmt.Errorf("--auth-users: %w", err)
		}
		a.Users = users
	}
	if l.kafkaMechanism != "" {
		seeds, err := conn.seeds(cmd)
		if err != nil {
			return nil, err
		}
		sec, err := conn.secure(cmd)
		if err != nil {
			return nil, err
		}
		opts := []kgo.Opt{kgo.SeedBrokers(seeds...)} // the caller's own SASL, never the command's
		if sec.tls != nil {
			opts = append(opts, kgo.DialTLSConfig(sec.tls))
		}
		if a.Login, err = httpauth.KafkaLogin(opts, l.kafkaMechanism, conn.timeout); err != nil {
			return nil, fmt.Errorf("--auth-kafka-mechanism: %w", err)
		}
	}
	return a, nil
}

// advertisedURL is the URL of a listener for other instances: its address,
// or the host name when it listens on every address.
func advertisedURL(a *net.TCPAddr, https bool) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, strconv.Itoa(a.Port))
}
