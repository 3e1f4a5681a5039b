package cli

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/samsa-io/samsa/internal/clock"
)

// BenchmarkBenchProducer measures the bench produce loop per record against
// a kfake cluster that discards what it is sent. Allocations include kgo's
// and kfake's; the loop itself adds none per record (before hoisting the
// promise method value it added one).
func BenchmarkBenchProducer(b *testing.B) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "b"), kfake.BlackholeProduce())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cmd := &cobra.Command{}
	conn := &connection{bootstrap: c.ListenAddrs()[0], clientID: "bench", timeout: defaultTimeout, clock: clock.Real}
	cmd.Flags().String("bootstrap-server", "", "")
	bf := &benchFlags{records: int64(b.N), recordSize: 100, topic: "b", acks: "all", compression: "none",
		linger: defaultLinger, batchSize: defaultBatchSize}
	run := &benchRun{cmd: cmd, conn: conn, flags: bf, clock: clock.Real, base: clock.Real.Now()}
	p, err := run.newProducer(b.Context(), 1)
	if err != nil {
		b.Fatal(err)
	}
	defer p.cl.Close()
	b.ReportAllocs()
	b.SetBytes(int64(bf.recordSize))
	b.ResetTimer()
	if err := p.run(b.Context(), int64(b.N), func(int64) {}); err != nil {
		b.Fatal(err)
	}
}
