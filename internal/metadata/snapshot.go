package metadata

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
)

// snapshotVersion is the version of the snapshot header.
const snapshotVersion = 1

// snapshotHeader is the first line of a snapshot.
type snapshotHeader struct {
	Snapshot int   `json:"snapshot"`
	Offset   int64 `json:"offset"`
	Records  int   `json:"records"`
}

// Records returns records that rebuild img when applied to the empty image,
// in a fixed order: cluster ID, features, brokers, the producer-ID mark,
// broker configs, per topic by name its topic, partitions and configs, then
// the ACLs (Image.ACLs' order), the SCRAM credentials by user and
// mechanism, the delegation tokens by ID, and the client quotas by entity
// (QuotaEntity.Compare) and key, and the client metrics subscriptions'
// configs by subscription and name.
// Partitions come back as PartitionRecords with their epochs, so the rebuilt
// image is equal to img, not merely similar.
func (img *Image) Records() []Record {
	var out []Record
	if img.clusterID != "" {
		out = append(out, ClusterRecord{ClusterID: img.clusterID})
	}
	for _, name := range slices.Sorted(maps.Keys(img.features)) {
		out = append(out, FeatureLevel{Name: name, Level: img.features[name]})
	}
	for _, b := range img.Brokers() {
		out = append(out, BrokerRegistration{NodeID: b.NodeID, Incarnation: b.Incarnation, Rack: b.Rack, Endpoints: b.Endpoints,
			Fenced: b.Fenced, FencedAtMs: b.FencedAtMs, Epoch: b.Epoch, Features: b.Features, LogDirs: b.LogDirs})
	}
	if img.nextProducerID > 0 {
		out = append(out, ProducerIDsRecord{NodeID: -1, NextProducerID: img.nextProducerID})
	}
	for _, res := range slices.Sorted(maps.Keys(img.brokerConfigs)) {
		out = appendConfigs(out, ResourceBroker, res, img.brokerConfigs[res])
	}
	for _, t := range img.sortedTopics {
		out = append(out, TopicRecord{Name: t.Name, TopicID: t.ID})
		for _, p := range t.Partitions {
			out = append(out, PartitionRecord{
				TopicID: t.ID, Partition: p.Partition, Replicas: p.Replicas, ISR: p.ISR,
				Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
				AddingReplicas: p.AddingReplicas, RemovingReplicas: p.RemovingReplicas, Directories: p.Directories,
			})
		}
		out = appendConfigs(out, ResourceTopic, t.Name, img.topicConfigs[t.Name])
	}
	for _, a := range img.ACLs() {
		out = append(out, AccessControlEntryRecord{ID: a.ID, ACL: a.ACL})
	}
	for _, c := range img.ScramCredentials() {
		out = append(out, UserScramCredentialRecord{Name: c.User, Mechanism: c.Mechanism,
			Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations})
	}
	for _, t := range img.DelegationTokens() {
		out = append(out, t.Record())
	}
	out = append(out, img.quotaRecords()...)
	for _, name := range slices.Sorted(maps.Keys(img.clientMetrics)) {
		out = appendConfigs(out, ResourceClientMetrics, name, img.clientMetrics[name])
	}
	for _, name := range slices.Sorted(maps.Keys(img.groupConfigs)) {
		out = appendConfigs(out, ResourceGroup, name, img.groupConfigs[name])
	}
	return out
}

func appendConfigs(out []Record, typ ResourceType, res string, configs map[string]string) []Record {
	for _, name := range slices.Sorted(maps.Keys(configs)) {
		v := configs[name]
		out = append(out, ConfigRecord{ResourceType: typ, ResourceName: res, Name: name, Value: &v})
	}
	return out
}

// WriteSnapshot writes img as a header line followed by one encoded record
// per line. Line-per-record keeps a snapshot readable with ordinary tools and
// lets ReadSnapshot stream it.
func WriteSnapshot(w io.Writer, img *Image) error {
	recs := img.Records()
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(snapshotHeader{Snapshot: snapshotVersion, Offset: img.offset, Records: len(recs)}); err != nil {
		return fmt.Errorf("metadata: write snapshot header: %w", err)
	}
	for _, r := range recs {
		b, err := EncodeRecord(r)
		if err != nil {
			return err
		}
		if _, err := bw.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("metadata: write snapshot: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("metadata: write snapshot: %w", err)
	}
	return nil
}

// ReadSnapshot rebuilds the image WriteSnapshot wrote. A snapshot cut short
// (fewer records than its header promises) is an error, not a smaller image.
func ReadSnapshot(r io.Reader) (*Image, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	var h snapshotHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("metadata: read snapshot header: %w: %v", ErrMalformed, err)
	}
	if h.Snapshot != snapshotVersion {
		return nil, fmt.Errorf("metadata: read snapshot: %w %d", ErrUnsupportedVersion, h.Snapshot)
	}
	recs := make([]Record, 0, min(max(h.Records, 0), 1<<16))
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("metadata: read snapshot record %d: %w: %v", len(recs), ErrMalformed, err)
		}
		rec, err := DecodeRecord(raw)
		if err != nil {
			return nil, fmt.Errorf("metadata: read snapshot record %d: %w", len(recs), err)
		}
		recs = append(recs, rec)
	}
	if len(recs) != h.Records {
		return nil, fmt.Errorf("metadata: read snapshot: %w: %d records, header says %d", ErrMalformed, len(recs), h.Records)
	}
	img, err := Empty().ApplyAt(h.Offset, recs...)
	if err != nil {
		return nil, fmt.Errorf("metadata: read snapshot: %w", err)
	}
	return img, nil
}
