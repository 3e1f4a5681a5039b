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

// encodeFetchResponse writes a FetchResponse (v4-v18) frame whose record
// bytes are holes to be filled from segment files by the connection's
// writer. It is kmsg's encoding of the same response, field for field,
// except that RecordBatches comes from holes (the kmsg field is ignored);
// TestEncodeFetchMatchesKmsg holds the two together for every version.
//
// Partition-level tagged fields (diverging epoch, current leader, snapshot
// ID) and the response's node endpoints are not encoded: a single node
// never sets them.
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
				buf = append(buf, 0) // partition tags
			}
		}
		if flex {
			buf = append(buf, 0) // topic tags
		}
	}
	if flex {
		buf = append(buf, 0) // response tags
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
