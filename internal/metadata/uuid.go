package metadata

import (
	"encoding/base64"
	"fmt"
	"io"
	"strconv"

	"github.com/samsa-io/samsa/internal/model"
)

// Kafka prints a Uuid (topic IDs, the cluster ID) as 22 characters of
// unpadded URL-safe base64; the same text form is used here so IDs look the
// same in kafka-topics.sh output, in logs and in the encoded records.
var uuidEncoding = base64.RawURLEncoding

// metadataTopicID is the ID Kafka reserves for __cluster_metadata; like the
// zero ID it is never handed out.
var metadataTopicID = model.TopicID{15: 1}

// FormatUUID returns the Kafka text form of a 16-byte UUID.
func FormatUUID(id model.TopicID) string { return uuidEncoding.EncodeToString(id[:]) }

// ParseUUID parses the Kafka text form of a UUID.
func ParseUUID(s string) (model.TopicID, error) {
	var id model.TopicID
	if len(s) != 22 {
		return id, fmt.Errorf("metadata: uuid %q: want 22 characters", s)
	}
	n, err := uuidEncoding.Decode(id[:], []byte(s))
	if err != nil || n != len(id) {
		return model.TopicID{}, fmt.Errorf("metadata: uuid %q: not base64url", s)
	}
	// Two trailing bits of the last character are not part of the 16 bytes;
	// a non-zero value there would give a second spelling of the same ID.
	if FormatUUID(id) != s {
		return model.TopicID{}, fmt.Errorf("metadata: uuid %q: not canonical", s)
	}
	return id, nil
}

// NewUUID draws a random version-4 UUID from rand the way Kafka's
// Uuid.randomUuid does: never the zero ID or the metadata topic's ID, and
// never one whose text form starts with '-', which command-line tools would
// take for a flag.
func NewUUID(rand io.Reader) (model.TopicID, error) {
	for {
		var id model.TopicID
		if _, err := io.ReadFull(rand, id[:]); err != nil {
			return model.TopicID{}, fmt.Errorf("metadata: new uuid: %w", err)
		}
		id[6] = id[6]&0x0f | 0x40 // version 4
		id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
		if id != (model.TopicID{}) && id != metadataTopicID && FormatUUID(id)[0] != '-' {
			return id, nil
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
