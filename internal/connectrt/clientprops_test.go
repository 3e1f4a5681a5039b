package connectrt

import "testing"

// TestMaxPollRecords: the sink loop's batch is consumer.max.poll.records,
// a connector's override winning unless the policy forbids overrides.
func TestMaxPollRecords(t *testing.T) {
	for _, tc := range []struct {
		worker, override, policy string
		want                     int
	}{
		{"", "", "All", 500},
		{"100", "", "All", 100},
		{"100", "7", "All", 7},
		{"100", "7", "None", 100},
	} {
		tr := &taskRunner{w: &Worker{cfg: WorkerConfig{Consumer: map[string]string{}, ConnectorOverridePolicy: tc.policy}}, connConfig: map[string]string{}}
		if tc.worker != "" {
			tr.w.cfg.Consumer["max.poll.records"] = tc.worker
		}
		if tc.override != "" {
			tr.connConfig["consumer.override.max.poll.records"] = tc.override
		}
		if got := tr.maxPollRecords(); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc, got, tc.want)
		}
	}
	if _, err := clientProps(map[string]string{"max.poll.records": "0"}); err == nil {
		t.Error("max.poll.records=0 accepted")
	}
}
