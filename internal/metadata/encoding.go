package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/samsa-io/samsa/internal/model"
)

// recordVersion is the only version of every record's data so far. A record
// that changes shape gets version 2 and a decoder for both.
const recordVersion = 1

// Marker errors of decoding and applying, tested with errors.Is.
var (
	// ErrUnknownRecordType: the envelope names a type this version does not
	// know, as a log written by a newer version would.
	ErrUnknownRecordType = errors.New("unknown metadata record type")
	// ErrUnsupportedVersion: the envelope has a data version this version
	// cannot read.
	ErrUnsupportedVersion = errors.New("unsupported metadata record version")
	// ErrMalformed: the bytes are not a well-formed record or batch.
	ErrMalformed = errors.New("malformed metadata record")
	// ErrInvalid: a record is well formed but cannot be applied to the image
	// (a partition of an unknown topic, a second cluster ID ...).
	ErrInvalid = errors.New("invalid metadata record")
)

// envelope is the encoded form of one record.
type envelope struct {
	Type RecordType      `json:"type"`
	V    int             `json:"v"`
	Data json.RawMessage `json:"data"`
}

// decoders maps each record type to the function decoding its data.
var decoders = map[RecordType]func([]byte) (Record, error){
	TypeCluster:                  decodeAs[ClusterRecord],
	TypeBrokerRegistration:       decodeAs[BrokerRegistration],
	TypeTopic:                    decodeAs[TopicRecord],
	TypePartition:                decodeAs[PartitionRecord],
	TypePartitionChange:          decodeAs[PartitionChange],
	TypeConfig:                   decodeAs[ConfigRecord],
	TypeRemoveTopic:              decodeAs[RemoveTopic],
	TypeProducerIDs:              decodeAs[ProducerIDsRecord],
	TypeFeatureLevel:             decodeAs[FeatureLevel],
	TypeBrokerFence:              decodeAs[BrokerFence],
	TypeBrokerUnregistration:     decodeAs[BrokerUnregistration],
	TypeBrokerRegistrationChange: decodeAs[BrokerRegistrationChange],

	TypeAccessControlEntry:        decodeAs[AccessControlEntryRecord],
	TypeRemoveAccessControlEntry:  decodeAs[RemoveAccessControlEntryRecord],
	TypeUserScramCredential:       decodeAs[UserScramCredentialRecord],
	TypeRemoveUserScramCredential: decodeAs[RemoveUserScramCredentialRecord],
	TypeDelegationToken:           decodeAs[DelegationTokenRecord],
	TypeRemoveDelegationToken:     decodeAs[RemoveDelegationTokenRecord],
	TypeClientQuota:               decodeAs[ClientQuotaRecord],
}

// EncodeRecord returns the envelope of one record.
func EncodeRecord(r Record) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("metadata: encode %s: %w", r.Type(), err)
	}
	return json.Marshal(envelope{Type: r.Type(), V: recordVersion, Data: data})
}

// DecodeRecord decodes one envelope. Unknown fields are rejected as well as
// unknown types: a field this version would silently drop could be one a
// newer writer relies on.
func DecodeRecord(b []byte) (Record, error) {
	var env envelope
	if err := strictUnmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("metadata: decode record: %w: %v", ErrMalformed, err)
	}
	decode, ok := decoders[env.Type]
	switch {
	case !ok:
		return nil, fmt.Errorf("metadata: decode record: %w %q", ErrUnknownRecordType, env.Type)
	case env.V != recordVersion:
		return nil, fmt.Errorf("metadata: decode %s record: %w %d", env.Type, ErrUnsupportedVersion, env.V)
	case len(bytes.TrimSpace(env.Data)) == 0 || bytes.TrimSpace(env.Data)[0] != '{':
		return nil, fmt.Errorf("metadata: decode %s record: %w: data is not an object", env.Type, ErrMalformed)
	}
	r, err := decode(env.Data)
	if err != nil {
		return nil, fmt.Errorf("metadata: decode %s record: %w: %v", env.Type, ErrMalformed, err)
	}
	return r, nil
}

// EncodeBatch encodes records that must be applied together, as one Raft
// entry: a JSON array of envelopes.
func EncodeBatch(recs []Record) ([]byte, error) {
	envs := make([]json.RawMessage, len(recs))
	for i, r := range recs {
		b, err := EncodeRecord(r)
		if err != nil {
			return nil, err
		}
		envs[i] = b
	}
	return json.Marshal(envs)
}

