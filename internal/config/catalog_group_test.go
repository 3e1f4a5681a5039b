package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// kafkaGroupConfigs are Kafka 4.4's documented group configs.
var kafkaGroupConfigs = []string{
	"consumer.assignment.interval.ms", "consumer.heartbeat.interval.ms", "consumer.session.timeout.ms",
	"errors.deadletterqueue.copy.record.enable", "errors.deadletterqueue.topic.name",
	"share.assignment.interval.ms", "share.auto.offset.reset", "share.delivery.count.limit",
	"share.heartbeat.interval.ms", "share.isolation.level", "share.partition.max.record.locks",
	"share.record.lock.duration.ms", "share.renew.acknowledge.enable", "share.session.timeout.ms",
	"streams.heartbeat.interval.ms", "streams.initial.rebalance.delay.ms", "streams.num.standby.replicas",
	"streams.session.timeout.ms",
}

func TestGroupCatalogIsKafkas(t *testing.T) {
	var got []string
	for _, e := range Group.Entries() {
		got = append(got, e.Name)
	}
	if diff := cmp.Diff(kafkaGroupConfigs, got); diff != "" {
		t.Errorf("group catalog (-kafka +samsa):\n%s", diff)
	}
}

// A group config's default is the broker config it falls back to, as Kafka's
// GroupCoordinatorConfig.extractGroupConfigMap; its bounds are broker configs.
func TestGroupServerDefaultsAndBounds(t *testing.T) {
	broker := mustParse(t, Broker, nil)
	for _, e := range Group.Entries() {
		if e.ServerDefault != "" {
			b, ok := Broker.Lookup(e.ServerDefault)
			if !ok {
				t.Errorf("%s falls back to unknown broker config %s", e.Name, e.ServerDefault)
				continue
			}
			if b.Type != e.Type || b.Default != e.Default || b.Status() != e.Status() {
				t.Errorf("%s (%s %s %s) and %s (%s %s %s) differ", e.Name, e.Type, e.Default, e.Status(), b.Name, b.Type, b.Default, b.Status())
			}
		}
		bound, ok := groupBounds[e.Name]
		if !ok {
			continue
		}
		for _, n := range []string{bound.min, bound.max} {
			if _, ok := Broker.Lookup(n); n != "" && !ok {
				t.Errorf("%s is bounded by unknown broker config %s", e.Name, n)
			}
		}
		// Kafka's default must lie within Kafka's default bounds.
		def := e.DefaultValue.(int32)
		if def > broker.Int(bound.max) || (bound.min != "" && def < broker.Int(bound.min)) {
			t.Errorf("%s default %d outside its bounds", e.Name, def)
		}
	}
	for name := range groupBounds {
		if _, ok := Group.Lookup(name); !ok {
			t.Errorf("bounds of unknown group config %s", name)
		}
	}
}

