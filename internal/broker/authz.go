package broker

import "sync/atomic"

// authorizerEnabled reports whether the broker has an authorizer (Kafka's
// authorizer.class.name). None is wired in yet, so the ACL APIs answer
// SECURITY_DISABLED, as Kafka's broker does without one. This is the seam
// the authorizer replaces.
func (b *Broker) authorizerEnabled() bool { return testAuthorizerEnabled.Load() }

// testAuthorizerEnabled lets tests serve the ACL APIs as if an authorizer
// were configured (enableAuthorizerForTest).
var testAuthorizerEnabled atomic.Bool
