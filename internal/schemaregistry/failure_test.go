package schemaregistry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// TestStoreUnavailable: with the broker gone (killed: connections
// refused) or hung (stopped: connections accepted, never answered), a
// write answers a store error within the registry's timeout instead of
// hanging or claiming success, and reads keep answering from the state
// already read.
func TestStoreUnavailable(t *testing.T) {
	for _, c := range []struct {
		name string
		stop func(*testBroker, *testing.T)
		want []string
	}{
		{"killed", (*testBroker).kill, []string{`"error_code":5000`, "Register operation "}},
		{"frozen", (*testBroker).freeze, []string{`"error_code":50002`, "Register operation timed out"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := startBroker(t)
			_, srv := startRegistryTimeout(t, b, "_schemas", 2*time.Second)
			if status, got, _ := do(t, srv.URL, apiStep{method: "POST", path: "/subjects/a/versions", body: body(s1)}); status != 200 {
				t.Fatalf("register: %d %s", status, got)
			}
			c.stop(b, t)
			start := time.Now()
			status, got, _ := do(t, srv.URL, apiStep{method: "POST", path: "/subjects/a/versions", body: body(s2)})
			if status != 500 || !matches(got, apiStep{contains: c.want}) {
				t.Errorf("register with the broker %s: %d %s", c.name, status, got)
			}
			if d := time.Since(start); d > 6*time.Second {
				t.Errorf("the failed write took %s; the timeout is 2s", d)
			}
			s := apiStep{method: "GET", path: "/subjects/a/versions/1", status: 200, want: version("a", 1, 1, s1)}
			if status, got, _ := do(t, srv.URL, s); status != 200 || !matches(got, s) {
				t.Errorf("read with the broker %s: %d %s", c.name, status, got)
			}
		})
	}
}

// TestConcurrentRegistrations: registrations racing on one instance get
// distinct versions and IDs, and the same schema one ID.
func TestConcurrentRegistrations(t *testing.T) {
	b := startBroker(t)
	_, srv := startRegistry(t, b, "_schemas")
	const n = 8
	ids := make([]string, n)
	var mu sync.Mutex
	g := task.NewGroup(context.Background())
	for i := range n {
		g.Go(func(context.Context) {
			// Each subject gets its own field name: a different schema per
			// goroutine, all compatible with a first version of none.
			sch := fmt.Sprintf(`{"type":"record","name":"r%d","fields":[{"name":"f","type":"int"}]}`, i%4)
			got := "no answer"
			resp, err := http.Post(fmt.Sprintf("%s/subjects/s%d/versions", srv.URL, i), contentType, strings.NewReader(body(sch)))
			if err == nil {
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got = strings.TrimSpace(string(raw))
			}
			mu.Lock()
			ids[i] = got
			mu.Unlock()
		})
	}
	g.Stop()
	// Schemas i and i+4 are the same: same ID; the four differ.
	seen := map[string]int{}
	for i := range n {
		if ids[i] != ids[i%4] {
			t.Errorf("subject s%d got %s, s%d got %s: the same schema", i, ids[i], i%4, ids[i%4])
		}
		seen[ids[i]]++
	}
	if len(seen) != 4 {
		t.Errorf("IDs %v: want 4 distinct", ids)
	}
	for _, id := range []string{`{"id":1}`, `{"id":2}`, `{"id":3}`, `{"id":4}`} {
		if seen[id] != 2 {
			t.Errorf("IDs %v: want 1 to 4, each twice", ids)
			break
		}
	}
}
