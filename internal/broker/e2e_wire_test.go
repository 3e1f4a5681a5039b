package broker

// Hand-built requests and record batches for the tests that must say
// exactly what goes on the wire (bad input, fetch limits, deleted topics).

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawRecord is one record of a hand-built batch; nil Key or Value is null.
type rawRecord struct {
	Key, Value []byte
}

// rawBatchOptions shapes a hand-built RecordBatch v2.
type rawBatchOptions struct {
	attributes int16 // without the codec bits
	zstd       bool  // compress the records with zstd
	timestamp  int64 // first and max timestamp
}

// rawBatch encodes a valid uncompressed RecordBatch v2 at base offset 0,
// CRC32C and all, as a producer would.
func rawBatch(o rawBatchOptions, recs ...rawRecord) []byte {
	var body []byte
	for i, r := range recs {
		var rec []byte
		rec = append(rec, 0)             // attributes
		rec = kbin.AppendVarlong(rec, 0) // timestamp delta
		rec = kbin.AppendVarint(rec, int32(i))
		rec = kbin.AppendVarintBytes(rec, r.Key)
		rec = kbin.AppendVarintBytes(rec, r.Value)
		rec = kbin.AppendVarint(rec, 0) // headers
		body = kbin.AppendVarint(body, int32(len(rec)))
		body = append(body, rec...)
	}
	b := kbin.AppendInt64(nil, 0) // base offset
	b = kbin.AppendInt32(b, 0)    // batch length, set below
	b = kbin.AppendInt32(b, -1)   // partition leader epoch
	b = append(b, 2)              // magic
	b = kbin.AppendInt32(b, 0)    // CRC, set below
	attributes := o.attributes
	if o.zstd {
		attributes |= 4
		enc, _ := zstd.NewWriter(nil)
		body = enc.EncodeAll(body, nil)
		enc.Close()
	}
	b = kbin.AppendInt16(b, attributes)
	b = kbin.AppendInt32(b, int32(len(recs)-1))
	b = kbin.AppendInt64(b, o.timestamp)
	b = kbin.AppendInt64(b, o.timestamp)
	b = kbin.AppendInt64(b, -1) // producer ID
	b = kbin.AppendInt16(b, -1) // producer epoch
	b = kbin.AppendInt32(b, -1) // base sequence
	b = kbin.AppendInt32(b, int32(len(recs)))
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	rawFixCRC(b)
	return b
}

// rawFixCRC recomputes a batch's CRC32C over attributes..end.
func rawFixCRC(batch []byte) {
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
}

// rawProduceReq is a Produce v9 (topic names, flexible) for one
// partition.
func rawProduceReq(topic string, p int32, acks int16, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = acks
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = p
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// rawProducePart sends a one-partition produce and returns its partition
// response.
func rawProducePart(r *rawConn, req *kmsg.ProduceRequest, corr int32) kmsg.ProduceResponseTopicPartition {
	r.t.Helper()
	resp := r.roundTrip(req, corr).(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		r.t.Fatalf("produce response with %d topics", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}

// rawFetchReq is a sessionless Fetch of one partition: v12 names the
// topic, v13+ identifies it by id.
func rawFetchReq(version int16, topic string, id [16]byte, p int32, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = version
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = p
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// rawFetchPart sends a one-partition fetch and returns its partition
// response.
func rawFetchPart(r *rawConn, req *kmsg.FetchRequest, corr int32) kmsg.FetchResponseTopicPartition {
	r.t.Helper()
	resp := r.roundTrip(req, corr).(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 {
		r.t.Fatalf("fetch: top-level error %d", resp.ErrorCode)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		r.t.Fatalf("fetch response with %d topics", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}

// rawListOffsetsReq asks for one partition's offset at timestamp ts
// (v7: names, max timestamp allowed).
func rawListOffsetsReq(topic string, p int32, ts int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 7
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = p
	rp.CurrentLeaderEpoch = -1
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func rawListOffsetsPart(r *rawConn, req *kmsg.ListOffsetsRequest, corr int32) kmsg.ListOffsetsResponseTopicPartition {
	r.t.Helper()
	resp := r.roundTrip(req, corr).(*kmsg.ListOffsetsResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		r.t.Fatalf("list offsets response with %d topics", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}

// rawMetadataTopic asks for one topic by name (v12), without auto-creation.
func rawMetadataTopic(r *rawConn, topic string, corr int32) kmsg.MetadataResponseTopic {
	r.t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp := r.roundTrip(req, corr).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 {
		r.t.Fatalf("metadata response with %d topics", len(resp.Topics))
	}
	return resp.Topics[0]
}

// rawFetchedRecord is a record of a fetched plain batch.
type rawFetchedRecord struct {
	Offset     int64
	Key, Value []byte
}

// rawBatchRecords decodes the records of fetched uncompressed batches.
func rawBatchRecords(t *testing.T, raw []byte) []rawFetchedRecord {
	t.Helper()
	var out []rawFetchedRecord
	for len(raw) > 0 {
		var batch kmsg.RecordBatch
		if err := batch.ReadFrom(raw); err != nil {
			t.Fatalf("batch: %v", err)
		}
		if batch.Attributes&7 != 0 {
			t.Fatalf("batch with codec %d: only plain batches expected", batch.Attributes&7)
		}
		rs := batch.Records
		for range batch.NumRecords {
			var rec kmsg.Record
			n, size := kbin.Varint(rs)
			if size == 0 || int(n)+size > len(rs) {
				t.Fatalf("record length %d in %d bytes", n, len(rs))
			}
			if err := rec.ReadFrom(rs[:size+int(n)]); err != nil {
				t.Fatalf("record: %v", err)
			}
			out = append(out, rawFetchedRecord{batch.FirstOffset + int64(rec.OffsetDelta), rec.Key, rec.Value})
			rs = rs[size+int(n):]
		}
		raw = raw[12+batch.Length:]
	}
	return out
}
