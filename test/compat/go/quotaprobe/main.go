// Command quotaprobe is librdkafka's side of the client quota test
// (internal/broker/e2e_quotas_test.go, TestQuotasHoldWithLibrdkafka),
// through confluent-kafka-go: it produces to or consumes from a topic as
// fast as the broker lets it, as one client ID, and prints how many value
// bytes the broker acknowledged or the consumer received over a
// measured stretch after a warm-up.
//
// Usage: quotaprobe produce|consume BOOTSTRAP TOPIC CLIENT_ID WARMUP MEASURE,
// the two durations as Go writes them (10s). It prints "bytes N seconds S".
package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

func main() {
	if len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: quotaprobe produce|consume BOOTSTRAP TOPIC CLIENT_ID WARMUP MEASURE")
		os.Exit(2)
	}
	mode, bootstrap, topic, clientID := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	warmUp, err1 := time.ParseDuration(os.Args[5])
	measure, err2 := time.ParseDuration(os.Args[6])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "quotaprobe: bad duration:", err1, err2)
		os.Exit(2)
	}
	var counted atomic.Int64
	var measuring atomic.Bool
	var run func(stop <-chan struct{}) error
	switch mode {
	case "produce":
		run = func(stop <-chan struct{}) error {
			return produce(bootstrap, topic, clientID, stop, &measuring, &counted)
		}
	case "consume":
		run = func(stop <-chan struct{}) error {
			return consume(bootstrap, topic, clientID, stop, &measuring, &counted)
		}
	default:
		fmt.Fprintln(os.Stderr, "quotaprobe: no mode", mode)
		os.Exit(2)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- run(stop) }()
	if os.Getenv("QUOTAPROBE_TIMELINE") != "" {
		// Every 5 s, what was counted so far, for studying the pace.
		go func() {
			for range time.Tick(5 * time.Second) {
				fmt.Fprintf(os.Stderr, "%s %d\n", time.Now().Format("15:04:05"), counted.Load())
			}
		}()
	}
	time.Sleep(warmUp)
	measuring.Store(true)
	start := time.Now()
	time.Sleep(measure)
	measuring.Store(false)
	elapsed := time.Since(start)
	close(stop)
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "quotaprobe:", err)
		os.Exit(1)
	}
	fmt.Printf("bytes %d seconds %.3f\n", counted.Load(), elapsed.Seconds())
}

// produce sends 16 KiB records of random bytes, uncompressed, acks=all,
// keeping librdkafka's queue full, and counts the delivered ones.
func produce(bootstrap, topic, clientID string, stop <-chan struct{}, measuring *atomic.Bool, counted *atomic.Int64) error {
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "client.id": clientID,
		"acks": "all", "compression.type": "none", "enable.idempotence": false, "linger.ms": 5,
		"queue.buffering.max.messages": 64, "log_level": 3})
	if err != nil {
		return err
	}
	defer p.Close()
	go func() {
		for e := range p.Events() {
			if m, ok := e.(*kafka.Message); ok && m.TopicPartition.Error == nil && measuring.Load() {
				counted.Add(int64(len(m.Value)))
			}
		}
	}()
	value := make([]byte, 16<<10)
	rand.Read(value)
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny}, Value: value}, nil)
		if ke, ok := err.(kafka.Error); ok && ke.Code() == kafka.ErrQueueFull {
			p.Flush(10) // the queue is full: wait for deliveries
			continue
		}
		if err != nil {
			return err
		}
	}
}

// consume reads every partition of the topic from its start, without a
// group, and counts the value bytes received.
func consume(bootstrap, topic, clientID string, stop <-chan struct{}, measuring *atomic.Bool, counted *atomic.Int64) error {
	c, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "client.id": clientID,
		"group.id": "quotaprobe", "enable.auto.commit": false, "auto.offset.reset": "earliest", "log_level": 3})
	if err != nil {
		return err
	}
	defer c.Close()
	md, err := c.GetMetadata(&topic, false, 10_000)
	if err != nil {
		return err
	}
	var parts []kafka.TopicPartition
	for _, p := range md.Topics[topic].Partitions {
		parts = append(parts, kafka.TopicPartition{Topic: &topic, Partition: p.ID, Offset: kafka.OffsetBeginning})
	}
	if err := c.Assign(parts); err != nil {
		return err
	}
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if m, ok := c.Poll(100).(*kafka.Message); ok && m.TopicPartition.Error == nil && measuring.Load() {
			counted.Add(int64(len(m.Value)))
		}
	}
}