// DecodeBatch decodes what EncodeBatch encoded.
func DecodeBatch(b []byte) ([]Record, error) {
	var envs []json.RawMessage
	if err := strictUnmarshal(b, &envs); err != nil {
		return nil, fmt.Errorf("metadata: decode batch: %w: %v", ErrMalformed, err)
	}
	if envs == nil {
		return nil, fmt.Errorf("metadata: decode batch: %w: not an array", ErrMalformed)
	}
	recs := make([]Record, len(envs))
	for i, env := range envs {
		r, err := DecodeRecord(env)
		if err != nil {
			return nil, fmt.Errorf("metadata: batch record %d: %w", i, err)
		}
		recs[i] = r
	}
	return recs, nil
}

func decodeAs[T Record](data []byte) (Record, error) {
	var r T
	if err := strictUnmarshal(data, &r); err != nil {
		return nil, err
	}
	return r, nil
}

// strictUnmarshal decodes exactly one JSON value with no unknown fields and
// nothing after it.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// Topic IDs are written in Kafka's text form rather than as an array of 16
// numbers, so a dumped log is readable and greppable for the IDs that
// kafka-topics.sh prints. Each record holding a topic ID marshals through a
// shadow struct whose string field hides the array one.

type jsonTopicID string

func (s jsonTopicID) parse() (model.TopicID, error) { return ParseUUID(string(s)) }

func (r TopicRecord) MarshalJSON() ([]byte, error) {
	type plain TopicRecord
	return json.Marshal(struct {
		plain
		TopicID jsonTopicID `json:"topicId"`
	}{plain(r), jsonTopicID(FormatUUID(r.TopicID))})
}

func (r *TopicRecord) UnmarshalJSON(b []byte) error {
	type plain TopicRecord
	var s struct {
		*plain
		TopicID jsonTopicID `json:"topicId"`
	}
	s.plain = (*plain)(r)
	return unmarshalWithID(b, &s, &s.TopicID, &r.TopicID)
}

func (r PartitionRecord) MarshalJSON() ([]byte, error) {
	type plain PartitionRecord
	return json.Marshal(struct {
		plain
		TopicID jsonTopicID `json:"topicId"`
	}{plain(r), jsonTopicID(FormatUUID(r.TopicID))})
}

func (r *PartitionRecord) UnmarshalJSON(b []byte) error {
	type plain PartitionRecord
	var s struct {
		*plain
		TopicID jsonTopicID `json:"topicId"`
	}
	s.plain = (*plain)(r)
	return unmarshalWithID(b, &s, &s.TopicID, &r.TopicID)
}

func (r PartitionChange) MarshalJSON() ([]byte, error) {
	type plain PartitionChange
	// A pointer to a nil list clears as one to an empty list does; it
	// must not encode as null, which would decode as "unchanged".
	for _, l := range []**[]model.NodeID{&r.AddingReplicas, &r.RemovingReplicas} {
		if *l != nil && **l == nil {
			*l = &[]model.NodeID{}
		}
	}
	return json.Marshal(struct {
		plain
		TopicID jsonTopicID `json:"topicId"`
	}{plain(r), jsonTopicID(FormatUUID(r.TopicID))})
}

func (r *PartitionChange) UnmarshalJSON(b []byte) error {
	type plain PartitionChange
	var s struct {
		*plain
		TopicID jsonTopicID `json:"topicId"`
	}
	s.plain = (*plain)(r)
	return unmarshalWithID(b, &s, &s.TopicID, &r.TopicID)
}

func (r RemoveTopic) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TopicID jsonTopicID `json:"topicId"`
	}{jsonTopicID(FormatUUID(r.TopicID))})
}

func (r *RemoveTopic) UnmarshalJSON(b []byte) error {
	var s struct {
		TopicID jsonTopicID `json:"topicId"`
	}
	return unmarshalWithID(b, &s, &s.TopicID, &r.TopicID)
}

// unmarshalWithID decodes b into the shadow struct s strictly, then parses
// its text topic ID into id.
func unmarshalWithID(b []byte, s any, text *jsonTopicID, id *model.TopicID) error {
	if err := strictUnmarshal(b, s); err != nil {
		return err
	}
	parsed, err := text.parse()
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}
