package streams

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Processing guarantees (processing.guarantee).
const (
	AtLeastOnce   = "at_least_once"
	ExactlyOnceV2 = "exactly_once_v2"
)

// DeserializationHandler is what happens to a record that does not
// deserialize (default.deserialization.exception.handler).
type DeserializationHandler int

const (
	// LogAndFail stops the application (Kafka's LogAndFailExceptionHandler,
	// the default).
	LogAndFail DeserializationHandler = iota
	// LogAndContinue logs, counts and skips the record
	// (LogAndContinueExceptionHandler).
	LogAndContinue
)

// Config is an application's configuration, with Kafka Streams' names in
// the comments; ParseConfig reads Kafka's properties.
type Config struct {
	ApplicationID       string   // application.id (required): the group ID and the prefix of internal topics
	BootstrapServers    []string // bootstrap.servers (required)
	ProcessingGuarantee string   // processing.guarantee: at_least_once (default) or exactly_once_v2
	NumStandbyReplicas  int      // num.standby.replicas (0)
	NumStreamThreads    int      // num.stream.threads (1)
	// CommitInterval is commit.interval.ms: 30 s, or 100 ms under
	// exactly_once_v2, when zero.
	CommitInterval time.Duration
	// CacheMaxBytes is statestore.cache.max.bytes (10 MiB when nil; 0
	// turns caching off so every update is forwarded).
	CacheMaxBytes *int64
	StateDir      string        // state.dir (<tmp>/kafka-streams)
	MaxTaskIdle   time.Duration // max.task.idle.ms (0); negative: never wait for empty partitions
	// ApplicationServer is application.server, host:port, published to the
	// other instances for interactive queries.
	ApplicationServer string
	ReplicationFactor int    // replication.factor of internal topics (-1: the broker's default)
	AutoOffsetReset   string // auto.offset.reset: earliest (Kafka Streams' default) or latest
	// DefaultTimestampExtractor is default.timestamp.extractor
	// (RecordTimestamp).
	DefaultTimestampExtractor TimestampExtractor
	DeserializationHandler    DeserializationHandler // default.deserialization.exception.handler
	// BufferedRecordsPerPartition pauses a partition's fetching when this
	// many records wait (buffered.records.per.partition, 1000).
	BufferedRecordsPerPartition int
	PollInterval                time.Duration // poll.ms (100 ms)
	// WindowStoreChangelogAdditionalRetention is
	// windowstore.changelog.additional.retention.ms (1 day).
	WindowStoreChangelogAdditionalRetention time.Duration
	// ClientOptions are franz-go options added to every client the
	// application makes (TLS, SASL, ...).
	ClientOptions []kgo.Opt
	// OuterJoinEmitInterval is Kafka's internal
	// __emit.interval.ms.kstreams.outer.join.spurious.results.fix__: left
	// and outer stream-stream joins look for unmatched records whose
	// window closed at most once per this much wall-clock time (1 s when
	// nil). 0 looks on every record, so the results depend on the input
	// alone (Kafka's TopologyTestDriver does that).
	OuterJoinEmitInterval *time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if c.ApplicationID == "" {
		return c, fmt.Errorf("streams: application.id is required")
	}
	if strings.ContainsAny(c.ApplicationID, " /\\") {
		return c, fmt.Errorf("streams: application.id %q must be usable as a topic name prefix", c.ApplicationID)
	}
	if len(c.BootstrapServers) == 0 {
		return c, fmt.Errorf("streams: bootstrap.servers is required")
	}
	switch c.ProcessingGuarantee {
	case "":
		c.ProcessingGuarantee = AtLeastOnce
	case AtLeastOnce, ExactlyOnceV2:
	case "exactly_once", "exactly_once_beta":
		return c, fmt.Errorf("streams: processing.guarantee %q was removed in Kafka 4.0; use exactly_once_v2", c.ProcessingGuarantee)
	default:
		return c, fmt.Errorf("streams: processing.guarantee %q is neither at_least_once nor exactly_once_v2", c.ProcessingGuarantee)
	}
	if c.NumStandbyReplicas < 0 {
		return c, fmt.Errorf("streams: num.standby.replicas %d is negative", c.NumStandbyReplicas)
	}
	if c.NumStreamThreads == 0 {
		c.NumStreamThreads = 1
	}
	if c.NumStreamThreads < 0 {
		return c, fmt.Errorf("streams: num.stream.threads %d is negative", c.NumStreamThreads)
	}
	if c.CommitInterval == 0 {
		c.CommitInterval = 30 * time.Second
		if c.ProcessingGuarantee == ExactlyOnceV2 {
			c.CommitInterval = 100 * time.Millisecond
		}
	}
	if c.CommitInterval < 0 {
		return c, fmt.Errorf("streams: commit.interval.ms %v is negative", c.CommitInterval)
	}
	if c.CacheMaxBytes == nil {
		v := int64(10 << 20)
		c.CacheMaxBytes = &v
	}
	if *c.CacheMaxBytes < 0 {
		return c, fmt.Errorf("streams: statestore.cache.max.bytes %d is negative", *c.CacheMaxBytes)
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Join(os.TempDir(), "kafka-streams")
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = -1
	}
	switch c.AutoOffsetReset {
	case "":
		c.AutoOffsetReset = "earliest"
	case "earliest", "latest":
	default:
		return c, fmt.Errorf("streams: auto.offset.reset %q is neither earliest nor latest", c.AutoOffsetReset)
	}
	if c.DefaultTimestampExtractor == nil {
		c.DefaultTimestampExtractor = RecordTimestamp
	}
	if c.BufferedRecordsPerPartition == 0 {
		c.BufferedRecordsPerPartition = 1000
	}
	if c.PollInterval == 0 {
		c.PollInterval = 100 * time.Millisecond
	}
	if c.WindowStoreChangelogAdditionalRetention == 0 {
		c.WindowStoreChangelogAdditionalRetention = 24 * time.Hour
	}
	if c.OuterJoinEmitInterval == nil {
		d := time.Duration(defaultOuterJoinEmitIntervalMs) * time.Millisecond
		c.OuterJoinEmitInterval = &d
	}
	if *c.OuterJoinEmitInterval < 0 {
		return c, fmt.Errorf("streams: %s %v is negative", outerJoinEmitIntervalConfig, *c.OuterJoinEmitInterval)
	}
	return c, nil
}

