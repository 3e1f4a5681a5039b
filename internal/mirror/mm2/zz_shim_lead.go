// Package mm2 SHIM: the lead's placeholder until helper mm2's branch lands. DELETE ON MERGE.
package mm2

type OffsetSync struct {
	Topic                            string
	Partition                        int32
	UpstreamOffset, DownstreamOffset int64
}

func (s OffsetSync) Key() []byte                             { return nil }
func (s OffsetSync) Value() []byte                           { return nil }
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) { return OffsetSync{}, nil }

type Checkpoint struct {
	Group, Topic                     string
	Partition                        int32
	UpstreamOffset, DownstreamOffset int64
	Metadata                         string
}

func (c Checkpoint) Key() []byte                             { return nil }
func (c Checkpoint) Value() []byte                           { return nil }
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) { return Checkpoint{}, nil }

type Heartbeat struct {
	SourceCluster, TargetCluster string
	Timestamp                    int64
}

func (h Heartbeat) Key() []byte   { return nil }
func (h Heartbeat) Value() []byte { return nil }

func SourceOffsetKey(connector, cluster, topic string, partition int32) []byte { return nil }
func SourceOffsetValue(offset int64) []byte                                    { return nil }
func DecodeSourceOffset(key, value []byte) (connector, cluster, topic string, partition int32, offset int64, err error) {
	return
}

type SyncWriter struct{}

func NewSyncWriter(maxOffsetLag int64) *SyncWriter { return nil }
func (w *SyncWriter) Record(topic string, partition int32, upstream, downstream int64) []OffsetSync {
	return nil
}
func (w *SyncWriter) Pending() []OffsetSync { return nil }

type SyncStore struct{}

func NewSyncStore() *SyncStore           { return nil }
func (s *SyncStore) Add(sync OffsetSync) {}
func (s *SyncStore) Translate(topic string, partition int32, upstreamOffset int64) (int64, bool) {
	return 0, false
}

type Checkpoints struct{}

func NewCheckpoints() *Checkpoints        { return nil }
func (c *Checkpoints) Load(cp Checkpoint) {}
func (c *Checkpoints) Next(group, topic string, partition int32, upstreamOffset int64, metadata string, store *SyncStore) (Checkpoint, bool) {
	return Checkpoint{}, false
}

func DecodeHeartbeat(key, value []byte) (Heartbeat, error) { return Heartbeat{}, nil }
