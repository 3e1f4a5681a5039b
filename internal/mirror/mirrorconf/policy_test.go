package mirrorconf

import "testing"

func TestDefaultReplicationPolicyNames(t *testing.T) {
	dot := NewDefaultReplicationPolicy()
	under := &DefaultReplicationPolicy{Separator: "_", InternalTopicSeparatorEnabled: true}
	legacy := &DefaultReplicationPolicy{Separator: "_", InternalTopicSeparatorEnabled: false}
	double := &DefaultReplicationPolicy{Separator: "__", InternalTopicSeparatorEnabled: true}
	for _, tc := range []struct {
		name                       string
		p                          ReplicationPolicy
		topic                      string
		source, upstream, original string
	}{
		{"remote", dot, "A.topic", "A", "topic", "topic"},
		{"two hops", dot, "A.B.topic", "A", "B.topic", "topic"},
		{"local", dot, "topic", "", "", "topic"},
		{"empty", dot, "", "", "", ""},
		// Java's split drops trailing empty strings: "a." is one part, not remote.
		{"trailing separator", dot, "a.", "", "", "a."},
		{"only separators", dot, "..", "", "", ".."},
		// A leading separator gives Kafka the empty source, and "b" upstream.
		{"leading separator", dot, ".b", "", "b", "b"},
		{"double separator", dot, "a..b", "a", ".b", "b"},
		{"heartbeats remote", dot, "A.heartbeats", "A", "heartbeats", "heartbeats"},
		{"custom separator", under, "A_B_topic", "A", "B_topic", "topic"},
		{"custom separator leaves dots", under, "A.topic", "", "", "A.topic"},
		{"multi-char separator", double, "A___t", "A", "_t", "_t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.TopicSource(tc.topic); got != tc.source {
				t.Errorf("TopicSource(%q) = %q, want %q", tc.topic, got, tc.source)
			}
			if got := tc.p.UpstreamTopic(tc.topic); got != tc.upstream {
				t.Errorf("UpstreamTopic(%q) = %q, want %q", tc.topic, got, tc.upstream)
			}
			if got := tc.p.OriginalTopic(tc.topic); got != tc.original {
				t.Errorf("OriginalTopic(%q) = %q, want %q", tc.topic, got, tc.original)
			}
		})
	}

	for _, tc := range []struct {
		p                                         ReplicationPolicy
		remote, offsetSyncs, checkpoints, heartbe string
	}{
		{dot, "A.t", "mm2-offset-syncs.B.internal", "A.checkpoints.internal", "heartbeats"},
		{under, "A_t", "mm2-offset-syncs_B_internal", "A_checkpoints_internal", "heartbeats"},
		// replication.policy.internal.topic.separator.enabled=false: the pre-3.1 names.
		{legacy, "A_t", "mm2-offset-syncs.B.internal", "A.checkpoints.internal", "heartbeats"},
	} {
		if got := tc.p.FormatRemoteTopic("A", "t"); got != tc.remote {
			t.Errorf("FormatRemoteTopic = %q, want %q", got, tc.remote)
		}
		if got := tc.p.OffsetSyncsTopic("B"); got != tc.offsetSyncs {
			t.Errorf("OffsetSyncsTopic = %q, want %q", got, tc.offsetSyncs)
		}
		if got := tc.p.CheckpointsTopic("A"); got != tc.checkpoints {
			t.Errorf("CheckpointsTopic = %q, want %q", got, tc.checkpoints)
		}
		if got := tc.p.HeartbeatsTopic(); got != tc.heartbe {
			t.Errorf("HeartbeatsTopic = %q", got)
		}
		if !tc.p.IsCheckpointsTopic(tc.checkpoints) || !tc.p.IsMM2InternalTopic(tc.offsetSyncs) || !tc.p.IsInternalTopic(tc.offsetSyncs) {
			t.Errorf("%s / %s not recognised as MirrorMaker's", tc.checkpoints, tc.offsetSyncs)
		}
	}
}

func TestPolicyPredicates(t *testing.T) {
	dot := NewDefaultReplicationPolicy()
	under := &DefaultReplicationPolicy{Separator: "_", InternalTopicSeparatorEnabled: true}
	id := &IdentityReplicationPolicy{DefaultReplicationPolicy: *NewDefaultReplicationPolicy(), SourceAlias: "A"}
	for _, tc := range []struct {
		p                                      ReplicationPolicy
		topic                                  string
		heartbeats, checkpoints, mm2, internal bool
	}{
		{dot, "heartbeats", true, false, false, false},
		{dot, "A.heartbeats", true, false, false, false},
		{dot, "A.B.heartbeats", true, false, false, false},
		{dot, "myheartbeats", false, false, false, false},
		{dot, "heartbeats.x", false, false, false, false},
		{dot, "A.checkpoints.internal", false, true, true, true},
		{dot, "mm2-offset-syncs.B.internal", false, false, true, true},
		{dot, "mm2-configs.A.internal", false, false, true, true},
		{dot, "__consumer_offsets", false, false, false, true},
		{dot, ".hidden", false, false, false, true},
		{dot, "connect-offsets-internal", false, false, false, true},
		{dot, "orders", false, false, false, false},
		{dot, "A.orders", false, false, false, false},
		{under, "A_checkpoints_internal", false, true, true, true},
		{under, "A.checkpoints.internal", false, false, false, true}, // Connect's ".internal", not MM2's under "_"
		{under, "A_heartbeats", true, false, false, false},
		{id, "heartbeats", true, false, false, false},
		{id, "B.heartbeats", true, false, false, false},
		{id, "orders", false, false, false, false},
		{id, "__transaction_state", false, false, false, true},
	} {
		if got := tc.p.IsHeartbeatsTopic(tc.topic); got != tc.heartbeats {
			t.Errorf("%T IsHeartbeatsTopic(%q) = %v", tc.p, tc.topic, got)
		}
		if got := tc.p.IsCheckpointsTopic(tc.topic); got != tc.checkpoints {
			t.Errorf("%T IsCheckpointsTopic(%q) = %v", tc.p, tc.topic, got)
		}
		if got := tc.p.IsMM2InternalTopic(tc.topic); got != tc.mm2 {
			t.Errorf("%T IsMM2InternalTopic(%q) = %v", tc.p, tc.topic, got)
		}
		if got := tc.p.IsInternalTopic(tc.topic); got != tc.internal {
			t.Errorf("%T IsInternalTopic(%q) = %v", tc.p, tc.topic, got)
		}
	}
}

