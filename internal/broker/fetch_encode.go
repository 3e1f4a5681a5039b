package broker

import (
	"encoding/binary"

	"github.com/samsa-io/samsa/internal/storage"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchHoles holds the record ranges of a fetch response, one per
// partition, indexed like resp.Topics[i].Partitions[j]. A zero range means
// no records.
type fetchHoles [][]storage.ReadResult

// release lets go of every range, for reads that will not be sent.
func (fh fetchHoles) release() {
	for i := range fh {
		for j := range fh[i] {
			fh[i][j].Release()
		}
	}
}

// encodeFetchResponse writes a FetchResponse (v4-v18) frame whose record
// bytes are holes to be filled from segment files by the connection's
// writer. It is kmsg's encoding of the same response, field for field,
// except that RecordBatches comes from holes (the kmsg field is ignored);
// TestEncodeFetchMatchesKmsg holds the two together for every version.
//
// Of the tagged fields, the partitions' current leader (v12+) and the
// response's node endpoints (v16+) are encoded: KIP-951's hint to a client
// that fetched from a broker without the partition (leader_hint.go). So is
// the partitions' diverging epoch (v12+), a leader's answer to a follower
// whose log diverges (fetch_replica.go). The snapshot ID is not: it
// answers KRaft's own fetches, which Samsa's quorum does not send as Fetch.
func encodeFetchResponse(correlationID int32, resp *kmsg.FetchResponse, holes fetchHoles) *frame {
	v := resp.Version
	flex := v >= 12
	f := &frame{buf: make([]byte, 4, 256)}
	buf := kbin.AppendInt32(f.buf, correlationID)
	if flex {
		buf = append(buf, 0)
	}
	if v >= 1 {
		buf = kbin.AppendInt32(buf, resp.ThrottleMillis)
	}
	if v >= 7 {
		buf = kbin.AppendInt16(buf, resp.ErrorCode)
		buf = kbin.AppendInt32(buf, resp.SessionID)
	}
	buf = appendArrayLen(buf, len(resp.Topics), flex)
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if v <= 12 {
			buf = appendString(buf, t.Topic, flex)
		} else {
			buf = kbin.AppendUuid(buf, t.TopicID)
		}
		buf = appendArrayLen(buf, len(t.Partitions), flex)
		for j := range t.Partitions {
			var rr storage.ReadResult
			if i < len(holes) && j < len(holes[i]) {
				rr = holes[i][j]
			}
			buf = appendFetchPartition(buf, v, &t.Partitions[j], rr.Size)
			if rr.Size > 0 {
				f.holes = append(f.holes, hole{at: len(buf), rr: rr})
			}
			if flex {
				buf = appendFetchPartitionTags(buf, &t.Partitions[j])
			}
		}
		if flex {
			buf = append(buf, 0) // topic tags
		}
	}
	if flex {
		buf = appendFetchResponseTags(buf, resp)
	}
	size := len(buf) - 4
	for _, h := range f.holes {
		size += int(h.rr.Size)
	}
	binary.BigEndian.PutUint32(buf, uint32(size))
	f.buf = buf
	return f
}

// appendFetchPartition writes one partition up to and including the length
// prefix of its records.
func appendFetchPartition(buf []byte, v int16, p *kmsg.FetchResponseTopicPartition, records int64) []byte {
	flex := v >= 12
	buf = kbin.AppendInt32(buf, p.Partition)
	buf = kbin.AppendInt16(buf, p.ErrorCode)
	buf = kbin.AppendInt64(buf, p.HighWatermark)
	buf = kbin.AppendInt64(buf, p.LastStableOffset)
	if v >= 5 {
		buf = kbin.AppendInt64(buf, p.LogStartOffset)
	}
	if p.AbortedTransactions == nil {
		buf = appendNullArrayLen(buf, flex)
	} else {
		buf = appendArrayLen(buf, len(p.AbortedTransactions), flex)
		for _, a := range p.AbortedTransactions {
			buf = kbin.AppendInt64(buf, a.ProducerID)
			buf = kbin.AppendInt64(buf, a.FirstOffset)
			if flex {
				buf = append(buf, 0)
			}
		}
	}
	if v >= 11 {
		buf = kbin.AppendInt32(buf, p.PreferredReadReplica)
	}
	if flex {
		return kbin.AppendUvarint(buf, uint32(records+1))
	}
	return kbin.AppendInt32(buf, int32(records))
}

func appendArrayLen(buf []byte, n int, flex bool) []byte {
	if flex {
		return kbin.AppendCompactArrayLen(buf, n)
	}
	return kbin.AppendArrayLen(buf, n)
}

func appendNullArrayLen(buf []byte, flex bool) []byte {
	if flex {
		return kbin.AppendCompactNullableArrayLen(buf, 0, true)
	}
	return kbin.AppendNullableArrayLen(buf, 0, true)
}

func appendString(buf []byte, s string, flex bool) []byte {
	if flex {
		return kbin.AppendCompactString(buf, s)
	}
	return kbin.AppendString(buf, s)
}

// appendFetchPartitionTags writes a partition's tagged fields, each when
// set, in tag order as the protocol requires: tag 0, the diverging epoch
// (a follower's answer, KIP-320), and tag 1, the current leader.
func appendFetchPartitionTags(buf []byte, p *kmsg.FetchResponseTopicPartition) []byte {
	de, cl := p.DivergingEpoch, p.CurrentLeader
	diverged := de.Epoch != -1 || de.EndOffset != -1
	hint := cl.LeaderID != -1 || cl.LeaderEpoch != -1
	n := byte(0)
	if diverged {
		n++
	}
	if hint {
		n++
	}
	buf = append(buf, n)
	if diverged {
		buf = append(buf, 0, 13) // tag 0; 13 bytes
		buf = kbin.AppendInt32(buf, de.Epoch)
		buf = kbin.AppendInt64(buf, de.EndOffset)
		buf = append(buf, 0) // the struct's own tags
	}
	if hint {
		buf = append(buf, 1, 9) // tag 1; 9 bytes
		buf = kbin.AppendInt32(buf, cl.LeaderID)
		buf = kbin.AppendInt32(buf, cl.LeaderEpoch)
		buf = append(buf, 0)
	}
	return buf
}

// appendFetchResponseTags writes the response's tagged fields: tag 0, the
// node endpoints (v16+), when there are any.
func appendFetchResponseTags(buf []byte, resp *kmsg.FetchResponse) []byte {
	if resp.Version < 16 || len(resp.Brokers) == 0 {
		return append(buf, 0)
	}
	var eps []byte
	eps = kbin.AppendCompactArrayLen(eps, len(resp.Brokers))
	for _, br := range resp.Brokers {
		eps = kbin.AppendInt32(eps, br.NodeID)
		eps = kbin.AppendCompactString(eps, br.Host)
		eps = kbin.AppendInt32(eps, br.Port)
		eps = kbin.AppendCompactNullableString(eps, br.Rack)
		eps = append(eps, 0)
	}
	buf = append(buf, 1, 0) // one tag; tag 0
	buf = kbin.AppendUvarint(buf, uint32(len(eps)))
	return append(buf, eps...)
}
