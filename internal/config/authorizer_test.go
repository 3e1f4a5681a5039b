package config

import (
	"strings"
	"testing"
)

// authorizer.class.name takes StandardAuthorizer or nothing, and says why
// ZooKeeper's authorizer is refused; super.users must hold Type:Name
// principals.
func TestAuthorizerConfigs(t *testing.T) {
	for _, tt := range []struct {
		raw  map[string]string
		want string // "" for accepted
	}{
		{map[string]string{"authorizer.class.name": ""}, ""},
		{map[string]string{"authorizer.class.name": StandardAuthorizer}, ""},
		{map[string]string{"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"}, "ZooKeeper's ACL authorizer, removed in Kafka 4"},
		{map[string]string{"authorizer.class.name": "com.example.MyAuthorizer"}, "use org.apache.kafka.metadata.authorizer.StandardAuthorizer"},
		{map[string]string{"super.users": "User:admin; User:ops;"}, ""},
		{map[string]string{"super.users": "User:admin;ops"}, "expected a string in format principalType:principalName but got ops"},
		{map[string]string{"allow.everyone.if.no.acl.found": "true"}, ""},
	} {
		_, err := Parse(Broker, tt.raw)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: %v", tt.raw, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: %v, want an error with %q", tt.raw, err, tt.want)
		}
	}
}
