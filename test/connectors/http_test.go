package connectors

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// flakyServer answers every third request 500 (before reading what it
// was sent) and records the bodies of the others, in arrival order.
type flakyServer struct {
	mu       sync.Mutex
	requests int
	failed   int
	bodies   []string
}

func (s *flakyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if s.requests%3 == 0 {
		s.failed++
		http.Error(w, "injected failure", http.StatusInternalServerError)
		return
	}
	s.bodies = append(s.bodies, string(body))
	w.WriteHeader(http.StatusOK)
}

func (s *flakyServer) delivered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// TestHTTPSink: a three-partition topic -> HttpSinkConnector -> a loopback
// server that fails every third request with 500. Every record is
// delivered, each once, in order per partition (the sink retries a
// failed request before it sends the next).
func TestHTTPSink(t *testing.T) {
	const (
		partitions = 3
		n          = 300 // per partition
	)
	srv := &flakyServer{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })

	createTopic(t, "events", partitions)
	cl := newClient(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("events"))
	g := startGroup(t, "e2e-http")
	g.create("http", map[string]string{
		"connector.class":      "io.confluent.connect.http.HttpSinkConnector",
		"topics":               "events",
		"http.api.url":         "http://" + l.Addr().String() + "/events",
		"request.body.format":  "string",
		"batch.max.size":       "5",
		"batch.separator":      "\n",
		"retry.backoff.ms":     "10",
		"retry.backoff.policy": "CONSTANT_VALUE",
		"max.retries":          "5",
		"tasks.max":            "2",
	})
	g.running("http", 2)
	for i := range n {
		for p := range partitions {
			cl.Produce(t.Context(), &kgo.Record{Partition: int32(p), Value: jsonEnvelope(`{"type":"string"}`, fmt.Sprintf("p%d-%05d", p, i))},
				func(_ *kgo.Record, err error) {
					if err != nil {
						t.Errorf("produce: %v", err)
					}
				})
		}
	}
	if err := cl.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got map[int][]int
	eventually(t, 90*time.Second, "every record delivered", func() (bool, string) {
		g.failIfFailed("http")
		got = map[int][]int{}
		total := 0
		for _, b := range srv.delivered() {
			for _, v := range strings.Split(b, "\n") {
				var p, i int
				if _, err := fmt.Sscanf(v, "p%d-%d", &p, &i); err != nil || p < 0 || p >= partitions {
					t.Fatalf("request body %q: record %q is not one produced", b, v)
				}
				got[p] = append(got[p], i)
				total++
			}
		}
		return total >= partitions*n, strconv.Itoa(total)
	})
	for p := range partitions {
		if len(got[p]) != n {
			t.Fatalf("partition %d: %d records delivered, want %d each once", p, len(got[p]), n)
		}
		for i, v := range got[p] {
			if v != i {
				t.Fatalf("partition %d: delivery %d is record %d (out of order or repeated): %v", p, i, v, got[p])
			}
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.failed == 0 {
		t.Fatal("no request failed: the test did not test retries")
	}
	t.Logf("%d records per partition delivered in order, %d requests, %d answered 500", n, srv.requests, srv.failed)
}
