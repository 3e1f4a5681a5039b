package kafkaref

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/console"
)

// TestConsoleOnApacheKafka: the console is a Kafka client only, so it
// shows and operates Apache Kafka 4.4 as it does Samsa: every page
// answers 200 with Kafka's own figures, a topic created from the form
// exists with its config (and Kafka's documentation of each config is
// inline), a record produced from the form is read back by the browser,
// a group's lag is right and a reset's preview changes nothing while its
// apply commits, and the security tab says the cluster has no authorizer
// rather than failing.
func TestConsoleOnApacheKafka(t *testing.T) {
	k := StartKafka(t)
	c, err := console.New(console.Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(k.Bootstrap)}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	t.Cleanup(func() { srv.Close(); c.Close() })
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string, form url.Values) (int, string, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, srv.URL+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Location")
	}
	page := func(path string, want ...string) string {
		t.Helper()
		st, body, _ := do(http.MethodGet, path, nil)
		if st != 200 {
			t.Fatalf("GET %s: status %d:\n%s", path, st, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Fatalf("GET %s lacks %q:\n%s", path, w, body)
			}
		}
		return body
	}
	csrf := regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)">`).FindStringSubmatch(page("/"))[1]
	post := func(path string, form url.Values) (int, string, string) {
		t.Helper()
		form.Set("_csrf", csrf)
		return do(http.MethodPost, path, form)
	}

	page("/", k.ClusterID, "Brokers", "KRaft quorum leader")
	if st, body, loc := post("/topics", url.Values{"name": {"orders"}, "partitions": {"3"}, "configs": {"retention.ms=3600000"}}); st != http.StatusSeeOther {
		t.Fatalf("create: status %d to %q:\n%s", st, loc, body)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	cfgs, err := adm.DescribeTopicConfigs(t.Context(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := cfgs.On("orders", func(rc *kadm.ResourceConfig) error { return rc.Err }); err != nil || v.Name != "orders" {
		t.Fatalf("orders on Kafka: %v", err)
	}
	page("/topics", "orders")
	page("/topics/orders", "orders", "Partitions")
	// Kafka's own words for retention.ms, from DescribeConfigs' documentation.
	page("/topics/orders/configs", "retention.ms", "3600000", "This configuration controls the maximum time we will retain a log")

	st, body, loc := post("/topics/orders/messages/produce", url.Values{"key": {"k1"}, "value": {`{"hello":"kafka"}`}, "partition": {"1"}})
	if st != http.StatusSeeOther || !strings.HasPrefix(loc, "/topics/orders/messages/1/") {
		t.Fatalf("produce: status %d to %q:\n%s", st, loc, body)
	}
	page(loc, "k1", "hello")
	page("/topics/orders/messages?from=oldest", "k1", "kafka")

	// A group with a committed offset behind the end: lag 1 on partition 1.
	off := kadm.Offsets{}
	off.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 0, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(t.Context(), "billing", off); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	page("/groups", "billing", "classic")
	page("/groups/billing", "billing", "orders")
	page("/groups/billing/reset?topic=orders&to=latest", "Apply")
	if got, _ := adm.FetchOffsets(t.Context(), "billing"); got["orders"][1].At != 0 {
		t.Fatalf("the preview moved the offset to %d", got["orders"][1].At)
	}
	if st, body, _ := post("/groups/billing/reset", url.Values{"set": {"orders:1:1"}}); st != http.StatusSeeOther {
		t.Fatalf("apply: status %d:\n%s", st, body)
	}
	if got, _ := adm.FetchOffsets(t.Context(), "billing"); got["orders"][1].At != 1 {
		t.Fatalf("after the reset the offset is %d, want 1", got["orders"][1].At)
	}

	page("/security", "no authorizer")
	page("/security/users")
	page("/security/quotas")
	page("/ops", "admin")
}
