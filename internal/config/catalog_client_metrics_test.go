package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseClientMetrics(t *testing.T) {
	for _, tt := range []struct {
		name   string
		sub    string
		raw    map[string]string
		marker error  // nil: valid
		reason string // a part of the error
	}{
		{"defaults", "s", nil, nil, ""},
		{"everything", "s", map[string]string{"metrics": "org.apache.kafka.producer., org.apache.kafka.consumer.", "interval.ms": "100",
			"match": "client_id=app-.*,client_software_name = apache-kafka-java"}, nil, ""},
		{"every metric", "s", map[string]string{"metrics": "*", "interval.ms": "3600000"}, nil, ""},
		{"a regex with =", "s", map[string]string{"match": "client_id=a=b"}, nil, ""},
		{"every attribute", "s", map[string]string{"match": "client_instance_id=.*,client_id=x,client_software_name=y," +
			"client_software_version=1\\..*,client_source_address=127\\.0\\.0\\.1,client_source_port=[0-9]+"}, nil, ""},
		{"empty name", "", nil, ErrInvalidRequest, "subscription name can't be empty"},
		{"unknown config", "s", map[string]string{"metrics": "*", "interval": "5"}, ErrInvalidRequest, "unknown client metrics configuration"},
		{"interval below 100", "s", map[string]string{"interval.ms": "99"}, ErrInvalidRequest, "between 100 and 3600000"},
		{"interval above an hour", "s", map[string]string{"interval.ms": "3600001"}, ErrInvalidRequest, "between 100 and 3600000"},
		{"interval not a number", "s", map[string]string{"interval.ms": "soon"}, ErrInvalidValue, "INT"},
		{"metric twice", "s", map[string]string{"metrics": "a.,b.,a."}, ErrInvalidValue, "must not be duplicated"},
		{"pattern twice", "s", map[string]string{"match": "client_id=a,client_id=a"}, ErrInvalidValue, "must not be duplicated"},
		{"pattern without =", "s", map[string]string{"match": "client_id"}, ErrInvalidValue, "illegal client matching pattern"},
		{"unknown attribute", "s", map[string]string{"match": "client_host=x"}, ErrInvalidValue, "illegal client matching pattern"},
		{"bad regex", "s", map[string]string{"match": "client_id=a(b"}, ErrInvalidValue, "not a valid regular expression"},
		// Backreferences are java.util.regex only; Kafka 4.5 refuses them
		// in new patterns (RE2/J), as Go's regexp does.
		{"backreference", "s", map[string]string{"match": `client_id=(a)\1`}, ErrInvalidValue, "not a valid regular expression"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseClientMetrics(tt.sub, tt.raw)
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

func TestParseClientMetricsValues(t *testing.T) {
	s, err := ParseClientMetrics("s", map[string]string{"metrics": " a. , b.", "match": "client_id = app-[0-9]+ "})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.", "b."}, s.Metrics); diff != "" || s.IntervalMs != 300000 || s.Name != "s" {
		t.Errorf("metrics (-want +got) %s, interval %d, name %q", diff, s.IntervalMs, s.Name)
	}
	if len(s.Match) != 1 || s.Match[0].Attribute != "client_id" || s.Match[0].Pattern != "app-[0-9]+" {
		t.Fatalf("match %+v", s.Match)
	}
	// The whole value must match, as Java's Matcher.matches().
	for value, want := range map[string]bool{"app-1": true, "app-12": true, "app-": false, "my-app-1": false, "app-1x": false} {
		if got := s.Match[0].Matches(value); got != want {
			t.Errorf("Matches(%q) = %v, want %v", value, got, want)
		}
	}
	if s, _ := ParseClientMetrics("s", map[string]string{"metrics": ""}); len(s.Metrics) != 0 {
		t.Errorf("empty metrics: %q", s.Metrics)
	}
}

func TestApplyIncrementalClientMetrics(t *testing.T) {
	s := func(v string) *string { return &v }
	got, err := ClientMetrics.ApplyIncremental(map[string]string{"metrics": "a."}, []AlterOp{
		{Name: "metrics", Op: OpAppend, Value: s("b.")},
		{Name: "interval.ms", Op: OpSet, Value: s("1000")},
	})
	if err != nil || got["metrics"] != "a.,b." || got["interval.ms"] != "1000" {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := ClientMetrics.ApplyIncremental(nil, []AlterOp{{Name: "intervalms", Op: OpSet, Value: s("1")}}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("unknown name: %v, want an invalid request as Kafka answers", err)
	}
	if _, err := ClientMetrics.ApplyIncremental(nil, []AlterOp{{Name: "interval.ms", Op: OpAppend, Value: s("1")}}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("APPEND to an int: %v", err)
	}
}

func TestDescribeClientMetrics(t *testing.T) {
	got := DescribeClientMetrics(map[string]string{"interval.ms": "1000"}, nil)
	var lines []string
	for _, d := range got {
		lines = append(lines, d.Name+"="+*d.Value+" "+d.Source.String()+" "+d.Type.String())
	}
	want := []string{"interval.ms=1000 CLIENT_METRICS_CONFIG int", `match= DEFAULT_CONFIG list`, `metrics= DEFAULT_CONFIG list`}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(got[0].Synonyms) != 2 || got[0].Synonyms[1].Source != SourceDefault {
		t.Errorf("synonyms %+v", got[0].Synonyms)
	}
	if got := DescribeClientMetrics(nil, []string{"metrics", "nope"}); len(got) != 1 || got[0].Name != "metrics" {
		t.Errorf("named: %+v", got)
	}
}
