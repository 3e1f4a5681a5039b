package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestEOSSaramaTransactions: sarama's transactional producer commits one
// transaction and aborts another; sarama's read_committed consumer sees
// only the committed records, franz-go's read_uncommitted one sees both.
func TestEOSSaramaTransactions(t *testing.T) {
	b := startBroker(t)
	const topic = "eos-sarama"
	createTopic(t, b, topic, 2)

	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Transaction.ID = "eos-sarama-tx"
	cfg.Net.MaxOpenRequests = 1
	prod, err := sarama.NewSyncProducer([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()

	var wantCommitted, wantAll []string
	for _, commit := range []bool{true, false, true} {
		if err := prod.BeginTxn(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		for i := range 6 {
			v := fmt.Sprintf("commit=%v-%d", commit, len(wantAll))
			msg := &sarama.ProducerMessage{Topic: topic, Partition: int32(i % 2), Value: sarama.StringEncoder(v)}
			if _, _, err := prod.SendMessage(msg); err != nil {
				t.Fatalf("send %q: %v", v, err)
			}
			wantAll = append(wantAll, v)
			if commit {
				wantCommitted = append(wantCommitted, v)
			}
		}
		if commit {
			err = prod.CommitTxn()
		} else {
			err = prod.AbortTxn()
		}
		if err != nil {
			t.Fatalf("end transaction (commit=%v): %v", commit, err)
		}
	}
	writeSentinels(t, b.Addr(), topic, 2)

	got := saramaReadCommitted(t, b.Addr(), topic, 2)
	if fmt.Sprint(got) != fmt.Sprint(wantCommitted) {
		t.Errorf("sarama read_committed saw %v, want %v", got, wantCommitted)
	}
	var all []string
	for p := range int32(2) {
		for _, r := range readToSentinel(t, b.Addr(), topic, 2, kgo.ReadUncommitted())[p] {
			all = append(all, string(r.Value))
		}
	}
	if len(all) != len(wantAll) {
		t.Errorf("read_uncommitted saw %d records, want %d: %v", len(all), len(wantAll), all)
	}
}

// saramaReadCommitted reads each partition with a read_committed sarama
// consumer up to its sentinel and returns the values, ordered by their
// number (the producer numbered them in send order).
func saramaReadCommitted(t *testing.T, addr, topic string, partitions int32) []string {
	t.Helper()
	cfg := saramaConfig()
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	c, err := sarama.NewConsumer([]string{addr}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	byNumber := map[int]string{}
	for p := range partitions {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		timeout := time.After(e2eTimeout)
	read:
		for {
			select {
			case m := <-pc.Messages():
				v := string(m.Value)
				if v == eosSentinel {
					break read
				}
				var commit bool
				var n int
				if _, err := fmt.Sscanf(v, "commit=%t-%d", &commit, &n); err != nil {
					t.Fatalf("partition %d offset %d: value %q", p, m.Offset, v)
				}
				if _, dup := byNumber[n]; dup {
					t.Errorf("partition %d: %q seen twice", p, v)
				}
				byNumber[n] = v
			case err := <-pc.Errors():
				t.Fatalf("sarama consume %s/%d: %v", topic, p, err)
			case <-timeout:
				t.Fatalf("sarama consume %s/%d: no sentinel", topic, p)
			}
		}
		pc.Close()
	}
	var out []string
	for n := range len(byNumber) + 100 {
		if v, ok := byNumber[n]; ok {
			out = append(out, v)
		}
	}
	return out
}
