package restproxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/httpauth"
	"github.com/samsa-io/samsa/internal/task"
)

// DefaultMaxBody is the request body limit when Config.MaxBody is zero:
// a proxy that reads an unbounded body is a proxy out of memory, and a
// single produce request larger than Kafka's default message.max.bytes
// (about 1 MiB) would be refused by the broker anyway.
const DefaultMaxBody = 2 << 20

// Config is what a Proxy needs.
type Config struct {
	// ClientOpts reach the cluster: seed brokers, TLS, SASL. The proxy
	// adds its own partitioner; nothing else is overridden.
	ClientOpts []kgo.Opt
	// MaxBody bounds a request body in bytes (413 past it);
	// DefaultMaxBody when zero, refused when negative.
	MaxBody int64
	// Timeout bounds one Kafka operation of a request; 30s when zero.
	Timeout time.Duration
	// ProduceRateLimit bounds the records produced per second by one
	// principal (each record of a stream counts); past it a record is
	// answered 429. Without Auth every request is one principal. Zero is
	// no limit; negative is refused.
	ProduceRateLimit float64
	// RequestRateLimit bounds the HTTP requests per second of one
	// principal (429 past it); zero is no limit.
	RequestRateLimit float64
	// TLS, when set, makes Serve answer https only
	// (httpauth.ListenerTLS: certificate, client authentication).
	TLS *tls.Config
	// Auth, when set, requires HTTP basic authentication on every
	// request (httpauth.Auth: a users file, or a login to the cluster).
	Auth *httpauth.Auth
	// PrincipalMechanism is the SASL mechanism (PLAIN, SCRAM-SHA-256,
	// SCRAM-SHA-512) a REST user that Auth.Login accepted logs in to the
	// cluster with: every request of that user runs with a Kafka client
	// of its own, so the cluster's ACLs apply to it. Required with
	// Auth.Login, refused without it.
	PrincipalMechanism string
	// PrincipalClientOpts reach the listener those clients log in to
	// (seed brokers, TLS; no SASL of their own).
	PrincipalClientOpts []kgo.Opt
	// MaxPrincipalClients bounds the per-principal clients kept
	// (DefaultMaxPrincipalClients when zero); PrincipalClientIdle is how
	// long an unused one is kept (DefaultPrincipalClientIdle when zero).
	MaxPrincipalClients int
	PrincipalClientIdle time.Duration
	// Logger gets the proxy's log lines (slog.Default when nil).
	Logger *slog.Logger
	// SchemaRegistryURL is the Schema Registry the schema formats (avro,
	// jsonschema, protobuf) go through, Confluent's schema.registry.url:
	// one URL or several comma-separated, http:// or https:// (the
	// system's CAs). Empty: those formats are refused as Confluent refuses
	// them without a registry (422).
	SchemaRegistryURL string
	// SchemaRegistryUser and SchemaRegistryPassword are the registry's
	// HTTP basic auth (Confluent's basic.auth.user.info); none when the
	// user is empty.
	SchemaRegistryUser, SchemaRegistryPassword string

	// clock is the pool's clock (clock.Real when nil): tests move it.
	clock clock.Clock
	// ConsumerInstanceTimeout is Confluent's consumer.instance.timeout.ms:
	// a v2 consumer instance idle this long is closed (it leaves its
	// group). DefaultConsumerInstanceTimeout when zero; negative refused.
	ConsumerInstanceTimeout time.Duration
	// AdvertisedURL is the URL clients reach this proxy at (scheme and
	// host, e.g. https://rest-1.example:8082), the start of a v2
	// consumer instance's base_uri. Empty: the request's scheme and Host.
	AdvertisedURL string
}

// Proxy answers Confluent's REST Proxy API with one Kafka client.
type Proxy struct {
	cfg    Config
	shared *kafkaClient
	limits *limits
	pool   *clientPool // nil: every request runs with shared
	tasks  *task.Group // the pool's sweeping; nil without a pool
	// registry is nil without Config.SchemaRegistryURL.
	registry *registry
	// consumers are the v2 consumer instances made on this proxy.
	consumers *consumerManager
}

// kafkaClient is one Kafka identity's way to the cluster: its client, its
// admin client over it, and the topic metadata its produces check paths
// against (kept per identity, as what a principal may see differs).
type kafkaClient struct {
	// principal names the identity ("" for the proxy's own): what owns a
	// consumer instance made with it.
	principal string
	// opts are the options client was made with (seeds, TLS, SASL), for
	// the other clients made as this identity (a v2 consumer instance's).
	opts     []kgo.Opt
	client   *kgo.Client
	admin    *kadm.Client
	metadata metadataCache
}

func newKafkaClient(principal string, opts []kgo.Opt) (*kafkaClient, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("restproxy: kafka client: %w", err)
	}
	return &kafkaClient{principal: principal, opts: opts, client: cl, admin: kadm.NewClient(cl)}, nil
}

// kafkaKey keys the Kafka client a request runs with in its context.
type kafkaKey struct{}

// withKafka gives a request's context the Kafka client its operations
// run with (the authenticated principal's).
func withKafka(ctx context.Context, kc *kafkaClient) context.Context {
	return context.WithValue(ctx, kafkaKey{}, kc)
}

// kafka is the Kafka client an operation runs with: the one the request's
// context carries, else the proxy's own.
func (p *Proxy) kafka(ctx context.Context) *kafkaClient {
	if kc, ok := ctx.Value(kafkaKey{}).(*kafkaClient); ok {
		return kc
	}
	return p.shared
}

