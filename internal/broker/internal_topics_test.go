package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInternalTopicsProtected: no client can create, delete, grow, produce
// to, delete records of, or switch to a delete policy one of Kafka's
// internal topics, through any client (here kadm and raw requests); each
// attempt gets a clear Kafka error, and committed offsets survive them all.
func TestInternalTopicsProtected(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	adm := kadm.NewClient(newFranz(t, b.Addr()))

	// Before first use: creating them by hand is refused.
	for _, name := range []string{"__consumer_offsets", "__transaction_state", "__cluster_metadata"} {
		resp, err := adm.CreateTopic(ctx, 1, 1, nil, name)
		if err == nil {
			err = resp.Err
		}
		if !errors.Is(err, kerr.InvalidRequest) {
			t.Errorf("create %s: %v, want INVALID_REQUEST", name, err)
		}
	}
	if _, ok := b.topics.byTopicName("__consumer_offsets"); ok {
		t.Fatal("__consumer_offsets was created by hand")
	}

	// A group commit creates __consumer_offsets with its own settings.
	createTopic(t, b, "data", 1)
	if _, err := adm.CommitOffsets(ctx, "keeper", kadm.Offsets{"data": {0: {At: 0}}}); err != nil {
		t.Fatal(err)
	}
	// __transaction_state comes with a transactional producer.
	txn, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("protect-txn"), kgo.DefaultProduceTopic("data"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
		ts, ok := b.topics.byTopicName(name)
		if !ok {
			t.Fatalf("%s was not created on first use", name)
		}
		if got := ts.config.List("cleanup.policy"); len(got) != 1 || got[0] != "compact" {
			t.Fatalf("%s cleanup.policy %v", name, got)
		}
		partitions := len(ts.partitions)

		if resp, err := adm.CreateTopic(ctx, 1, 1, nil, name); err == nil && !errors.Is(resp.Err, kerr.InvalidRequest) && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			t.Errorf("create existing %s: %v", name, resp.Err)
		}
		dr, err := adm.DeleteTopics(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if r := dr[name]; !errors.Is(r.Err, kerr.InvalidRequest) || r.ErrMessage == "" {
			t.Errorf("delete %s: %v (%q), want INVALID_REQUEST with a reason", name, r.Err, r.ErrMessage)
		}
		cp, err := adm.CreatePartitions(ctx, 1, name)
		if err != nil {
			t.Fatal(err)
		}
		if r := cp[name]; !errors.Is(r.Err, kerr.InvalidRequest) {
			t.Errorf("grow %s: %v, want INVALID_REQUEST", name, r.Err)
		}
		ac, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "cleanup.policy", Value: kmsg.StringPtr("delete")}}, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(ac) != 1 || !errors.Is(ac[0].Err, kerr.InvalidConfig) {
			t.Errorf("cleanup.policy=delete on %s: %+v, want INVALID_CONFIG", name, ac)
		}
		// A harmless config change is allowed.
		ac, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.ms", Value: kmsg.StringPtr("3600000")}}, name)
		if err != nil || ac[0].Err != nil {
			t.Errorf("segment.ms on %s: %v %+v", name, err, ac)
		}

		rc := dialRaw(t, b)
		sp := rawProducePart(rc, rawProduceReq(name, 0, -1, rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Key: []byte("k"), Value: []byte("junk")})), 1)
		if sp.ErrorCode != kerr.InvalidTopicException.Code {
			t.Errorf("produce to %s: error %d, want INVALID_TOPIC_EXCEPTION", name, sp.ErrorCode)
		}
		del, err := adm.DeleteRecords(ctx, kadm.Offsets{name: {0: {At: -1}}})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := del.Lookup(name, 0); !errors.Is(r.Err, kerr.InvalidTopicException) {
			t.Errorf("delete records of %s: %v, want INVALID_TOPIC_EXCEPTION", name, r.Err)
		}
		ts, ok = b.topics.byTopicName(name)
		if !ok || len(ts.partitions) != partitions || ts.config.List("cleanup.policy")[0] != "compact" {
			t.Fatalf("%s changed under the refused requests", name)
		}
	}
	got, err := adm.FetchOffsets(ctx, "keeper")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := got.Lookup("data", 0); !ok || o.At != 0 {
		t.Fatalf("the group's commit is gone: %+v", got)
	}
}
