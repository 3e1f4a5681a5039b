package mirror

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The client overrides of mm2.properties (<alias>.producer.X,
// <alias>.consumer.X, <alias>.admin.X), which mirrorconf accepts only from
// a known list, become franz-go options here, appended after the
// runtime's own so the user's win, as in Kafka's MirrorMaker. The few that
// would break a mode's guarantee are refused when the mirror starts
// (checkOverrides).

type role string

const (
	roleProducer role = "producer"
	roleConsumer role = "consumer"
	roleAdmin    role = "admin"
)

func (fl *flow) overrides(cluster string, r role) map[string]string {
	c := fl.opts.Config.Clusters[cluster]
	if c == nil {
		return nil
	}
	switch r {
	case roleProducer:
		return c.Producer
	case roleConsumer:
		return c.Consumer
	}
	return c.Admin
}

// roleClient is a client of a cluster for a role, with the role's overrides.
func (fl *flow) roleClient(cluster string, r role, opts ...kgo.Opt) (*kgo.Client, error) {
	more, err := overrideOpts(fl.overrides(cluster, r), r)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	return fl.client(cluster, append(opts, more...)...)
}

func ms(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	return time.Duration(n) * time.Millisecond, err
}

// overrideOpts maps one role's overrides. mirrorconf has checked each
// value's form.
func overrideOpts(m map[string]string, r role) ([]kgo.Opt, error) {
	var out []kgo.Opt
	for k, v := range m {
		n, _ := strconv.ParseInt(v, 10, 64)
		d, _ := ms(v)
		switch k {
		case "client.id":
			out = append(out, kgo.ClientID(v))
		case "bootstrap.servers":
			var seeds []string
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					seeds = append(seeds, s)
				}
			}
			out = append(out, kgo.SeedBrokers(seeds...))
		case "retry.backoff.ms":
			out = append(out, kgo.RetryBackoffFn(func(int) time.Duration { return d }))
		case "request.timeout.ms":
			if r == roleProducer {
				out = append(out, kgo.ProduceRequestTimeout(d))
			} else {
				out = append(out, kgo.RequestTimeoutOverhead(d))
			}
		case "default.api.timeout.ms":
			out = append(out, kgo.RetryTimeout(d))
		// producer
		case "acks":
			switch v {
			case "all", "-1":
				out = append(out, kgo.RequiredAcks(kgo.AllISRAcks()))
			case "1":
				out = append(out, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
			case "0":
				out = append(out, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
			}
		case "compression.type":
			c := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
				"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}[v]
			out = append(out, kgo.ProducerBatchCompression(c))
		case "linger.ms":
			out = append(out, kgo.ProducerLinger(d))
		case "batch.size":
			out = append(out, kgo.ProducerBatchMaxBytes(int32(n)))
		case "max.request.size":
			out = append(out, kgo.BrokerMaxWriteBytes(int32(n)))
		case "buffer.memory":
			out = append(out, kgo.MaxBufferedBytes(int(n)))
		case "delivery.timeout.ms":
			out = append(out, kgo.RecordDeliveryTimeout(d))
		case "max.in.flight.requests.per.connection":
			out = append(out, kgo.MaxProduceRequestsInflightPerBroker(int(n)))
		case "enable.idempotence":
			if v == "false" {
				out = append(out, kgo.DisableIdempotentWrite())
			}
		case "retries":
			out = append(out, kgo.RecordRetries(int(n)))
		case "transaction.timeout.ms":
			out = append(out, kgo.TransactionTimeout(d))
		// consumer
		case "isolation.level":
			if v == "read_uncommitted" {
				out = append(out, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
			} else {
				out = append(out, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			}
		case "auto.offset.reset":
			if v == "latest" {
				out = append(out, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
			} else {
				out = append(out, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			}
		case "fetch.min.bytes":
			out = append(out, kgo.FetchMinBytes(int32(n)))
		case "fetch.max.bytes":
			out = append(out, kgo.FetchMaxBytes(int32(n)))
		case "max.partition.fetch.bytes":
			out = append(out, kgo.FetchMaxPartitionBytes(int32(n)))
		case "fetch.max.wait.ms":
			out = append(out, kgo.FetchMaxWait(d))
		case "client.rack":
			out = append(out, kgo.Rack(v))
		case "max.poll.records", "enable.auto.commit":
			// max.poll.records sizes the copier's polls (pollRecords);
			// auto-commit is always off (mirrorconf accepts only false).
		default:
			return nil, fmt.Errorf("%s.%s is not mapped to a client option", r, k)
		}
	}
	return out, nil
}

// workerInt is a Connect worker setting of the target cluster
// (mirrorconf's workerSettings), or def when unset.
func (fl *flow) workerInt(key string, def int64) int64 {
	if c := fl.opts.Config.Clusters[fl.cfg.Target]; c != nil {
		if n, err := strconv.ParseInt(c.Worker[key], 10, 64); err == nil {
			return n
		}
	}
	return def
}

// progressInterval is offset.flush.interval.ms of the target's worker
// settings, else Options.ProgressInterval.
func (fl *flow) progressInterval() time.Duration {
	if n := fl.workerInt("offset.flush.interval.ms", 0); n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	return fl.opts.ProgressInterval
}

// pollRecords is how many records the copier takes per poll: the source
// consumer's max.poll.records, else 20,000.
func (fl *flow) pollRecords() int {
	if v, ok := fl.overrides(fl.cfg.Source, roleConsumer)["max.poll.records"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return 20_000
}

// checkOverrides refuses the overrides that would break what the flow
// promises: an offset-preserving or exactly-once copy reads only committed
// records and writes with acks=all.
func checkOverrides(fl *flow) error {
	cons := fl.overrides(fl.cfg.Source, roleConsumer)
	prod := fl.overrides(fl.cfg.Target, roleProducer)
	if fl.cfg.OffsetPreserving || fl.cfg.ExactlyOnce {
		mode := "exactly-once"
		if fl.cfg.OffsetPreserving {
			mode = "offset-preserving"
		}
		if cons["isolation.level"] == "read_uncommitted" {
			return fmt.Errorf("%s: %s.consumer.isolation.level=read_uncommitted: a %s flow copies committed records only", fl.name, fl.cfg.Source, mode)
		}
		if a := prod["acks"]; a != "" && a != "all" && a != "-1" {
			return fmt.Errorf("%s: %s.producer.acks=%s: a %s flow writes with acks=all", fl.name, fl.cfg.Target, a, mode)
		}
		if prod["enable.idempotence"] == "false" && fl.cfg.ExactlyOnce {
			return fmt.Errorf("%s: %s.producer.enable.idempotence=false: transactions need idempotence", fl.name, fl.cfg.Target)
		}
	}
	for _, r := range []role{roleProducer, roleConsumer, roleAdmin} {
		for _, c := range []string{fl.cfg.Source, fl.cfg.Target} {
			if _, err := overrideOpts(fl.overrides(c, r), r); err != nil {
				return fmt.Errorf("%s: cluster %s: %w", fl.name, c, err)
			}
		}
	}
	return nil
}