// New checks cfg and makes the proxy's Kafka client. No connection is made
// until the first request (or Ping).
func New(cfg Config) (*Proxy, error) {
	if cfg.MaxBody < 0 {
		return nil, fmt.Errorf("restproxy: max body %d: must not be negative", cfg.MaxBody)
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("restproxy: timeout %s: must not be negative", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if err := checkRate("produce rate limit", cfg.ProduceRateLimit); err != nil {
		return nil, err
	}
	if err := checkRate("request rate limit", cfg.RequestRateLimit); err != nil {
		return nil, err
	}
	if err := checkPrincipals(&cfg); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ConsumerInstanceTimeout < 0 {
		return nil, fmt.Errorf("restproxy: consumer instance timeout %s: must not be negative", cfg.ConsumerInstanceTimeout)
	}
	if cfg.ConsumerInstanceTimeout == 0 {
		cfg.ConsumerInstanceTimeout = DefaultConsumerInstanceTimeout
	}
	if err := checkAdvertisedURL(cfg.AdvertisedURL); err != nil {
		return nil, err
	}
	var reg *registry
	if cfg.SchemaRegistryURL != "" {
		var err error
		if reg, err = newRegistry(cfg.SchemaRegistryURL, cfg.SchemaRegistryUser, cfg.SchemaRegistryPassword); err != nil {
			return nil, err
		}
	} else if cfg.SchemaRegistryUser != "" || cfg.SchemaRegistryPassword != "" {
		return nil, errors.New("restproxy: a schema registry user or password without a schema registry url")
	}
	opts := append(append([]kgo.Opt(nil), cfg.ClientOpts...), producerOpts()...)
	shared, err := newKafkaClient("", opts)
	if err != nil {
		return nil, err
	}
	p := &Proxy{cfg: cfg, shared: shared, limits: newLimits(cfg.ProduceRateLimit, cfg.RequestRateLimit), registry: reg,
		consumers: newConsumerManager(cfg.ConsumerInstanceTimeout)}
	if cfg.PrincipalMechanism != "" {
		popts := append(append([]kgo.Opt(nil), cfg.PrincipalClientOpts...), producerOpts()...)
		p.pool = newClientPool(popts, cfg.PrincipalMechanism, cfg.MaxPrincipalClients, cfg.PrincipalClientIdle)
		if cfg.clock != nil {
			p.pool.clock = cfg.clock
		}
		p.startPool()
	}
	return p, nil
}

// producerOpts are the options every client of the proxy produces with.
func producerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.RecordPartitioner(partitioner{}),
		// Produce answers one request at a time: no lingering.
		kgo.ProducerLinger(0),
	}
}

// checkPrincipals checks the per-principal client settings and fills
// their defaults: they go with a login to the cluster, and only with it.
func checkPrincipals(cfg *Config) error {
	login := cfg.Auth != nil && cfg.Auth.Login != nil
	switch {
	case login && cfg.PrincipalMechanism == "":
		return errors.New("restproxy: users checked by a login to the cluster need the SASL mechanism their requests log in with (PrincipalMechanism)")
	case !login && cfg.PrincipalMechanism != "":
		return fmt.Errorf("restproxy: principal mechanism %s is set but users are not checked against the cluster: per-principal Kafka clients need basic authentication by a Kafka login", cfg.PrincipalMechanism)
	case cfg.MaxPrincipalClients < 0:
		return fmt.Errorf("restproxy: max principal clients %d: must not be negative", cfg.MaxPrincipalClients)
	case cfg.PrincipalClientIdle < 0:
		return fmt.Errorf("restproxy: principal client idle time %s: must not be negative", cfg.PrincipalClientIdle)
	}
	if login {
		if _, err := httpauth.Mechanism(cfg.PrincipalMechanism, "", ""); err != nil {
			return fmt.Errorf("restproxy: %w", err)
		}
	}
	if cfg.MaxPrincipalClients == 0 {
		cfg.MaxPrincipalClients = DefaultMaxPrincipalClients
	}
	if cfg.PrincipalClientIdle == 0 {
		cfg.PrincipalClientIdle = DefaultPrincipalClientIdle
	}
	return nil
}

// checkAdvertisedURL takes an http or https URL with a host and no query.
func checkAdvertisedURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("restproxy: advertised URL %q: want http://host:port or https://host:port", s)
	}
	return nil
}

// Close closes every v2 consumer instance (each leaves its group), the
// proxy's Kafka client and every per-principal one.
func (p *Proxy) Close() {
	p.consumers.close()
	if p.pool != nil {
		p.tasks.Stop()
		p.pool.close()
	}
	p.shared.client.Close()
}

// Ping checks the cluster answers, so a command fails fast on a wrong
// bootstrap address.
func (p *Proxy) Ping(ctx context.Context) error {
	if _, err := p.shared.admin.BrokerMetadata(ctx); err != nil {
		return fmt.Errorf("restproxy: reach the cluster: %w", err)
	}
	return nil
}

// opContext bounds one Kafka operation of a request.
func (p *Proxy) opContext(req *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(req.Context(), p.cfg.Timeout)
}

// Service is the API with the service in front of it: basic
// authentication, the request's principal and its Kafka client, the
// per-principal request rate limit. Handler alone is the bare API.
func (p *Proxy) Service() http.Handler { return p.withPrincipal(p.Handler()) }

// Serve answers the API (Service) on ln until ctx ends, over TLS when
// Config.TLS is set, then lets requests in flight finish (up to 10s) and
// returns.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           p.Service(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if p.cfg.TLS != nil {
		ln = tls.NewListener(ln, p.cfg.TLS)
	}
	g := task.NewGroup(ctx)
	g.Go(func(ctx context.Context) {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut) // a request still running after 10s is cut off by Close below
		srv.Close()
	})
	err := srv.Serve(ln)
	g.Stop()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
