package telemetry

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/samsa-io/samsa/internal/record"
)

// Kind is how a pushed metric is re-exported.
type Kind int8

const (
	// Gauge is a value that goes up and down: an OTLP gauge, or a sum that
	// is not monotonic.
	Gauge Kind = iota
	// Counter is an OTLP monotonic sum.
	Counter
)

// Point is one data point of a pushed payload: an OTLP gauge or sum value
// with its attributes.
type Point struct {
	// Name is the OTLP metric name (org.apache.kafka.producer.record.send.rate).
	Name string
	Kind Kind
	// Delta: the value is the change since the client's previous push (a
	// sum with delta temporality, which GetTelemetrySubscriptions asks
	// for), else the value itself.
	Delta bool
	// Attrs are the data point's attributes, keys and values as text, in
	// the payload's order.
	Attrs []Attr
	Value float64
}

// Attr is one attribute of a data point.
type Attr struct{ Key, Value string }

// Errors of Decode. A payload too large is retryable (the client may push
// fewer metrics, or the broker allow more): TELEMETRY_TOO_LARGE. A payload
// that does not decode is the client's bug: INVALID_RECORD, which tells it
// to stop pushing, as Kafka does.
var (
	ErrTooLarge = errors.New("telemetry: decompressed payload too large")
	ErrInvalid  = errors.New("telemetry: invalid payload")
)

// maxAttrDepth bounds the nesting of the payload's messages (attribute
// values hold arrays and maps of values): well above what a client sends,
// far below what would cost the decoder's stack.
const maxAttrDepth = 64

// Decode decompresses a pushed payload with its Kafka codec (0 none, 1
// gzip, 2 snappy, 3 lz4, 4 zstd), at most maxDecompressed bytes of it, and
// returns its gauge and sum data points. Histograms, exponential
// histograms and summaries, which Kafka's clients do not send, are counted
// in skipped and left out. It never panics on bad input.
func Decode(codec int8, payload []byte, maxDecompressed int) (points []Point, skipped int, err error) {
	raw, err := record.Decompress(record.Codec(codec), payload, nil, maxDecompressed)
	switch {
	case errors.Is(err, record.ErrDecompressedTooLarge):
		return nil, 0, fmt.Errorf("%w: over %d bytes", ErrTooLarge, maxDecompressed)
	case err != nil:
		return nil, 0, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var data metricspb.MetricsData
	if err := (proto.UnmarshalOptions{RecursionLimit: maxAttrDepth}).Unmarshal(raw, &data); err != nil {
		return nil, 0, fmt.Errorf("%w: not OTLP MetricsData: %v", ErrInvalid, err)
	}
	for _, rm := range data.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				var n int
				points, n = appendPoints(points, m)
				skipped += n
			}
		}
	}
	return points, skipped, nil
}

// appendPoints appends a metric's data points; n counts those left out.
func appendPoints(points []Point, m *metricspb.Metric) (_ []Point, n int) {
	switch d := m.GetData().(type) {
	case *metricspb.Metric_Gauge:
		for _, dp := range d.Gauge.GetDataPoints() {
			if p, ok := numberPoint(m.GetName(), Gauge, false, dp); ok {
				points = append(points, p)
			} else {
				n++
			}
		}
	case *metricspb.Metric_Sum:
		kind := Gauge
		if d.Sum.GetIsMonotonic() {
			kind = Counter
		}
		delta := d.Sum.GetAggregationTemporality() == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
		for _, dp := range d.Sum.GetDataPoints() {
			if p, ok := numberPoint(m.GetName(), kind, delta, dp); ok {
				points = append(points, p)
			} else {
				n++
			}
		}
	case *metricspb.Metric_Histogram:
		n += len(d.Histogram.GetDataPoints())
	case *metricspb.Metric_ExponentialHistogram:
		n += len(d.ExponentialHistogram.GetDataPoints())
	case *metricspb.Metric_Summary:
		n += len(d.Summary.GetDataPoints())
	}
	return points, n
}

// numberPoint converts one number data point; false for one without a
// value.
func numberPoint(name string, kind Kind, delta bool, dp *metricspb.NumberDataPoint) (Point, bool) {
	p := Point{Name: name, Kind: kind, Delta: delta}
	switch v := dp.GetValue().(type) {
	case *metricspb.NumberDataPoint_AsDouble:
		p.Value = v.AsDouble
	case *metricspb.NumberDataPoint_AsInt:
		p.Value = float64(v.AsInt)
	default:
		return Point{}, false
	}
	for _, kv := range dp.GetAttributes() {
		p.Attrs = append(p.Attrs, Attr{Key: kv.GetKey(), Value: attrText(kv.GetValue())})
	}
	return p, true
}

// attrText is an attribute value as a label value: scalars as Go prints
// them, anything else as a marker of its type.
func attrText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		if math.IsNaN(x.DoubleValue) {
			return "NaN"
		}
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		return "[array]"
	case *commonpb.AnyValue_KvlistValue:
		return "[map]"
	case *commonpb.AnyValue_BytesValue:
		return "[bytes]"
	}
	return ""
}
