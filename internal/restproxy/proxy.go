package restproxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/time/rate"

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
	// ProduceRateLimit bounds the records produced per second (each
	// record of a stream counts); past it a record is answered 429. Zero
	// is no limit; negative is refused.
	ProduceRateLimit float64
	// Logger gets the proxy's log lines (slog.Default when nil).
	Logger *slog.Logger
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
	cfg     Config
	shared  *kafkaClient
	limiter *rate.Limiter // nil: no produce rate limit
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
	if cfg.ProduceRateLimit < 0 || math.IsNaN(cfg.ProduceRateLimit) || math.IsInf(cfg.ProduceRateLimit, 0) {
		return nil, fmt.Errorf("restproxy: produce rate limit %g: must be a positive number of records per second, or 0 for none", cfg.ProduceRateLimit)
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
	opts := append(append([]kgo.Opt(nil), cfg.ClientOpts...),
		kgo.RecordPartitioner(partitioner{}),
		// Produce answers one request at a time: no lingering.
		kgo.ProducerLinger(0),
	)
	shared, err := newKafkaClient("", opts)
	if err != nil {
		return nil, err
	}
	return &Proxy{cfg: cfg, shared: shared, limiter: newProduceLimiter(cfg.ProduceRateLimit),
		consumers: newConsumerManager(cfg.ConsumerInstanceTimeout)}, nil
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

// Close closes every v2 consumer instance (each leaves its group) and
// then the Kafka client.
func (p *Proxy) Close() {
	p.consumers.close()
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

// Serve answers the API on ln until ctx ends, then lets requests in
// flight finish (up to 10s) and returns.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           p.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
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