func TestValidateGroup(t *testing.T) {
	for _, tt := range []struct {
		name   string
		raw    map[string]string
		marker error  // nil: valid
		reason string // a part of the error
	}{
		{"none", nil, nil, ""},
		{"every share config", map[string]string{"share.auto.offset.reset": "earliest", "share.isolation.level": "read_committed",
			"share.record.lock.duration.ms": "15000", "share.delivery.count.limit": "10", "share.partition.max.record.locks": "100",
			"share.session.timeout.ms": "60000", "share.heartbeat.interval.ms": "15000", "share.renew.acknowledge.enable": "false"}, nil, ""},
		{"streams", map[string]string{"streams.num.standby.replicas": "2", "streams.session.timeout.ms": "45000",
			"streams.heartbeat.interval.ms": "5000", "streams.initial.rebalance.delay.ms": "0"}, nil, ""},
		{"by_duration", map[string]string{"share.auto.offset.reset": "by_duration:P1DT2H"}, nil, ""},
		{"unknown name", map[string]string{"share.auto.offset.reset": "earliest", "share.auto.offset": "earliest"},
			ErrUnknownConfig, "Unknown group config name: share.auto.offset"},
		{"broker config name", map[string]string{"group.share.session.timeout.ms": "50000"}, ErrUnknownConfig, "Unknown group config name"},
		{"not a number", map[string]string{"consumer.session.timeout.ms": "soon"}, ErrInvalidValue, "INT"},
		{"below the static minimum", map[string]string{"share.record.lock.duration.ms": "999"}, ErrInvalidValue, "at least 1000"},
		{"below the broker minimum", map[string]string{"consumer.session.timeout.ms": "44999"}, ErrInvalidValue,
			"consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."},
		{"above the broker maximum", map[string]string{"share.record.lock.duration.ms": "60001"}, ErrInvalidValue,
			"share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."},
		{"delivery count limit", map[string]string{"share.delivery.count.limit": "11"}, ErrInvalidValue, "in the range 2 to 10 inclusive"},
		{"record locks", map[string]string{"share.partition.max.record.locks": "4001"}, ErrInvalidValue, "in the range 100 to 4000 inclusive"},
		{"standbys above the maximum", map[string]string{"streams.num.standby.replicas": "3"}, ErrInvalidValue,
			"streams.num.standby.replicas must be less than or equal to 2"},
		{"negative standbys", map[string]string{"streams.num.standby.replicas": "-1"}, ErrInvalidValue, "at least 0"},
		// Kafka's default bounds keep every session timeout above every heartbeat
		// interval; TestValidateGroupAgainstBroker loosens them.
		{"bounds at their edges", map[string]string{"streams.session.timeout.ms": "45000", "streams.heartbeat.interval.ms": "15000"}, nil, ""},
		{"bad isolation level", map[string]string{"share.isolation.level": "READ_COMMITTED"}, ErrInvalidValue, "read_committed, read_uncommitted"},
		{"bad reset", map[string]string{"share.auto.offset.reset": "none"}, ErrInvalidValue, "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS.>'"},
		{"negative duration", map[string]string{"share.auto.offset.reset": "by_duration:-PT1H"}, ErrInvalidValue, "negative duration"},
		{"dead-letter queue", map[string]string{"errors.deadletterqueue.topic.name": "dlq"}, ErrNotSupported, "KIP-1191"},
		{"dead-letter queue default", map[string]string{"errors.deadletterqueue.topic.name": ""}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateGroup(Values{}, tt.raw)
			switch {
			case tt.marker == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.marker != nil && !errors.Is(err, tt.marker):
				t.Fatalf("got %v, want %v", err, tt.marker)
			case tt.marker != nil && !strings.Contains(err.Error(), tt.reason):
				t.Fatalf("error %q does not say %q", err, tt.reason)
			}
		})
	}
}

// The session timeout must exceed the heartbeat interval, the one not set counting at the
// broker's value; the bounds are the broker's, whatever they are.
func TestValidateGroupAgainstBroker(t *testing.T) {
	broker := mustParse(t, Broker, map[string]string{
		"group.share.min.heartbeat.interval.ms": "1000", "group.share.max.heartbeat.interval.ms": "50000",
		"group.share.min.session.timeout.ms": "1000", "group.share.heartbeat.interval.ms": "2000",
		"group.streams.max.standby.replicas": "5",
	})
	for _, tt := range []struct {
		raw    map[string]string
		reason string // "" when valid
	}{
		{map[string]string{"share.heartbeat.interval.ms": "45000"}, "share.session.timeout.ms must be greater than share.heartbeat.interval.ms"},
		{map[string]string{"share.session.timeout.ms": "2000"}, "share.session.timeout.ms must be greater than share.heartbeat.interval.ms"},
		{map[string]string{"share.session.timeout.ms": "2001"}, ""},
		{map[string]string{"share.heartbeat.interval.ms": "44999"}, ""},
		{map[string]string{"share.heartbeat.interval.ms": "999"}, "in the range 1000 to 50000 inclusive"},
		{map[string]string{"streams.num.standby.replicas": "5"}, ""},
	} {
		err := ValidateGroup(broker, tt.raw)
		if (tt.reason == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.reason)) {
			t.Errorf("%v: got %v, want %q", tt.raw, err, tt.reason)
		}
	}
}