func TestIdentityReplicationPolicy(t *testing.T) {
	p := &IdentityReplicationPolicy{DefaultReplicationPolicy: *NewDefaultReplicationPolicy(), SourceAlias: "A"}
	for _, tc := range []struct{ src, topic, want string }{
		{"A", "orders", "orders"},
		{"A", "B.orders", "B.orders"},
		{"A", "heartbeats", "A.heartbeats"},
		{"B", "A.heartbeats", "B.A.heartbeats"},
		// Anything ending in "heartbeats" is treated as a heartbeats topic, as Kafka does.
		{"A", "myheartbeats", "A.myheartbeats"},
	} {
		if got := p.FormatRemoteTopic(tc.src, tc.topic); got != tc.want {
			t.Errorf("FormatRemoteTopic(%q, %q) = %q, want %q", tc.src, tc.topic, got, tc.want)
		}
	}
	for _, tc := range []struct{ topic, source, upstream, original string }{
		{"orders", "A", "orders", "orders"},
		{"B.orders", "A", "B.orders", "B.orders"},
		{"heartbeats", "", "", "heartbeats"},
		{"B.heartbeats", "B", "heartbeats", "heartbeats"},
		{"C.B.heartbeats", "C", "B.heartbeats", "heartbeats"},
	} {
		if got := p.TopicSource(tc.topic); got != tc.source {
			t.Errorf("TopicSource(%q) = %q, want %q", tc.topic, got, tc.source)
		}
		if got := p.UpstreamTopic(tc.topic); got != tc.upstream {
			t.Errorf("UpstreamTopic(%q) = %q, want %q", tc.topic, got, tc.upstream)
		}
		if got := p.OriginalTopic(tc.topic); got != tc.original {
			t.Errorf("OriginalTopic(%q) = %q, want %q", tc.topic, got, tc.original)
		}
	}
	if got := p.OffsetSyncsTopic("B"); got != "mm2-offset-syncs.B.internal" {
		t.Errorf("OffsetSyncsTopic = %q", got)
	}
	if got := p.CheckpointsTopic("A"); got != "A.checkpoints.internal" {
		t.Errorf("CheckpointsTopic = %q", got)
	}
}

func TestIsCycle(t *testing.T) {
	dot := NewDefaultReplicationPolicy()
	id := &IdentityReplicationPolicy{DefaultReplicationPolicy: *NewDefaultReplicationPolicy(), SourceAlias: "A"}
	for _, tc := range []struct {
		p      ReplicationPolicy
		topic  string
		target string
		want   bool
	}{
		{dot, "B.topic", "B", true},
		{dot, "A.B.topic", "B", true},
		{dot, "C.A.B.topic", "B", true},
		{dot, "A.topic", "B", false},
		{dot, "A.C.topic", "B", false},
		{dot, "topic", "B", false},
		{dot, "B", "B", false},
		// Kafka's empty source for a leading separator does not end the walk.
		{dot, ".B.topic", "B", true},
		// Identity names carry no source: TopicSource is the flow's source, never the target.
		{id, "B.topic", "B", false},
		{id, "topic", "B", false},
		// ... but heartbeats keep the prefix, so their cycles are seen.
		{id, "B.heartbeats", "B", true},
		{id, "A.B.heartbeats", "B", true},
		{id, "A.heartbeats", "B", false},
		// The flow's source is the identity policy's answer: a target equal to it is a cycle.
		{id, "topic", "A", true},
	} {
		if got := IsCycle(tc.p, tc.topic, tc.target); got != tc.want {
			t.Errorf("%T IsCycle(%q, %q) = %v, want %v", tc.p, tc.topic, tc.target, got, tc.want)
		}
	}
}

func TestNewPolicy(t *testing.T) {
	for _, class := range []string{DefaultReplicationPolicyClass, "DefaultReplicationPolicy"} {
		p, err := newPolicy(class, "_", true, "A")
		if err != nil {
			t.Fatal(err)
		}
		if got := p.FormatRemoteTopic("A", "t"); got != "A_t" {
			t.Errorf("%s: %q", class, got)
		}
	}
	for _, class := range []string{IdentityReplicationPolicyClass, "IdentityReplicationPolicy"} {
		p, err := newPolicy(class, ".", true, "A")
		if err != nil {
			t.Fatal(err)
		}
		if got := p.TopicSource("t"); got != "A" {
			t.Errorf("%s: TopicSource = %q", class, got)
		}
	}
	_, err := newPolicy("com.example.MyPolicy", ".", true, "A")
	wantErr(t, err, "replication.policy.class: com.example.MyPolicy is not supported: Samsa implements only "+
		DefaultReplicationPolicyClass+" and "+IdentityReplicationPolicyClass)
	_, err = newPolicy(DefaultReplicationPolicyClass, "", true, "A")
	wantErr(t, err, "replication.policy.separator: empty")
}
