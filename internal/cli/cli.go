package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/samsa-io/samsa/internal/clock"
)

// Defaults shared by every command.
const (
	defaultBootstrap = "127.0.0.1:9092"
	bootstrapEnv     = "SAMSA_BOOTSTRAP"
	defaultClientID  = "samsa-cli"
	defaultTimeout   = 30 * time.Second
	defaultLinger    = 10 * time.Millisecond // kgo's own default
)

// Commands returns the client-side commands of the samsa binary: topic,
// group, produce, consume, bench, cluster, acl, user, quota, feature,
// config, reassign, registry, schema and rest. Each call
// builds fresh commands with their own flag state, so tests can run many in
// one process.
func Commands() []*cobra.Command {
	return []*cobra.Command{
		newTopicCommand(),
		newGroupCommand(),
		newProduceCommand(),
		newConsumeCommand(),
		newBenchCommand(),
		newClusterCommand(),
		newACLCommand(),
		newUserCommand(),
		newQuotaCommand(),
		newFeatureCommand(),
		newConfigCommand(),
		newReassignCommand(),
		newRegistryCommand(),
		newSchemaCommand(),
		newRestCommand(),
		newConnectCommand(),
		newMirrorCommand(),
		newConsoleCommand(),
	}
}

// RejectUnknownSubcommands makes a command that only groups subcommands
// fail on a name that is none of them, suggesting the nearest ("samsa topic
// lst": did you mean list?). Cobra on its own does that only for the root
// command; a parent below it prints its help and exits 0. Without
// arguments the help is still printed.
func RejectUnknownSubcommands(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which it applies only on the root's own path
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + oneOf(s) + "?"
		}
		return fmt.Errorf("%s (see %s --help)", msg, cmd.CommandPath())
	}
}

// oneOf lists choices as "a", "a or b", "a, b or c".
func oneOf(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}

// connection holds the flags every parent command carries to reach a
// cluster.
type connection struct {
	bootstrap string
	clientID  string
	timeout   time.Duration
	clock     clock.Clock
	security  securityFlags
	// secured is the security flags resolved, once per command run.
	secured *securedOpts
}

// securedOpts are the TLS configuration (nil for none) and the SASL
// mechanism (nil for none) of the command's connections.
type securedOpts struct {
	tls  *tls.Config
	sasl sasl.Mechanism
}

func (c *connection) register(cmd *cobra.Command) {
	c.clock = clock.Real
	f := cmd.PersistentFlags()
	f.StringVar(&c.bootstrap, "bootstrap-server", defaultBootstrap,
		"comma-separated host:port list of brokers to start from (env "+bootstrapEnv+" when the flag is not given)")
	f.StringVar(&c.clientID, "client-id", defaultClientID, "client.id sent to the brokers")
	f.DurationVar(&c.timeout, "timeout", defaultTimeout,
		"how long the command waits for the cluster: an admin request, a record's acknowledgement, a fetch; "+
			"a run whose cluster stops answering for this long ends with an error")
	c.security.register(f)
}

// secure resolves the security flags on first use.
func (c *connection) secure(cmd *cobra.Command) (*securedOpts, error) {
	if c.secured != nil {
		return c.secured, nil
	}
	s, err := c.security.settings(cmd)
	if err != nil {
		return nil, err
	}
	cfg, err := s.tlsConfig()
	if err != nil {
		return nil, err
	}
	c.secured = &securedOpts{tls: cfg, sasl: s.saslMechanism(c.clock.Now)}
	return c.secured, nil
}

// seeds resolves the broker list: the flag if given, else the environment,
// else the default.
func (c *connection) seeds(cmd *cobra.Command) ([]string, error) {
	v := c.bootstrap
	if !cmd.Flags().Changed("bootstrap-server") {
		if env := strings.TrimSpace(os.Getenv(bootstrapEnv)); env != "" {
			v = env
		}
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--bootstrap-server is empty")
	}
	if c.timeout <= 0 {
		return nil, fmt.Errorf("--timeout must be positive, got %s", c.timeout)
	}
	return out, nil
}

// client builds a kgo client for the command. extra options come last and
// win.
func (c *connection) client(cmd *cobra.Command, extra ...kgo.Opt) (*kgo.Client, error) {
	return c.newClient(cmd, nil, extra...)
}

// clientWrapping is client with every connection to a broker wrapped by
// wrap, above TLS: produce reads the brokers' answers through it.
func (c *connection) clientWrapping(cmd *cobra.Command, wrap func(conn net.Conn, broker string) net.Conn, extra ...kgo.Opt) (*kgo.Client, error) {
	return c.newClient(cmd, wrap, extra...)
}