func TestResolveGroup(t *testing.T) {
	broker := mustParse(t, Broker, map[string]string{"group.share.record.lock.duration.ms": "20000"})
	v, err := ResolveGroup(broker, map[string]string{"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "3"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int32{
		"share.record.lock.duration.ms": 20000, // the broker's, set in server.properties
		"share.delivery.count.limit":    3,     // the group's
		"share.session.timeout.ms":      45000, // the broker's default
		"streams.num.standby.replicas":  0,
	} {
		if got := v.Int(name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	if v.String("share.auto.offset.reset") != "earliest" || v.String("share.isolation.level") != "read_uncommitted" || !v.Bool("share.renew.acknowledge.enable") {
		t.Errorf("strings: %q %q", v.String("share.auto.offset.reset"), v.String("share.isolation.level"))
	}

	// Bounds lowered since the group set its value: the value is capped, as Kafka 4.4's
	// GroupConfig.evaluate does; what was set still shows as a synonym.
	lowered := mustParse(t, Broker, map[string]string{"group.share.max.delivery.count.limit": "5",
		"group.consumer.min.session.timeout.ms": "50000", "group.consumer.max.session.timeout.ms": "70000"})
	v, err = ResolveGroup(lowered, map[string]string{"share.delivery.count.limit": "9", "consumer.session.timeout.ms": "46000"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("share.delivery.count.limit") != 5 || v.Int("consumer.session.timeout.ms") != 50000 {
		t.Errorf("capped: %d %d", v.Int("share.delivery.count.limit"), v.Int("consumer.session.timeout.ms"))
	}

	// A stored override the catalog no longer takes is left out, and named.
	v, err = ResolveGroup(broker, map[string]string{"share.gone": "1", "share.isolation.level": "read_committed"})
	if err == nil || !strings.Contains(err.Error(), "share.gone") || v.String("share.isolation.level") != "read_committed" {
		t.Errorf("got %v, %q", err, v.String("share.isolation.level"))
	}
}

func TestDescribeGroup(t *testing.T) {
	broker := mustParse(t, Broker, map[string]string{"group.share.record.lock.duration.ms": "20000"})
	v, err := ResolveGroup(broker, map[string]string{"share.record.lock.duration.ms": "25000", "share.auto.offset.reset": "earliest"})
	if err != nil {
		t.Fatal(err)
	}
	line := func(d Description) string {
		s := d.Name + "=" + *d.Value + " " + d.Source.String() + " " + d.Type.String() + " ["
		for _, syn := range d.Synonyms {
			s += " " + syn.Name + "=" + *syn.Value + ":" + syn.Source.String()
		}
		return s + " ]"
	}
	var got []string
	for _, name := range []string{"share.record.lock.duration.ms", "share.auto.offset.reset", "share.isolation.level", "share.session.timeout.ms"} {
		d, err := v.Describe(name)
		if err != nil {
			t.Fatal(err)
		}
		if d.ReadOnly || d.Sensitive {
			t.Errorf("%s: read-only %v, sensitive %v", name, d.ReadOnly, d.Sensitive)
		}
		got = append(got, line(d))
	}
	want := []string{
		"share.record.lock.duration.ms=25000 GROUP_CONFIG int [ share.record.lock.duration.ms=25000:GROUP_CONFIG group.share.record.lock.duration.ms=20000:STATIC_BROKER_CONFIG group.share.record.lock.duration.ms=30000:DEFAULT_CONFIG ]",
		"share.auto.offset.reset=earliest GROUP_CONFIG string [ share.auto.offset.reset=earliest:GROUP_CONFIG share.auto.offset.reset=latest:DEFAULT_CONFIG ]",
		"share.isolation.level=read_uncommitted DEFAULT_CONFIG string [ share.isolation.level=read_uncommitted:DEFAULT_CONFIG ]",
		"share.session.timeout.ms=45000 DEFAULT_CONFIG int [ group.share.session.timeout.ms=45000:DEFAULT_CONFIG ]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := len(v.DescribeAll()); n != len(kafkaGroupConfigs) {
		t.Errorf("DescribeAll: %d configs", n)
	}
}

func TestParseShareAutoOffsetReset(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want ShareAutoOffsetReset
		bad  bool
	}{
		{in: "latest", want: ShareAutoOffsetReset{Strategy: "latest"}},
		{in: "earliest", want: ShareAutoOffsetReset{Strategy: "earliest"}},
		{in: "by_duration:PT1H", want: ShareAutoOffsetReset{"by_duration", time.Hour}},
		{in: "by_duration:P1D", want: ShareAutoOffsetReset{"by_duration", 24 * time.Hour}},
		{in: "by_duration:P1DT2H3M4.5S", want: ShareAutoOffsetReset{"by_duration", 26*time.Hour + 3*time.Minute + 4500*time.Millisecond}},
		{in: "by_duration:pt15m", want: ShareAutoOffsetReset{"by_duration", 15 * time.Minute}},
		{in: "by_duration:PT0S", want: ShareAutoOffsetReset{"by_duration", 0}},
		{in: "by_duration:PT0,000000001S", want: ShareAutoOffsetReset{"by_duration", time.Nanosecond}},
		{in: "by_duration:+PT1M", want: ShareAutoOffsetReset{"by_duration", time.Minute}},
		// Java's Duration.parse signs each part; only the total must not be negative.
		{in: "by_duration:P-1DT25H", want: ShareAutoOffsetReset{"by_duration", time.Hour}},
		{in: "by_duration:PT-1H", bad: true},
		{in: "by_duration:-PT1H", bad: true},
		{in: "by_duration:", bad: true},
		{in: "by_duration", bad: true},
		{in: "by_duration:P", bad: true},
		{in: "by_duration:PT", bad: true},
		{in: "by_duration:P1H", bad: true},
		{in: "by_duration:PT1H1D", bad: true},
		{in: "by_duration:PT1S2M", bad: true},
		{in: "by_duration:PT1.1234567891S", bad: true},
		{in: "by_duration:PT.5S", bad: true},
		{in: "by_duration:1H", bad: true},
		{in: "by_duration:P400000D", bad: true}, // past time.Duration
		{in: "BY_DURATION:PT1H", bad: true},
		{in: "Earliest", bad: true},
		{in: "none", bad: true},
		{in: "", bad: true},
	} {
		got, err := ParseShareAutoOffsetReset(tt.in)
		switch {
		case tt.bad && err == nil:
			t.Errorf("%q: accepted as %+v", tt.in, got)
		case !tt.bad && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case !tt.bad && got != tt.want:
			t.Errorf("%q = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestApplyIncrementalGroup(t *testing.T) {
	s := func(v string) *string { return &v }
	got, err := Group.ApplyIncremental(map[string]string{"share.auto.offset.reset": "earliest"}, []AlterOp{
		{Name: "share.auto.offset.reset", Op: OpDelete},
		{Name: "share.isolation.level", Op: OpSet, Value: s("read_committed")},
	})
	if err != nil || len(got) != 1 || got["share.isolation.level"] != "read_committed" {
		t.Fatalf("got %v, %v", got, err)
	}
	_, err = Group.ApplyIncremental(nil, []AlterOp{{Name: "share.lock", Op: OpSet, Value: s("1")}})
	if !errors.Is(err, ErrUnknownConfig) || err.Error() != "config: Unknown group config name: share.lock" {
		t.Errorf("unknown name: %v", err)
	}
}
