package mm2

import (
	"errors"
	"strings"
	"testing"
)

// The expected keys are what Kafka's worker writes: JsonConverter
// (schemas.enable=false) serializes Arrays.asList(connector, partition)
// through Jackson, compact, with the partition map's members in
// java.util.HashMap order. For wrapPartition's keys that order is cluster,
// partition, topic: String.hashCode spread by HashMap.hash lands them in
// buckets 1, 3 and 9 of the default 16 ("cluster" 0x33fb11fa, "partition"
// 0x94b912ea, "topic" 0x0696cd2f).
func TestSourceOffsetVectors(t *testing.T) {
	tests := []struct {
		name                      string
		connector, cluster, topic string
		partition                 int32
		offset                    int64
		key, value                string
	}{{
		name:      "dedicated MirrorMaker",
		connector: "MirrorSourceConnector", cluster: "A", topic: "t", partition: 0, offset: 41,
		key:   `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t"}]`,
		value: `{"offset":41}`,
	}, {
		name:      "large partition and offset",
		connector: "mm2-source", cluster: "us-west", topic: "orders.v1", partition: 2147483647, offset: 9223372036854775807,
		key:   `["mm2-source",{"cluster":"us-west","partition":2147483647,"topic":"orders.v1"}]`,
		value: `{"offset":9223372036854775807}`,
	}, {
		// Jackson escapes '"', '\' and control characters (short forms
		// where JSON has them, else \u00XX upper-case) and nothing else:
		// not '/', '<', '&', DEL or non-ASCII.
		name:      "escaping",
		connector: "a\"b\\c/d\n\t\b\f\r\x01\x1f<&>\x7fé€", cluster: "", topic: "x", partition: 3, offset: 0,
		key:   `["a\"b\\c/d\n\t\b\f\r\u0001\u001F<&>` + "\x7fé€" + `",{"cluster":"","partition":3,"topic":"x"}]`,
		value: `{"offset":0}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(SourceOffsetKey(tt.connector, tt.cluster, tt.topic, tt.partition)); got != tt.key {
				t.Errorf("SourceOffsetKey = %s\nwant             %s", got, tt.key)
			}
			if got := string(SourceOffsetValue(tt.offset)); got != tt.value {
				t.Errorf("SourceOffsetValue = %s, want %s", got, tt.value)
			}
			conn, cluster, topic, partition, offset, err := DecodeSourceOffset([]byte(tt.key), []byte(tt.value))
			if err != nil || conn != tt.connector || cluster != tt.cluster || topic != tt.topic || partition != tt.partition || offset != tt.offset {
				t.Errorf("DecodeSourceOffset = %q %q %q %d %d %v", conn, cluster, topic, partition, offset, err)
			}
		})
	}
}

func TestSourceOffsetInvalidUTF8(t *testing.T) {
	// A Java string cannot hold invalid UTF-8; Jackson would have written
	// U+FFFD.
	if got, want := string(SourceOffsetKey("a\xffb", "c", "t", 0)), "[\"a\uFFFDb\","; !strings.HasPrefix(got, want) {
		t.Errorf("SourceOffsetKey = %s, want prefix %s", got, want)
	}
}

// TestDecodeSourceOffsetLenient: what Kafka's reader accepts (any member
// order and spacing, a partition Jackson reads as a long) and the "not
// started" forms MirrorUtils.unwrapOffset reads as -1.
func TestDecodeSourceOffsetLenient(t *testing.T) {
	tests := []struct {
		name, key, value string
		nilValue         bool
		partition        int32
		offset           int64
	}{
		{name: "other order and spaces", key: ` [ "c" , { "topic" : "t", "partition" : 5, "cluster" : "A" } ] `, value: `{ "offset" : 7 }`, partition: 5, offset: 7},
		{name: "tombstone", key: `["c",{"cluster":"A","partition":0,"topic":"t"}]`, nilValue: true, offset: -1},
		{name: "null offset", key: `["c",{"cluster":"A","partition":0,"topic":"t"}]`, value: `{"offset":null}`, offset: -1},
		{name: "no offset member", key: `["c",{"cluster":"A","partition":0,"topic":"t"}]`, value: `{}`, offset: -1},
		{name: "null value JSON", key: `["c",{"cluster":"A","partition":0,"topic":"t"}]`, value: `null`, offset: -1},
		{name: "negative offset", key: `["c",{"cluster":"A","partition":0,"topic":"t"}]`, value: `{"offset":-5}`, offset: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var value []byte
			if !tt.nilValue {
				value = []byte(tt.value)
			}
			conn, cluster, topic, partition, offset, err := DecodeSourceOffset([]byte(tt.key), value)
			if err != nil || conn != "c" || cluster != "A" || topic != "t" || partition != tt.partition || offset != tt.offset {
				t.Errorf("DecodeSourceOffset = %q %q %q %d %d %v; want partition %d offset %d", conn, cluster, topic, partition, offset, err, tt.partition, tt.offset)
			}
		})
	}
}

func TestDecodeSourceOffsetErrors(t *testing.T) {
	good := `{"offset":1}`
	tests := []struct {
		name, key, value string
		want             error
	}{
		{"not JSON", `["c",{`, good, ErrMalformed},
		{"trailing data", `["c",{"cluster":"A","partition":0,"topic":"t"}] x`, good, ErrMalformed},
		{"not an array", `{"c":1}`, good, ErrMalformed},
		{"one element", `["c"]`, good, ErrMalformed},
		{"connector not a string", `[1,{"cluster":"A","partition":0,"topic":"t"}]`, good, ErrMalformed},
		{"connector null", `[null,{"cluster":"A","partition":0,"topic":"t"}]`, good, ErrMalformed},
		{"partition map null", `["c",null]`, good, ErrMalformed},
		{"cluster not a string", `["c",{"cluster":1,"partition":0,"topic":"t"}]`, good, ErrMalformed},
		{"topic null", `["c",{"cluster":"A","partition":0,"topic":null}]`, good, ErrMalformed},
		{"partition a float", `["c",{"cluster":"A","partition":1.0,"topic":"t"}]`, good, ErrMalformed},
		{"partition a string", `["c",{"cluster":"A","partition":"1","topic":"t"}]`, good, ErrMalformed},
		{"partition negative", `["c",{"cluster":"A","partition":-1,"topic":"t"}]`, good, ErrMalformed},
		{"partition past int32", `["c",{"cluster":"A","partition":2147483648,"topic":"t"}]`, good, ErrMalformed},
		{"offset a float", `["c",{"cluster":"A","partition":0,"topic":"t"}]`, `{"offset":1e3}`, ErrMalformed},
		{"offset past int64", `["c",{"cluster":"A","partition":0,"topic":"t"}]`, `{"offset":9223372036854775808}`, ErrMalformed},
		{"value not an object", `["c",{"cluster":"A","partition":0,"topic":"t"}]`, `[1]`, ErrMalformed},
		// MM2's other connectors share the offsets topic.
		{"checkpoint connector", `["MirrorCheckpointConnector",{"group":"g","partition":0,"topic":"t"}]`, `{"offset":0}`, ErrNotMirrorSource},
		{"heartbeat connector", `["MirrorHeartbeatConnector",{"sourceClusterAlias":"A","targetClusterAlias":"B"}]`, `{"offset":0}`, ErrNotMirrorSource},
		{"extra member", `["c",{"cluster":"A","partition":0,"topic":"t","x":1}]`, good, ErrNotMirrorSource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, _, _, err := DecodeSourceOffset([]byte(tt.key), []byte(tt.value))
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func FuzzDecodeSourceOffset(f *testing.F) {
	f.Add(SourceOffsetKey("MirrorSourceConnector", "A", "t", 0), SourceOffsetValue(41))
	f.Add([]byte(`["c",{"cluster":"A","partition":1.5,"topic":"t"}]`), []byte(`{"offset":null}`))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		conn, cluster, topic, partition, offset, err := DecodeSourceOffset(key, value)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNotMirrorSource) {
				t.Fatalf("unmarked error: %v", err)
			}
			return
		}
		if partition < 0 || offset < -1 {
			t.Fatalf("decoded partition %d offset %d", partition, offset)
		}
		// Re-encoding and decoding gives the same fields.
		c2, cl2, t2, p2, o2, err := DecodeSourceOffset(SourceOffsetKey(conn, cluster, topic, partition), SourceOffsetValue(offset))
		if err != nil || c2 != conn || cl2 != cluster || t2 != topic || p2 != partition || o2 != offset {
			t.Fatalf("round trip of %q %q %q %d %d: %q %q %q %d %d %v", conn, cluster, topic, partition, offset, c2, cl2, t2, p2, o2, err)
		}
	})
}
