package streams_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/streams"
)

// metricSum adds up a metric's samples from the app's Prometheus text.
func metricSum(t *testing.T, app *streams.App, name string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	app.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	sum := 0.0
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	return sum
}

// TestStandbyFailoverRestoresLittle runs a count on two instances, closes
// one, and measures what the survivor restores to take its tasks over:
// with a standby replica only the changelog's tail, without one the whole
// changelog of the moved tasks.
func TestStandbyFailoverRestoresLittle(t *testing.T) {
	bootstrap, _ := devcluster.StartTestBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	restored := map[int]float64{}
	for _, standbys := range []int{0, 1} {
		in, out := fmt.Sprintf("sb%d-in", standbys), fmt.Sprintf("sb%d-out", standbys)
		for _, topic := range []string{in, out} {
			if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 4, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
		}
		const keys, records = 400, 4000
		var recs []*kgo.Record
		for i := 0; i < records; i++ {
			recs = append(recs, &kgo.Record{Topic: in, Key: []byte(fmt.Sprint("k", i%keys)), Value: []byte("v")})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		start := func() *streams.App {
			b := streams.NewBuilder()
			streams.From[string, string](b, []string{in}).GroupByKey().Count(streams.Materialized[string, int64]{StoreName: "counts"}).ToStream().To(out)
			topo, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			zero := int64(0)
			app, err := streams.New(topo, streams.Config{ApplicationID: fmt.Sprintf("sb%d", standbys), BootstrapServers: []string{bootstrap},
				NumStandbyReplicas: standbys, StateDir: t.TempDir(), CacheMaxBytes: &zero, CommitInterval: 100 * time.Millisecond,
				ClientOptions: []kgo.Opt{kgo.SessionTimeout(6 * time.Second), kgo.HeartbeatInterval(500 * time.Millisecond)}})
			if err != nil {
				t.Fatal(err)
			}
			if err := app.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			return app
		}
		a, b := start(), start()
		defer b.Close()
		// Wait until all is processed and the standbys (if any) caught up:
		// every record's update is out, and the survivor's standby
		// counter stopped moving.
		waitFor(t, 60*time.Second, func() bool { return outputCount(t, cl, out) >= records })
		waitFor(t, 30*time.Second, func() bool {
			if standbys == 0 {
				return true
			}
			return metricSum(t, a, "samsa_streams_standby_records_total")+metricSum(t, b, "samsa_streams_standby_records_total") >= records
		})
		before := metricSum(t, b, "samsa_streams_restored_records_total")
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		// b owns every task once its restored count stops changing and it
		// processes new records.
		more := []*kgo.Record{}
		for i := 0; i < keys; i++ {
			more = append(more, &kgo.Record{Topic: in, Key: []byte(fmt.Sprint("k", i)), Value: []byte("v")})
		}
		if err := cl.ProduceSync(context.Background(), more...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, func() bool { return outputCount(t, cl, out) >= records+keys })
		restored[standbys] = metricSum(t, b, "samsa_streams_restored_records_total") - before
		t.Logf("num.standby.replicas=%d: the survivor restored %.0f changelog records to take over", standbys, restored[standbys])
	}
	if restored[0] < 1000 {
		t.Fatalf("without standbys the survivor restored only %.0f records: the failover did not move state", restored[0])
	}
	if restored[1] > restored[0]/10 {
		t.Fatalf("with a standby the survivor restored %.0f records, without %.0f: standbys did not keep the state warm", restored[1], restored[0])
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func outputCount(t *testing.T, cl *kgo.Client, topic string) int64 {
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}
