package telemetry

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/samsa-io/samsa/internal/record"
)

func TestDecodeEveryCodec(t *testing.T) {
	want := []Point{
		{Name: "org.apache.kafka.producer.record.queue.time.avg", Kind: Gauge, Value: 2.5, Attrs: []Attr{{"topic", "orders"}}},
		{Name: "org.apache.kafka.producer.record.send.total", Kind: Counter, Delta: true, Value: 42},
		{Name: "org.apache.kafka.producer.connection.count", Kind: Gauge, Delta: false, Value: 3},
	}
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		p := payload(t, codec,
			gauge("org.apache.kafka.producer.record.queue.time.avg", 2.5, "topic", "orders"),
			sum("org.apache.kafka.producer.record.send.total", 42, true, true),
			sum("org.apache.kafka.producer.connection.count", 3, false, false),
			&metricspb.Metric{Name: "h", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
				DataPoints: []*metricspb.HistogramDataPoint{{Count: 1}}}}},
		)
		got, skipped, err := Decode(int8(codec), p, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		if diff := cmp.Diff(want, got); diff != "" || skipped != 1 {
			t.Errorf("%s: skipped %d, points (-want +got):\n%s", codec, skipped, diff)
		}
	}
}

// The Java client frames snappy as xerial; record.Decompress reads both.
func TestDecodeBadPayloads(t *testing.T) {
	good := payload(t, record.CodecNone, gauge("g", 1))
	for _, tt := range []struct {
		name    string
		codec   int8
		payload []byte
		want    error
	}{
		{"not protobuf", 0, []byte{0xff, 0xff, 0xff, 0xff}, ErrInvalid},
		{"cut short", 0, good[:len(good)-1], ErrInvalid},
		{"not zstd", 4, good, ErrInvalid},
		{"not lz4", 3, good, ErrInvalid},
		{"unknown codec", 7, good, ErrInvalid},
		{"nothing compressed", 1, nil, ErrInvalid},
		{"a zstd bomb", 4, mustCompress(t, record.CodecZstd, bytes.Repeat([]byte{0}, 8<<20)), ErrTooLarge},
		{"too large uncompressed", 0, make([]byte, 2<<20), ErrTooLarge},
	} {
		if _, _, err := Decode(tt.codec, tt.payload, 1<<20); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// An empty payload decodes to no points.
	if pts, _, err := Decode(0, nil, 1<<20); err != nil || len(pts) != 0 {
		t.Errorf("empty: %v %v", pts, err)
	}
}

func mustCompress(t *testing.T, codec record.Codec, raw []byte) []byte {
	t.Helper()
	out, err := record.Compress(codec, nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzDecode: whatever the bytes and codec, Decode returns points or an
// error, never panics, and never keeps more than its bound.
func FuzzDecode(f *testing.F) {
	f.Add(int8(0), payload(f, record.CodecNone, gauge("org.apache.kafka.producer.io.ratio", 0.5, "node_id", "1"), sum("s", 1, true, true)))
	f.Add(int8(4), payload(f, record.CodecZstd, gauge("g", 1)))
	f.Add(int8(1), payload(f, record.CodecGzip, sum("s", 7, false, true, "a", "b")))
	f.Add(int8(2), payload(f, record.CodecSnappy, gauge("g", 1)))
	f.Add(int8(3), payload(f, record.CodecLZ4, gauge("g", 1)))
	f.Add(int8(0), []byte{})
	f.Fuzz(func(t *testing.T, codec int8, data []byte) {
		points, _, err := Decode(codec, data, 64<<10)
		if err != nil && (points != nil || !(errors.Is(err, ErrInvalid) || errors.Is(err, ErrTooLarge))) {
			t.Fatalf("error %v with %d points, or of no kind", err, len(points))
		}
		// Every point re-exports without a panic.
		s := NewStore(nil)
		s.Record(instA, javaClient, 0, points)
	})
}
