package telemetry

import (
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/record"
)

// payload encodes metrics as one OTLP MetricsData and compresses it.
func payload(t testing.TB, codec record.Codec, metrics ...*metricspb.Metric) []byte {
	t.Helper()
	data := &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{
		ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: metrics}},
	}}}
	raw, err := proto.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := record.Compress(codec, nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func attrs(kv ...string) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, &commonpb.KeyValue{Key: kv[i], Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: kv[i+1]}}})
	}
	return out
}

func gauge(name string, v float64, kv ...string) *metricspb.Metric {
	return &metricspb.Metric{Name: name, Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{
		{Attributes: attrs(kv...), Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: v}},
	}}}}
}

func sum(name string, v int64, delta, monotonic bool, kv ...string) *metricspb.Metric {
	temporality := metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	if delta {
		temporality = metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	}
	return &metricspb.Metric{Name: name, Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
		AggregationTemporality: temporality, IsMonotonic: monotonic,
		DataPoints: []*metricspb.NumberDataPoint{{Attributes: attrs(kv...), Value: &metricspb.NumberDataPoint_AsInt{AsInt: v}}},
	}}}
}

// sub parses a subscription or fails the test.
func sub(t testing.TB, name string, raw map[string]string) config.ClientMetricsSubscription {
	t.Helper()
	s, err := config.ParseClientMetrics(name, raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
