package broker

// OffsetCommit (key 8), versions 0-10.
//
// Commits consumer positions for a group (internal/group): checked against the
// member and generation (classic groups) or member epoch (consumer groups,
// v9+), written to __consumer_offsets in Kafka's own record format and
// acknowledged only once appended. A commit with generation -1 and no
// member is a "simple consumer" commit, allowed for groups without members.
// Offsets for unknown topics get UNKNOWN_TOPIC_OR_PARTITION; metadata over
// offset.metadata.max.bytes gets OFFSET_METADATA_TOO_LARGE. v10 names
// topics by ID.
//
// Not yet: per-commit retention (v2-4) is stored but offsets expire by
// offsets.retention.minutes only; commits do not count as heartbeats.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.OffsetCommit, min: 0, max: 10, handle: typed(handleOffsetCommit)})
}

func handleOffsetCommit(b *Broker, c *conn, req *kmsg.OffsetCommitRequest) (kmsg.Response, error) {
	return b.groups.OffsetCommit(b.tasks.Context(), req), nil
}
