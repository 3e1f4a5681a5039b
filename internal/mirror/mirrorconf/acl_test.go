package mirrorconf

import "testing"

func TestACLSync(t *testing.T) {
	topicACL := func(op, perm int8) ACLBinding {
		return ACLBinding{ResourceType: ResourceTypeTopic, PatternType: PatternTypeLiteral, ResourceName: "orders",
			Principal: "User:alice", Host: "*", Operation: op, Permission: perm}
	}
	const (
		groupType    int8 = 3 // ResourceType.GROUP
		prefixed     int8 = 4 // PatternType.PREFIXED
		opDescribe   int8 = 8 // AclOperation.DESCRIBE
		opIdempotent int8 = 12
	)
	prefixedACL := topicACL(OperationRead, PermissionAllow)
	prefixedACL.PatternType = prefixed
	groupACL := topicACL(OperationRead, PermissionAllow)
	groupACL.ResourceType = groupType
	for _, tc := range []struct {
		name string
		b    ACLBinding
		want bool
	}{
		{"allow read", topicACL(OperationRead, PermissionAllow), true},
		{"allow describe", topicACL(opDescribe, PermissionAllow), true},
		{"allow all", topicACL(OperationAll, PermissionAllow), true},
		{"allow write is never copied", topicACL(OperationWrite, PermissionAllow), false},
		{"deny write", topicACL(OperationWrite, PermissionDeny), true},
		{"deny all", topicACL(OperationAll, PermissionDeny), true},
		{"allow idempotent write", topicACL(opIdempotent, PermissionAllow), true},
		{"prefixed", prefixedACL, false},
		{"group", groupACL, false},
	} {
		if got := ShouldReplicateACL(tc.b); got != tc.want {
			t.Errorf("%s: ShouldReplicateACL = %v, want %v", tc.name, got, tc.want)
		}
	}

	dot := NewDefaultReplicationPolicy()
	got := TargetACL(topicACL(OperationAll, PermissionAllow), dot, "A")
	want := topicACL(OperationRead, PermissionAllow)
	want.ResourceName = "A.orders"
	if got != want {
		t.Errorf("allow all: TargetACL = %+v, want %+v", got, want)
	}
	got = TargetACL(topicACL(OperationAll, PermissionDeny), dot, "A")
	want = topicACL(OperationAll, PermissionDeny)
	want.ResourceName = "A.orders"
	if got != want {
		t.Errorf("deny all: TargetACL = %+v, want %+v", got, want)
	}
	got = TargetACL(topicACL(opDescribe, PermissionAllow), dot, "A")
	if got.Operation != opDescribe || got.Principal != "User:alice" || got.Host != "*" {
		t.Errorf("describe: TargetACL = %+v", got)
	}
	id := &IdentityReplicationPolicy{DefaultReplicationPolicy: *dot, SourceAlias: "A"}
	if got := TargetACL(topicACL(OperationRead, PermissionAllow), id, "A"); got.ResourceName != "orders" {
		t.Errorf("identity: TargetACL name %q", got.ResourceName)
	}
}