func (c *connection) newClient(cmd *cobra.Command, wrap func(net.Conn, string) net.Conn, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := c.clientOpts(cmd, wrap)
	if err != nil {
		return nil, err
	}
	opts = append(opts, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return cl, nil
}

// clientOpts are the options that reach the cluster as the flags say
// (seeds, client ID, retry timeout, TLS, SASL), for a command that builds
// its clients itself (registry).
func (c *connection) clientOpts(cmd *cobra.Command, wrap func(net.Conn, string) net.Conn) ([]kgo.Opt, error) {
	seeds, err := c.seeds(cmd)
	if err != nil {
		return nil, err
	}
	sec, err := c.secure(cmd)
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID(c.clientID),
		kgo.RetryTimeout(c.timeout),
	}
	if sec.sasl != nil {
		opts = append(opts, kgo.SASL(sec.sasl))
	}
	switch {
	case wrap != nil:
		d := &net.Dialer{Timeout: min(c.timeout, 10*time.Second)}
		opts = append(opts, kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			var conn net.Conn
			var err error
			if sec.tls != nil {
				conn, err = dialTLS(ctx, d, sec.tls, network, host)
			} else {
				conn, err = d.DialContext(ctx, network, host)
			}
			if err != nil {
				return nil, err
			}
			return wrap(conn, host), nil
		}))
	case sec.tls != nil:
		opts = append(opts, kgo.DialTLSConfig(sec.tls))
	}
	return opts, nil
}

// admin builds a kadm client whose broker-side timeouts follow --timeout.
func (c *connection) admin(cmd *cobra.Command) (*kadm.Client, error) {
	cl, err := c.client(cmd)
	if err != nil {
		return nil, err
	}
	return c.adminFor(cl), nil
}

// adminFor wraps an existing client; closing the result closes cl.
func (c *connection) adminFor(cl *kgo.Client) *kadm.Client {
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32(min(c.timeout.Milliseconds(), 1<<31-1)))
	return adm
}

// opContext bounds one administrative step by --timeout.
func (c *connection) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// reachErr turns transport failures into a sentence that names the
// bootstrap servers; Kafka errors pass through untouched.
func (c *connection) reachErr(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	seeds, _ := c.seeds(cmd)
	where := strings.Join(seeds, ",")
	var op *net.OpError
	var eof *kgo.ErrFirstReadEOF
	var certErr *tls.CertificateVerificationError
	var ke *kerr.Error
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("cannot connect to %s: %s", where, dialReason(err))
	case errors.As(err, &certErr):
		return fmt.Errorf("cannot connect to %s over TLS: %v", where, certErr)
	case errors.As(err, &eof):
		return fmt.Errorf("cannot talk to %s: %v (see --tls, --sasl-mechanism and --command-config)", where, eof)
	case errors.As(err, &ke) && ke == kerr.SaslAuthenticationFailed:
		return fmt.Errorf("SASL authentication failed at %s: %s", where, brokerDetail(err, ke))
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer from %s within %s (--timeout)", where, c.timeout)
	case errors.Is(err, context.Canceled):
		return errors.New("interrupted")
	}
	return err
}

// brokerDetail is the broker's message that kgo appended to a Kafka error
// ("SASL_AUTHENTICATION_FAILED: ...: <message>"), else the code's
// description.
func brokerDetail(err error, ke *kerr.Error) string {
	if msg, ok := strings.CutPrefix(err.Error(), ke.Error()+": "); ok && msg != "" {
		return msg
	}
	return ke.Description
}

// signalContext is cancelled on SIGINT or SIGTERM so long-running commands
// (consume --follow, bench) stop cleanly and still print their summary.
func signalContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
}

// kafkaReason renders a Kafka error as "lower-case name: detail", where the
// detail is the broker's own message when it sent one, else kerr's
// description of the code. Other errors are rendered as they are.
func kafkaReason(err error, brokerMessage string) string {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err.Error()
	}
	name := strings.ToLower(strings.ReplaceAll(ke.Message, "_", " "))
	detail := strings.TrimSpace(brokerMessage)
	if detail == "" {
		detail = ke.Description
	}
	return name + ": " + detail
}

// topicErr names the topic in an error and translates the common Kafka codes
// into plain sentences.
func topicErr(topic string, err error, brokerMessage string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return fmt.Errorf("topic %q does not exist", topic)
	case errors.Is(err, kerr.TopicAlreadyExists):
		return fmt.Errorf("topic %q already exists", topic)
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return fmt.Errorf("not authorized to access topic %q", topic)
	}
	return fmt.Errorf("topic %q: %s", topic, kafkaReason(err, brokerMessage))
}

// errNoTopic marks a topic that does not exist.
var errNoTopic = errors.New("does not exist")

