package txn

import (
	"time"

	"github.com/samsa-io/samsa/internal/config"
)

// Config holds the coordinator's settings. Each field names the Kafka broker
// config it comes from and its default; ConfigFrom reads them from the
// broker's resolved config, DefaultConfig returns Kafka's defaults.
type Config struct {
	// MaxTimeout is the largest transaction.timeout.ms a producer may ask
	// for (INVALID_TRANSACTION_TIMEOUT beyond). transaction.max.timeout.ms
	// (15m).
	MaxTimeout time.Duration
	// TransactionalIDExpiration is how long a transactional ID with no
	// transaction in progress is kept without a status update.
	// transactional.id.expiration.ms (7 days).
	TransactionalIDExpiration time.Duration
	// NumPartitions is the partition count of __transaction_state, which
	// PartitionFor hashes transactional IDs over.
	// transaction.state.log.num.partitions (50).
	NumPartitions int32
	// AbortTimedOutInterval is how often transactions past their timeout
	// are aborted, and prepared ones whose markers failed retried.
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (10s).
	AbortTimedOutInterval time.Duration
	// RemoveExpiredInterval is how often expired transactional IDs are
	// removed. transaction.remove.expired.transaction.cleanup.interval.ms
	// (1h).
	RemoveExpiredInterval time.Duration
	// ProducerIDExpiration is producer.id.expiration.ms (1 day): how long
	// a partition keeps the idempotence state of a silent producer. The
	// coordinator does not use it; it is here so the broker reads every
	// transaction setting from one place and hands it to storage.
	ProducerIDExpiration time.Duration
	// WriteTimeout bounds each append to __transaction_state. Samsa's own;
	// 5s, as offsets.commit.timeout.ms for the group coordinator.
	WriteTimeout time.Duration
	// MarkerTimeout bounds one WriteMarkers call. Kafka's markers go out
	// with request.timeout.ms; 30s.
	MarkerTimeout time.Duration
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		MaxTimeout:                15 * time.Minute,
		TransactionalIDExpiration: 7 * 24 * time.Hour,
		NumPartitions:             50,
		AbortTimedOutInterval:     10 * time.Second,
		RemoveExpiredInterval:     time.Hour,
		ProducerIDExpiration:      24 * time.Hour,
		WriteTimeout:              5 * time.Second,
		MarkerTimeout:             30 * time.Second,
	}
}

// ConfigFrom reads the coordinator's settings from the broker's config.
func ConfigFrom(v config.Values) Config {
	ms := func(name string) time.Duration { return time.Duration(v.Int(name)) * time.Millisecond }
	c := DefaultConfig()
	c.MaxTimeout = ms("transaction.max.timeout.ms")
	c.TransactionalIDExpiration = ms("transactional.id.expiration.ms")
	c.NumPartitions = v.Int("transaction.state.log.num.partitions")
	c.AbortTimedOutInterval = ms("transaction.abort.timed.out.transaction.cleanup.interval.ms")
	c.RemoveExpiredInterval = ms("transaction.remove.expired.transaction.cleanup.interval.ms")
	c.ProducerIDExpiration = ms("producer.id.expiration.ms")
	return c
}

// fill replaces unusable values with defaults, so a zero Config works.
func (c *Config) fill() {
	d := DefaultConfig()
	set := func(p *time.Duration, def time.Duration) {
		if *p <= 0 {
			*p = def
		}
	}
	set(&c.MaxTimeout, d.MaxTimeout)
	set(&c.TransactionalIDExpiration, d.TransactionalIDExpiration)
	set(&c.AbortTimedOutInterval, d.AbortTimedOutInterval)
	set(&c.RemoveExpiredInterval, d.RemoveExpiredInterval)
	set(&c.ProducerIDExpiration, d.ProducerIDExpiration)
	set(&c.WriteTimeout, d.WriteTimeout)
	set(&c.MarkerTimeout, d.MarkerTimeout)
	if c.NumPartitions <= 0 {
		c.NumPartitions = d.NumPartitions
	}
}
