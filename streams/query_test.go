package streams_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/streams"
)

// TestInteractiveQueries counts words on two instances and reads every
// count through one instance's HTTP endpoint: its own keys from its store,
// the other's through a redirect to the instance QueryMetadataForKey names.
func TestInteractiveQueries(t *testing.T) {
	bootstrap, _ := devcluster.StartTestBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, topic := range []string{"wc-in", "wc-out"} {
		if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 4, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	want := produceLines(t, cl, 500)
	var apps []*streams.App
	var servers []*httptest.Server
	for i := 0; i < 2; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		zero := int64(0)
		app, err := streams.New(wordCount(t, "counts"), streams.Config{ApplicationID: "iq", BootstrapServers: []string{bootstrap},
			ApplicationServer: ln.Addr().String(), StateDir: t.TempDir(), CacheMaxBytes: &zero, CommitInterval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		streams.ServeKeyValueStore[string, int64](mux, "/v1", app, "counts", func(s string) (string, error) { return s, nil })
		srv := httptest.NewUnstartedServer(mux)
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		defer srv.Close()
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer app.Close()
		apps, servers = append(apps, app), append(servers, srv)
	}
	readCounts(t, bootstrap, want, false)
	local := map[int]int{}
	waitFor(t, 30*time.Second, func() bool {
		// Every word readable through instance 0's endpoint, with its count.
		for w, n := range want {
			resp, err := http.Get(servers[0].URL + "/v1/stores/counts/keys/" + w)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Value int64 `json:"value"`
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || err != nil || body.Value != n {
				return false
			}
		}
		return true
	})
	for w := range want {
		found := 0
		for i, app := range apps {
			_, _, ok, err := streams.QueryKey[string, int64](app, "counts", w)
			if err != nil && !errors.Is(err, streams.ErrNotLocal) {
				t.Fatal(err)
			}
			if ok {
				found++
				local[i]++
			}
		}
		if found != 1 {
			t.Fatalf("word %s is local to %d instances", w, found)
		}
	}
	if local[0] == 0 || local[1] == 0 {
		t.Fatalf("the keys did not spread over both instances: %v", local)
	}
	// The metrics count what was processed and the store's entries.
	waitFor(t, 10*time.Second, func() bool {
		return metricSum(t, apps[0], "samsa_streams_store_entries")+metricSum(t, apps[1], "samsa_streams_store_entries") == float64(len(want))
	})
	if n := metricSum(t, apps[0], "samsa_streams_records_processed_total") + metricSum(t, apps[1], "samsa_streams_records_processed_total"); n < 500 {
		t.Fatalf("the instances processed %v records, want at least the 500 lines", n)
	}
	resp, err := http.Get(servers[0].URL + "/v1/stores/counts/keys/no-such-word")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an absent key answered %d", resp.StatusCode)
	}
}