// topicMetadata loads one topic's metadata and fails with a clear sentence
// when the topic is missing.
func topicMetadata(ctx context.Context, adm *kadm.Client, topic string) (kadm.TopicDetail, error) {
	tds, err := adm.ListTopicsWithInternal(ctx, topic)
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	td, ok := tds[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return kadm.TopicDetail{}, fmt.Errorf("topic %q %w", topic, errNoTopic)
	}
	if td.Err != nil {
		return kadm.TopicDetail{}, topicErr(topic, td.Err, "")
	}
	if len(td.Partitions) == 0 {
		return kadm.TopicDetail{}, fmt.Errorf("topic %q has no partitions", topic)
	}
	return td, nil
}

// waitForLeaders waits until every partition of a new topic has a leader
// and returns how many partitions it has. It asks a broker directly: kadm's
// listing would answer from the client's metadata cache, which still holds
// "unknown topic" from before the topic was created.
func waitForLeaders(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if n := ledPartitions(ctx, cl, topic); n > 0 {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}

// ledPartitions is the number of partitions of topic when every one has a
// leader, else 0.
func ledPartitions(ctx context.Context, cl *kgo.Client, topic string) int {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) == 0 {
		return 0
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 || p.Leader < 0 {
			return 0
		}
	}
	return len(resp.Topics[0].Partitions)
}

// checkPartition fails when p is not a partition of td.
func checkPartition(td kadm.TopicDetail, p int32) error {
	if _, ok := td.Partitions[p]; !ok {
		return fmt.Errorf("topic %q has no partition %d (it has %d)", td.Topic, p, len(td.Partitions))
	}
	return nil
}

// parseKeyValue splits "k=v" on the first '='; what names the flag in the
// error.
func parseKeyValue(what, s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", fmt.Errorf("invalid %s %q: want key=value", what, s)
	}
	return k, v, nil
}

// parseAcks maps --acks to a kgo setting.
func parseAcks(s string) (kgo.Acks, error) {
	switch strings.ToLower(s) {
	case "0":
		return kgo.NoAck(), nil
	case "1":
		return kgo.LeaderAck(), nil
	case "all", "-1":
		return kgo.AllISRAcks(), nil
	}
	return kgo.Acks{}, fmt.Errorf("invalid --acks %q: want 0, 1 or all", s)
}

// parseCompression maps --compression to a kgo codec.
func parseCompression(s string) (kgo.CompressionCodec, error) {
	switch strings.ToLower(s) {
	case "none", "":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("invalid --compression %q: want none, gzip, snappy, lz4 or zstd", s)
}

// defaultBatchSize is franz-go's bound on a record batch, and Kafka's
// max.message.bytes default: the largest batch a broker takes by default.
const defaultBatchSize = 1000012

// Bounds franz-go puts on its batch size.
const (
	minBatchSize = 512
	maxBatchSize = 1 << 30
)

// registerBatchSize adds --batch-size, the producers' one name for the
// bound: Kafka's producer config is batch.size, and kafka-console-producer
// takes --batch-size.
func registerBatchSize(f *pflag.FlagSet, p *int32) {
	f.Int32Var(p, "batch-size", defaultBatchSize, fmt.Sprintf(
		"largest record batch in bytes, %d to %d (Kafka's batch.size); a record that does not fit in one alone is refused",
		minBatchSize, maxBatchSize))
}

// producerOpts turns the shared producer flags into kgo options. Acks other
// than all need the idempotent producer off: Kafka's idempotence requires
// acks=all.
func producerOpts(acks, compression string, linger time.Duration, batchSize int32) ([]kgo.Opt, error) {
	a, err := parseAcks(acks)
	if err != nil {
		return nil, err
	}
	codec, err := parseCompression(compression)
	if err != nil {
		return nil, err
	}
	if linger < 0 {
		return nil, fmt.Errorf("invalid --linger %s: must not be negative", linger)
	}
	if batchSize < minBatchSize || batchSize > maxBatchSize {
		return nil, fmt.Errorf("invalid --batch-size %d: want %d to %d bytes", batchSize, minBatchSize, maxBatchSize)
	}
	opts := []kgo.Opt{
		kgo.RequiredAcks(a),
		kgo.ProducerBatchCompression(codec),
		kgo.ProducerLinger(linger),
		kgo.ProducerBatchMaxBytes(batchSize),
	}
	if a != kgo.AllISRAcks() {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return opts, nil
}

// joinErrors keeps several failures on one line, as every error of this
// package is. Nil errors are skipped.
func joinErrors(errs []error) error {
	var parts []string
	var only error
	for _, err := range errs {
		if err != nil {
			parts = append(parts, err.Error())
			only = err
		}
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return only
	}
	return errors.New(strings.Join(parts, "; "))
}
