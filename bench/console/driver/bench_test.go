package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/console"
	"github.com/samsa-io/samsa/internal/devcluster"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// BenchmarkPages is the benchmark's small form for go test -bench (make
// bench BENCH=Pages PKGS=./bench/console/driver/): one broker, a topic of
// 100,000 records in 100 partitions and two groups on it, the console in
// process; each sub-benchmark requests one page as a browser does. The
// large data set is make bench-console's.
func BenchmarkPages(b *testing.B) {
	addr, _ := devcluster.StartTestBroker(b)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	o := options{records: 100_000, partitions: 100, clusterPartitions: 100, topicPartitions: 1, valueBytes: 100,
		batchBytes: 16384, producers: 2, readerGroups: 2}
	d, _, err := loadData(b.Context(), o, &cluster{addrs: []string{addr}, admin: kadm.NewClient(cl), cl: cl},
		filepath.Join(b.TempDir(), "dataset.json"))
	if err != nil {
		b.Fatal(err)
	}
	con, err := console.New(console.Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}})
	if err != nil {
		b.Fatal(err)
	}
	defer con.Close()
	srv := httptest.NewServer(con)
	defer srv.Close()
	br := newBrowser(srv.URL, nil)
	for _, p := range pages {
		path := d.expand(p.path)
		b.Run(p.name, func(b *testing.B) {
			if status, _, _, err := br.get(b.Context(), path); err != nil || status != http.StatusOK {
				b.Skipf("%s: status %d, %v", path, status, err)
			}
			for b.Loop() {
				if status, _, _, err := br.get(b.Context(), path); err != nil || status != http.StatusOK {
					b.Fatalf("%s: status %d, %v", path, status, err)
				}
			}
		})
	}
}
