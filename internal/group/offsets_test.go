package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestAppendErrorCodes(t *testing.T) {
	cases := []struct {
		err          error
		commit, sync *kerr.Error
	}{
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{fmt.Errorf("replication: %w", kerr.NotLeaderForPartition), kerr.NotCoordinator, kerr.NotCoordinator},
		{kerr.RequestTimedOut, kerr.CoordinatorNotAvailable, kerr.RebalanceInProgress},
		{context.DeadlineExceeded, kerr.CoordinatorNotAvailable, kerr.RebalanceInProgress},
		{kerr.MessageTooLarge, kerr.InvalidCommitOffsetSize, kerr.UnknownServerError},
		{kerr.KafkaStorageError, kerr.NotCoordinator, kerr.NotCoordinator},
		{kerr.InvalidRecord, kerr.InvalidRecord, kerr.InvalidRecord},
		{errors.New("disk on fire"), kerr.CoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
	}
	for _, c := range cases {
		if got := commitErrorCode(c.err); got != c.commit.Code {
			t.Errorf("commitErrorCode(%v) = %s, want %s", c.err, errName(got), c.commit.Message)
		}
		if got := groupStoreErrorCode(c.err); got != c.sync.Code {
			t.Errorf("groupStoreErrorCode(%v) = %s, want %s", c.err, errName(got), c.sync.Message)
		}
	}
}

// OffsetCommit and OffsetFetch v10 name topics by ID (KIP-848's
// KAFKA-19186); the coordinator keeps offsets by name, as Kafka's records do.
func TestOffsetsByTopicID(t *testing.T) {
	idT := [16]byte{1}
	idUnknown := [16]byte{9}
	cfg := DefaultConfig()
	cfg.OffsetsTopicNumPartitions = 1
	c := New(cfg, Deps{
		Log:    NewMemLog(),
		Clock:  clock.NewManual(epoch),
		Logger: slog.New(slog.DiscardHandler),
		TopicName: func(id [16]byte) (string, bool) {
			return "t", id == idT
		},
		TopicID: func(name string) ([16]byte, bool) {
			return idT, name == "t"
		},
	})
	if err := c.Load(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group = 10, "g"
	for _, id := range [][16]byte{idT, idUnknown} {
		ct := kmsg.NewOffsetCommitRequestTopic()
		ct.TopicID = id
		ct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 42, LeaderEpoch: -1}}
		commit.Topics = append(commit.Topics, ct)
	}
	resp := c.OffsetCommit(context.Background(), commit)
	if got := resp.Topics[0].Partitions[0].ErrorCode; got != 0 {
		t.Errorf("commit by known ID: %s", errName(got))
	}
	if got := resp.Topics[1].Partitions[0].ErrorCode; got != kerr.UnknownTopicID.Code {
		t.Errorf("commit by unknown ID: %s", errName(got))
	}
	if resp.Topics[0].TopicID != idT {
		t.Errorf("response topic ID %x", resp.Topics[0].TopicID)
	}

	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Version = 10
	fetch.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g", MemberEpoch: -1}}
	got := c.OffsetFetch(context.Background(), fetch)
	if len(got.Groups) != 1 || len(got.Groups[0].Topics) != 1 {
		t.Fatalf("fetch all: %+v", got.Groups)
	}
	ft := got.Groups[0].Topics[0]
	if ft.TopicID != idT || ft.Partitions[0].Offset != 42 {
		t.Errorf("fetch all: topic %x offset %d", ft.TopicID, ft.Partitions[0].Offset)
	}

	fetch.Groups[0].Topics = []kmsg.OffsetFetchRequestGroupTopic{
		{TopicID: idT, Partitions: []int32{0}},
		{TopicID: idUnknown, Partitions: []int32{0}},
	}
	got = c.OffsetFetch(context.Background(), fetch)
	topics := got.Groups[0].Topics
	if topics[0].Partitions[0].Offset != 42 || topics[1].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("fetch by ID: %+v", topics)
	}
}
