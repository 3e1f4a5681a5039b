package schemaregistry

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// The registry's two hot calls through franz-go's sr.Client over loopback
// HTTP, against Samsa's registry on a real broker and against franz-go's
// in-memory fake (srfake) as the ceiling: no store, no Kafka, only HTTP and
// a map. sr.Client keeps no cache of its own (the caching is in sr.Serde),
// so every lookup is a request. docs/DESIGN-schemaregistry.md, Performance,
// has the figures.
//
//	go test -run '^$' -bench . -benchmem -count 5 ./internal/schemaregistry/

// benchTarget is a registry to measure: its URL and, for Samsa's, the
// Registry whose store the part benchmarks time directly.
type benchTarget struct {
	url string
	reg *Registry
}

func benchTargets(b *testing.B) map[string]func(b *testing.B) benchTarget {
	return map[string]func(b *testing.B) benchTarget{
		"samsa": func(b *testing.B) benchTarget {
			reg, srv := startRegistry(b, benchStore(b), benchTopic())
			return benchTarget{url: srv.URL, reg: reg}
		},
		"srfake": func(b *testing.B) benchTarget {
			fake := srfake.New()
			b.Cleanup(fake.Close)
			return benchTarget{url: fake.URL()}
		},
	}
}

// benchStore is the registry's Kafka: a Samsa broker of the benchmark's
// own, or the cluster SR_BENCH_BOOTSTRAP names (Apache Kafka, to tell the
// store's share of a registration from the registry's).
func benchStore(b *testing.B) *testBroker {
	if addr := os.Getenv("SR_BENCH_BOOTSTRAP"); addr != "" {
		return &testBroker{addr: addr}
	}
	return startBroker(b)
}

// benchTopic is a store topic no earlier run has written.
func benchTopic() string { return "_schemas-bench-" + strconv.FormatInt(time.Now().UnixNano(), 36) }

func benchClient(b *testing.B, url string) *sr.Client {
	cl, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		b.Fatal(err)
	}
	return cl
}

// benchSchema is a distinct Avro record for each n.
func benchSchema(n int) sr.Schema {
	return sr.Schema{Schema: fmt.Sprintf(
		`{"type":"record","name":"r%d","namespace":"bench","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":""}]}`, n)}
}

// BenchmarkSchemaByID: GET /schemas/ids/{id} over 100 registered schemas,
// round robin, one client at a time and 8 at once.
func BenchmarkSchemaByID(b *testing.B) {
	for _, name := range []string{"samsa", "srfake"} {
		b.Run(name, func(b *testing.B) {
			target := benchTargets(b)[name](b)
			cl := benchClient(b, target.url)
			ids := make([]int, 100)
			for i := range ids {
				ss, err := cl.CreateSchema(b.Context(), "lookup-"+strconv.Itoa(i), benchSchema(i))
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = ss.ID
			}
			b.Run("serial", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := cl.SchemaByID(b.Context(), ids[i%len(ids)]); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("parallel8", func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(8)
				var n atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := cl.SchemaByID(context.Background(), ids[int(n.Add(1))%len(ids)]); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		})
	}
}

// BenchmarkRegister: POST /subjects/{s}/versions of a schema never seen
// before, each under a new subject: a new ID every time.
func BenchmarkRegister(b *testing.B) {
	for _, name := range []string{"samsa", "srfake"} {
		b.Run(name, func(b *testing.B) {
			target := benchTargets(b)[name](b)
			cl := benchClient(b, target.url)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := cl.CreateSchema(b.Context(), "register-"+strconv.Itoa(i), benchSchema(1_000_000+i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStoreParts times the two store round trips every Samsa
// registration makes, on their own: catching up (ListOffsets, then the
// reader past the end) and writing one record (an acks=all produce, then
// the reader applying it). Their sum against BenchmarkRegister/samsa is
// the share of a registration spent waiting on Kafka; produce is the
// write's acks=all produce alone, without waiting for the reader.
func BenchmarkStoreParts(b *testing.B) {
	reg, _ := startRegistry(b, benchStore(b), benchTopic())
	b.Run("catchUp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := reg.store.catchUp(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("produce", func(b *testing.B) {
		key, err := json.Marshal(storeKey{Type: keyNoop})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := reg.store.prod.ProduceSync(b.Context(), &kgo.Record{Key: key, Partition: 0}).FirstErr(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		key := storeKey{Type: keyNoop}
		b.ReportAllocs()
		for b.Loop() {
			if err := reg.store.write(b.Context(), key, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
