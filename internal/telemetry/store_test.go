package telemetry

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/samsa-io/samsa/internal/clock"
)

// scrape gathers a collector and prints every series as
// `name{labels} value (type)`, sorted.
func scrape(t *testing.T, c prometheus.Collector) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := m.GetGauge().GetValue()
			if f.GetType() == dto.MetricType_COUNTER {
				v = m.GetCounter().GetValue()
			}
			out = append(out, fmt.Sprintf("%s{%s} %g (%s)", f.GetName(), strings.Join(labels, ","), v, strings.ToLower(f.GetType().String())))
		}
	}
	sort.Strings(out)
	return out
}

func TestStoreTemporality(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	s := NewStore(clk)
	push := func(points ...Point) { s.Record(instA, javaClient, time.Second, points) }
	sent := func(v float64) Point {
		return Point{Name: "org.apache.kafka.producer.record.send.total", Kind: Counter, Delta: true, Value: v, Attrs: []Attr{{"topic", "orders"}}}
	}
	lag := func(v float64) Point {
		return Point{Name: "org.apache.kafka.producer.record-queue-time.avg", Kind: Gauge, Value: v}
	}
	cumulative := func(v float64) Point {
		return Point{Name: "org.apache.kafka.producer.bytes", Kind: Counter, Value: v}
	}
	push(sent(10), lag(3), cumulative(100))
	push(sent(5), lag(1), cumulative(150))
	id := "client_id=orders-producer,client_instance_id=" + instA.String() + ",client_software_name=apache-kafka-java,client_software_version=4.4.0"
	want := []string{
		// A cumulative sum's value is the last; "_total" added to a counter.
		"samsa_client_org_apache_kafka_producer_bytes_total{" + id + "} 150 (counter)",
		// A gauge keeps the last value; '-' and '.' become '_'.
		"samsa_client_org_apache_kafka_producer_record_queue_time_avg{" + id + "} 1 (gauge)",
		// A delta sum accumulates: 10 then 5.
		"samsa_client_org_apache_kafka_producer_record_send_total{" + id + ",topic=orders} 15 (counter)",
	}
	if diff := cmp.Diff(want, scrape(t, s)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Three intervals without a push: forgotten.
	clk.Advance(3 * time.Second)
	if len(scrape(t, s)) != 3 {
		t.Fatal("forgotten at three intervals, before their end")
	}
	clk.Advance(time.Millisecond)
	if got := scrape(t, s); len(got) != 0 {
		t.Fatalf("still exported after three intervals without a push: %v", got)
	}
}

func TestStoreLabels(t *testing.T) {
	s := NewStore(nil)
	s.Record(instA, javaClient, time.Minute, []Point{{Name: "m", Kind: Gauge, Value: 1, Attrs: []Attr{
		{"node.id", "1"}, {"client_id", "spoofed"}, {"__name__", "x"}, {"9lives", "y"}, {"node_id", "dup"}, {"", "empty"},
	}}})
	got := scrape(t, s)
	want := "samsa_client_m{_9lives=y,attr___name__=x,attr_client_id=spoofed,client_id=orders-producer,client_instance_id=" +
		instA.String() + ",client_software_name=apache-kafka-java,client_software_version=4.4.0,node_id=1} 1 (gauge)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %v\nwant %s", got, want)
	}
	// Label values that are not UTF-8 drop their series, not the scrape.
	s.Record(instA, javaClient, time.Minute, []Point{{Name: "bad", Kind: Gauge, Value: 1, Attrs: []Attr{{"k", "\xff"}}}})
	if got := scrape(t, s); len(got) != 1 {
		t.Errorf("got %v", got)
	}
}

func TestStoreConflictingTypes(t *testing.T) {
	s := NewStore(nil)
	s.Record(InstanceID{1}, javaClient, time.Minute, []Point{{Name: "m", Kind: Gauge, Value: 1}})
	s.Record(InstanceID{2}, javaClient, time.Minute, []Point{{Name: "m_total", Kind: Gauge, Value: 2}, {Name: "m", Kind: Counter, Value: 3}})
	// Instance 2's gauge m_total and counter m (exported as m_total too)
	// clash: the scrape keeps one of them, and instance 1's gauge m.
	got := scrape(t, s)
	if len(got) != 2 {
		t.Errorf("got %v", got)
	}
}

func TestStoreBounds(t *testing.T) {
	s := NewStore(nil)
	points := make([]Point, MaxSeriesPerClient+5)
	for i := range points {
		points[i] = Point{Name: "m", Kind: Gauge, Value: 1, Attrs: []Attr{{"i", fmt.Sprint(i)}}}
	}
	s.Record(instA, javaClient, time.Minute, points)
	if st := s.Stats(); st.Series != MaxSeriesPerClient || st.Dropped != 5 {
		t.Fatalf("%+v", st)
	}
	for i := range MaxStoredClients + 2 {
		s.Record(InstanceID{byte(i), byte(i >> 8), 0xcc}, javaClient, time.Minute, points[:1])
	}
	if st := s.Stats(); st.Clients != MaxStoredClients {
		t.Fatalf("%+v", st)
	}
	s.Forget(instA)
	if st := s.Stats(); st.Series != MaxStoredClients-1 {
		t.Fatalf("after forgetting: %+v", st)
	}
}
