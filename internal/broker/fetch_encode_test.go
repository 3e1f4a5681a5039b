package broker

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/samsa-io/samsa/internal/vfs"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEncodeFetchMatchesKmsg encodes a response with holes, fills the holes
// as the writer would, and decodes the bytes with kmsg: every field must
// come back, for every version we serve.
func TestEncodeFetchMatchesKmsg(t *testing.T) {
	mem := vfs.NewMem()
	f, _ := mem.Create("/seg")
	payload := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	f.WriteAt(payload, 0)
	for v := int16(4); v <= 18; v++ {
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = v
		resp.SessionID = 77
		resp.ThrottleMillis = 5
		holes := fetchHoles{}
		for ti, name := range []string{"alpha", "beta"} {
			topic := kmsg.NewFetchResponseTopic()
			topic.Topic = name
			topic.TopicID = [16]byte{byte(ti + 1)}
			var th []storage.ReadResult
			for pi := range 3 {
				p := kmsg.NewFetchResponseTopicPartition()
				p.Partition = int32(pi)
				p.HighWatermark, p.LastStableOffset, p.LogStartOffset = 100+int64(pi), 90, 3
				p.ErrorCode = int16(pi % 2)
				if pi == 1 {
					p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 9, FirstOffset: 4}}
				}
				if pi >= 1 && v >= 12 {
					// KIP-951's hint, a tagged field from v12.
					p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 3, 7
				}
				if pi < 2 && v >= 12 {
					// KIP-320's answer to a follower, tagged too: alone (0),
					// before the hint (1); the hint alone is 2.
					p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = 4, 1234567890123
				}
				rr := storage.ReadResult{File: f, Position: int64(pi), Size: int64(pi * 5)}
				th = append(th, rr)
				p.RecordBatches = payload[pi : pi+pi*5]
				topic.Partitions = append(topic.Partitions, p)
			}
			resp.Topics = append(resp.Topics, topic)
			holes = append(holes, th)
		}
		if v >= 16 {
			resp.Brokers = []kmsg.FetchResponseBroker{
				{NodeID: 3, Host: "127.0.0.1", Port: 9094, Rack: kmsg.StringPtr("r1")},
				{NodeID: 4, Host: "localhost", Port: 9095},
			}
		}
		fr := encodeFetchResponse(123, resp, holes)
		var out bytes.Buffer
		prev := 0
		for _, h := range fr.holes {
			out.Write(fr.buf[prev:h.at])
			data, _ := h.rr.ReadAll()
			out.Write(data)
			prev = h.at
		}
		out.Write(fr.buf[prev:])
		wire := out.Bytes()
		if got := binary.BigEndian.Uint32(wire); int(got) != len(wire)-4 {
			t.Fatalf("v%d: size prefix %d, frame %d", v, got, len(wire)-4)
		}
		if corr := int32(binary.BigEndian.Uint32(wire[4:])); corr != 123 {
			t.Fatalf("v%d: correlation %d", v, corr)
		}
		body := wire[8:]
		if v >= 12 {
			body = body[1:]
		}
		got := kmsg.NewPtrFetchResponse()
		got.Version = v
		if err := got.ReadFrom(body); err != nil {
			t.Fatalf("v%d: kmsg cannot decode: %v", v, err)
		}
		want := *resp
		if v < 7 {
			want.SessionID = 0
		}
		// Fields a version does not carry decode as their zero value.
		if v < 13 {
			for i := range want.Topics {
				want.Topics[i].TopicID = [16]byte{}
			}
		} else {
			for i := range want.Topics {
				want.Topics[i].Topic = ""
			}
		}
		for i := range want.Topics {
			for j := range want.Topics[i].Partitions {
				p := &want.Topics[i].Partitions[j]
				if len(p.RecordBatches) == 0 {
					p.RecordBatches = got.Topics[i].Partitions[j].RecordBatches
				}
				if v < 5 {
					p.LogStartOffset = -1
				}
				if v < 11 {
					p.PreferredReadReplica = -1
				}
			}
		}
		if diff := cmp.Diff(&want, got, cmpopts.IgnoreUnexported(kmsg.Tags{})); diff != "" {
			t.Fatalf("v%d: decoded response differs (-want +got):\n%s", v, diff)
		}
	}
}