// ParseConfig reads Kafka Streams' properties. A property this library does
// not wire is refused by name rather than ignored.
func ParseConfig(props map[string]string) (Config, error) {
	var c Config
	ms := func(k, v string) (time.Duration, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("streams: %s=%q is not a number of milliseconds", k, v)
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	num := func(k, v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("streams: %s=%q is not a number", k, v)
		}
		return n, nil
	}
	var err error
	for k, v := range props {
		switch k {
		case "application.id":
			c.ApplicationID = v
		case "bootstrap.servers":
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					c.BootstrapServers = append(c.BootstrapServers, s)
				}
			}
		case "processing.guarantee":
			c.ProcessingGuarantee = v
		case "num.standby.replicas":
			c.NumStandbyReplicas, err = num(k, v)
		case "num.stream.threads":
			c.NumStreamThreads, err = num(k, v)
		case "commit.interval.ms":
			c.CommitInterval, err = ms(k, v)
			if err == nil && c.CommitInterval == 0 {
				c.CommitInterval = time.Millisecond
			}
		case "statestore.cache.max.bytes", "cache.max.bytes.buffering":
			var n int64
			n, err = strconv.ParseInt(v, 10, 64)
			if err != nil {
				err = fmt.Errorf("streams: %s=%q is not a number of bytes", k, v)
			}
			c.CacheMaxBytes = &n
		case "state.dir":
			c.StateDir = v
		case "max.task.idle.ms":
			c.MaxTaskIdle, err = ms(k, v)
			if err == nil && c.MaxTaskIdle < 0 {
				c.MaxTaskIdle = -1
			}
		case "application.server":
			c.ApplicationServer = v
		case "replication.factor":
			c.ReplicationFactor, err = num(k, v)
		case "auto.offset.reset", "consumer.auto.offset.reset":
			c.AutoOffsetReset = v
		case "default.deserialization.exception.handler", "deserialization.exception.handler":
			switch v {
			case "org.apache.kafka.streams.errors.LogAndFailExceptionHandler", "LogAndFail":
				c.DeserializationHandler = LogAndFail
			case "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler", "LogAndContinue":
				c.DeserializationHandler = LogAndContinue
			default:
				err = fmt.Errorf("streams: %s=%q: only LogAndFailExceptionHandler and LogAndContinueExceptionHandler exist here; set a Go handler in Config", k, v)
			}
		case "buffered.records.per.partition":
			c.BufferedRecordsPerPartition, err = num(k, v)
		case "poll.ms":
			c.PollInterval, err = ms(k, v)
		case "windowstore.changelog.additional.retention.ms":
			c.WindowStoreChangelogAdditionalRetention, err = ms(k, v)
		case outerJoinEmitIntervalConfig:
			var d time.Duration
			d, err = ms(k, v)
			c.OuterJoinEmitInterval = &d
		case "topology.optimization":
			if v != "none" {
				err = fmt.Errorf("streams: topology.optimization=%q: the builder does not merge repartition topics or reuse source topics as changelogs; use none", v)
			}
		default:
			err = fmt.Errorf("streams: property %q is not supported by this library; set the equivalent field of streams.Config (ClientOptions for client settings) instead", k)
		}
		if err != nil {
			return Config{}, err
		}
	}
	return c, nil
}
