package connectrt

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// clientProps maps the Kafka producer and consumer properties a worker or
// connector may override (producer.*, consumer.*, *.override.*) to
// franz-go options. A property with no franz-go equivalent is refused by
// name rather than ignored.
func clientProps(props map[string]string) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	for _, k := range slices.Sorted(maps.Keys(props)) {
		v := strings.TrimSpace(props[k])
		o, err := clientProp(k, v)
		if err != nil {
			return nil, err
		}
		if o != nil {
			opts = append(opts, o)
		}
	}
	return opts, nil
}

func clientProp(k, v string) (kgo.Opt, error) {
	num := func() (int64, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s=%q: not a number", k, v)
		}
		return n, nil
	}
	switch k {
	case "linger.ms":
		n, err := num()
		return kgo.ProducerLinger(time.Duration(n) * time.Millisecond), err
	case "batch.size", "max.request.size":
		n, err := num()
		return kgo.ProducerBatchMaxBytes(int32(n)), err
	case "compression.type":
		c, err := compression(v)
		return kgo.ProducerBatchCompression(c), err
	case "acks":
		switch v {
		case "all", "-1":
			return kgo.RequiredAcks(kgo.AllISRAcks()), nil
		case "1":
			return kgo.RequiredAcks(kgo.LeaderAck()), nil
		case "0":
			return kgo.RequiredAcks(kgo.NoAck()), nil
		}
		return nil, fmt.Errorf("acks=%q: want all, -1, 1 or 0", v)
	case "enable.idempotence":
		if v == "false" {
			return kgo.DisableIdempotentWrite(), nil
		}
		return nil, nil
	case "max.in.flight.requests.per.connection":
		n, err := num()
		return kgo.MaxProduceRequestsInflightPerBroker(int(n)), err
	case "request.timeout.ms", "delivery.timeout.ms":
		n, err := num()
		return kgo.RecordDeliveryTimeout(time.Duration(n) * time.Millisecond), err
	case "fetch.max.bytes":
		n, err := num()
		return kgo.FetchMaxBytes(int32(n)), err
	case "max.partition.fetch.bytes":
		n, err := num()
		return kgo.FetchMaxPartitionBytes(int32(n)), err
	case "fetch.min.bytes":
		n, err := num()
		return kgo.FetchMinBytes(int32(n)), err
	case "fetch.max.wait.ms":
		n, err := num()
		return kgo.FetchMaxWait(time.Duration(n) * time.Millisecond), err
	case "session.timeout.ms":
		n, err := num()
		return kgo.SessionTimeout(time.Duration(n) * time.Millisecond), err
	case "heartbeat.interval.ms":
		n, err := num()
		return kgo.HeartbeatInterval(time.Duration(n) * time.Millisecond), err
	case "auto.offset.reset":
		switch v {
		case "earliest":
			return kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), nil
		case "latest":
			return kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), nil
		}
		return nil, fmt.Errorf("auto.offset.reset=%q: want earliest or latest", v)
	case "isolation.level":
		switch v {
		case "read_committed":
			return kgo.FetchIsolationLevel(kgo.ReadCommitted()), nil
		case "read_uncommitted":
			return kgo.FetchIsolationLevel(kgo.ReadUncommitted()), nil
		}
		return nil, fmt.Errorf("isolation.level=%q: want read_committed or read_uncommitted", v)
	case "client.id":
		return kgo.ClientID(v), nil
	case "max.poll.records":
		// Read by the sink loop itself (maxPollRecords); not a client option.
		if n, err := num(); err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: want a positive number", k, v)
		}
		return nil, nil
	}
	return nil, fmt.Errorf("client property %s is not supported by Samsa's Connect worker", k)
}

func compression(v string) (kgo.CompressionCodec, error) {
	switch v {
	case "none":
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
	return kgo.NoCompression(), fmt.Errorf("compression.type=%q: want none, gzip, snappy, lz4 or zstd", v)
}
