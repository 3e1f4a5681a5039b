package console

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// TestTopicsACLDenial: a topic the console's identity may not see is a
// 403 naming Kafka's error on its page, on its configs and on delete
// (the topic stays), and it is left out of the list.
func TestTopicsACLDenial(t *testing.T) {
	tc := startConsole(t, Config{},
		"--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"--override", "allow.everyone.if.no.acl.found=true")
	if _, err := tc.Admin.CreateTopic(ctx(t), 1, 1, nil, "secret"); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Admin.CreateTopic(ctx(t), 1, 1, nil, "open"); err != nil {
		t.Fatal(err)
	}
	// Deleting is authorized on the cluster first (as in Kafka's
	// ControllerApis), so the cluster's DELETE is denied too.
	acl := kadm.NewACLs().Topics("secret").ResourcePatternType(kadm.ACLPatternLiteral).
		Deny("User:ANONYMOUS").DenyHosts().Operations(kadm.OpAll)
	clusterACL := kadm.NewACLs().Clusters().ResourcePatternType(kadm.ACLPatternLiteral).
		Deny("User:ANONYMOUS").DenyHosts().Operations(kadm.OpDelete)
	// With an ACL on the cluster, "no ACL found" no longer lets the test
	// delete ACLs: allow that.
	alterACL := kadm.NewACLs().Clusters().ResourcePatternType(kadm.ACLPatternLiteral).
		Allow("User:ANONYMOUS").AllowHosts().Operations(kadm.OpAlter)
	for _, a := range []*kadm.ACLBuilder{alterACL, acl, clusterACL} {
		if res, err := tc.Admin.CreateACLs(ctx(t), a); err != nil || res[0].Err != nil {
			t.Fatalf("create ACL: %v %v", err, res)
		}
	}
	for _, p := range []string{"/topics/secret", "/topics/secret/configs", "/topics/secret/delete"} {
		st, body := tc.get(p)
		if st != http.StatusForbidden || !strings.Contains(body, "TOPIC_AUTHORIZATION_FAILED") {
			t.Errorf("%s: status %d, want 403 with TOPIC_AUTHORIZATION_FAILED:\n%s", p, st, body)
		}
	}
	st, body, _ := tc.post("/topics/secret/delete", url.Values{"confirm": {"secret"}})
	if st != http.StatusForbidden || !strings.Contains(body, "TOPIC_AUTHORIZATION_FAILED") {
		t.Errorf("delete: status %d, want 403:\n%s", st, body)
	}
	st, body = tc.get("/topics")
	if st != 200 || strings.Contains(body, `href="/topics/secret"`) || !strings.Contains(body, `href="/topics/open"`) {
		t.Errorf("list: status %d, want open listed and secret hidden:\n%s", st, body)
	}
	if res, err := tc.Admin.DeleteACLs(ctx(t), acl); err != nil || len(res) != 1 || res[0].Err != nil || len(res[0].Deleted) != 1 {
		t.Fatalf("delete ACL: %v %+v", err, res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !topicsExists(t, tc, "secret") {
		if time.Now().After(deadline) {
			t.Fatal("the denied delete deleted secret")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTopicsBrokerDown: with one broker of three killed, the topic's
// partitions it led show leader "none (offline)" once the controller
// fences it, and the list and the topic page still answer 200, the
// offsets of the live partitions shown.
func TestTopicsBrokerDown(t *testing.T) {
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dc, err := devcluster.New(devcluster.Config{Binary: bin, Dir: t.TempDir(), Nodes: 3, StopTimeout: 10 * time.Second,
		Overrides: map[string]string{"samsa.schema.registry.listener": "", "samsa.http.listener": "", "samsa.rest.listener": ""}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster logs:\n%s", dc.LogTails(20))
		}
		dc.Close()
	})
	sctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	if err := dc.Start(sctx); err != nil {
		t.Fatal(err)
	}
	// Every node is a seed, as an operator would give them: a console
	// whose only seed is the dead node cannot reach the cluster at all.
	tc := startConsoleOn(t, dc.Addrs()[0], Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(dc.Addrs()...)}})
	// One replica each, so a dead broker takes its partitions offline
	// (the cluster's min.insync.replicas of 2 would refuse acks=all).
	one := "1"
	if _, err := tc.Admin.CreateTopic(ctx(t), 6, 1, map[string]*string{"min.insync.replicas": &one}, "spread"); err != nil {
		t.Fatal(err)
	}
	topicsProduce(t, tc, "spread", 2, 0, 1, 2, 3, 4, 5)
	md, err := topicsMetadata(ctx(t), tc.Client, "spread")
	if err != nil {
		t.Fatal(err)
	}
	victim := md["spread"].Partitions[0].Leader
	if err := dc.Node(victim).Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		md, err := topicsMetadata(ctx(t), tc.Client, "spread")
		if err == nil && md["spread"].Partitions[0].Leader < 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition 0 still has a leader 30 s after broker %d was killed", victim)
		}
		time.Sleep(200 * time.Millisecond)
	}
	start := time.Now()
	st, body := tc.get("/topics/spread")
	took := time.Since(start)
	if st != 200 {
		t.Fatalf("topic page with a broker down: %d\n%s", st, body)
	}
	if r := regexp.MustCompile(`(?s)<tr>\s*<td class="num">0</td>.*?</tr>`).FindString(body); !strings.Contains(r, "none (offline)") {
		t.Errorf("partition 0's row does not say it is offline: %q", r)
	}
	if !regexp.MustCompile(`<td class="num">0</td><td class="num">2</td>`).MatchString(body) {
		t.Errorf("no live partition shows its offsets (0 to 2):\n%s", body)
	}
	t.Logf("topic page with a broker down answered in %v", took)
	if st, body := tc.get("/topics"); st != 200 || !strings.Contains(body, "offline") {
		t.Errorf("list with a broker down: %d\n%s", st, body)
	}
}
