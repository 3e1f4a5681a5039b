package auth

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// benchACLs is a cluster of 100 teams: 5,000 literal ACLs on topics and
// groups and 5,000 prefixed ones on team prefixes of several lengths,
// plus a few wildcards and DENYs.
func benchACLs() []ACL {
	var acls []ACL
	for i := range 5000 {
		team := i % 100
		user := fmt.Sprintf("User:svc-%d", team)
		rt := rtTopic
		if i%5 == 0 {
			rt = rtGroup
		}
		acls = append(acls, newACL(rt, ptLiteral, fmt.Sprintf("team-%d.topic-%d", team, i), user, permAllow, opRead))
		prefix := fmt.Sprintf("team-%d.%s", team, "stream-"[:1+i%7])
		p := newACL(rtTopic, ptPrefixed, fmt.Sprintf("%s%d", prefix, i), user, permAllow, opWrite)
		if i%50 == 0 {
			p.Permission, p.Principal = permDeny, "User:*"
		}
		acls = append(acls, p)
	}
	acls = append(acls,
		newACL(rtTopic, ptLiteral, "*", "User:monitor", permAllow, opDescribe),
		newACL(rtTopic, ptPrefixed, "team-", "User:auditor", permAllow, opDescribe),
		withHost(newACL(rtTopic, ptLiteral, "*", "User:*", permDeny, opDelete), "10.9.9.9"))
	return acls
}

func BenchmarkAuthorize(b *testing.B) {
	acls := benchACLs()
	a := NewAuthorizer(acls, AuthorizerOptions{SuperUsers: []Principal{User("admin")}})
	queries := []struct {
		who  Principal
		op   kmsg.ACLOperation
		rt   kmsg.ACLResourceType
		name string
	}{
		{User("svc-7"), opRead, rtTopic, "team-7.topic-107"},           // literal allow
		{User("svc-7"), opWrite, rtTopic, "team-7.st1407-events"},      // prefixed, no match
		{User("svc-7"), opDescribe, rtTopic, "team-7.topic-107"},       // implied
		{User("svc-8"), opRead, rtTopic, "team-7.topic-107"},           // another team's
		{User("monitor"), opDescribe, rtTopic, "team-42.topic-42"},     // wildcard
		{User("admin"), opAlter, rtCluster, ClusterName},               // super user
		{User("svc-3"), opRead, rtGroup, "team-3.topic-3003"},          // group (i%5 == 0 is a group)
		{User("svc-3"), opWrite, rtTopic, "team-3.stream-" + "x12345"}, // long name, many prefix lengths
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q := &queries[i%len(queries)]
		a.Authorize(q.who, "10.0.0.1", q.op, q.rt, q.name)
	}
}
