package metadata

import (
	"slices"
	"testing"
)

// Replicas' log directories (KIP-858): assigned per replica, kept by a
// change of the replica set for the replicas it keeps, and offline when
// their broker's registration no longer lists them.
func TestReplicaDirectories(t *testing.T) {
	id := mustID(t, idOrders)
	img, err := baseImage(t).Apply(
		BrokerRegistration{NodeID: 3, LogDirs: []string{"dirA", "dirB"}},
		PartitionChange{TopicID: id, Partition: 0, Replicas: nodes(1, 2, 3), Directories: []string{"", "x", "dirB"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	p := img.Topics()[0].Partitions[0]
	if p.Directory(3) != "dirB" || p.Directory(1) != "" || p.Directory(9) != "" {
		t.Fatalf("directories %v", p.Directories)
	}
	if !img.ReplicaOnline(p, 3) || !img.ReplicaOnline(p, 1) {
		t.Fatal("replicas on registered directories offline")
	}
	// A replica set change keeps the kept replicas' directories.
	if img, err = img.Apply(PartitionChange{TopicID: id, Partition: 0, Replicas: nodes(3, 1), ISR: nodes(1)}); err != nil {
		t.Fatal(err)
	}
	if p = img.Topics()[0].Partitions[0]; !slices.Equal(p.Directories, []string{"dirB", ""}) {
		t.Fatalf("directories after the replica change %v", p.Directories)
	}
	b3, _ := img.Broker(3)
	if img, err = img.Apply(BrokerRegistrationChange{NodeID: 3, Epoch: b3.Epoch, LogDirs: []string{"dirA"}}); err != nil {
		t.Fatal(err)
	}
	if img.ReplicaOnline(img.Topics()[0].Partitions[0], 3) {
		t.Fatal("a replica on a directory its broker reported offline is online")
	}
	// Snapshots keep both.
	again, err := Empty().Apply(img.Records()...)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := again.Broker(3); !slices.Equal(b.LogDirs, []string{"dirA"}) || again.ReplicaOnline(again.Topics()[0].Partitions[0], 3) {
		t.Fatalf("snapshot lost the directories: %v", b.LogDirs)
	}
	for _, bad := range []Record{
		PartitionChange{TopicID: id, Partition: 0, Directories: []string{"a"}},
		BrokerRegistrationChange{NodeID: 3, Epoch: b3.Epoch + 1},
		PartitionRecord{TopicID: id, Partition: 1, Replicas: nodes(1), ISR: nodes(1), Leader: 1, Directories: []string{"a", "b"}},
	} {
		if _, err := img.Apply(bad); err == nil {
			t.Fatalf("%T %+v applied", bad, bad)
		}
	}
}
