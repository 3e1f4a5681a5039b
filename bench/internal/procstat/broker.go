package procstat

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/freeport"
)

// Broker is one `samsa serve` a benchmark runs.
type Broker struct {
	*Process
	Addr  string
	Admin *kadm.Client
}

// StartBroker runs one `samsa serve` of bin on a free loopback port, data
// and log in dir, with no HTTP listeners (their default ports may be
// taken) and no initial rebalance delay (the groups a benchmark starts
// join at once, as in Kafka's test setups), and waits until it answers
// metadata.
func StartBroker(ctx context.Context, bin, dir string) (*Broker, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freeport.One()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "serve",
		"--listeners", "PLAINTEXT://"+addr,
		"--log.dirs", filepath.Join(dir, "data"),
		"--override", "group.initial.rebalance.delay.ms=0",
		"--override", "samsa.http.listener=",
		"--override", "samsa.schema.registry.listener=",
		"--override", "samsa.rest.listener=",
	)
	p, err := Start(cmd, filepath.Join(dir, "broker.log"))
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		p.Stop(5 * time.Second)
		return nil, err
	}
	b := &Broker{Process: p, Addr: addr, Admin: kadm.NewClient(cl)}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if !p.Alive() {
			return nil, fmt.Errorf("broker exited (log %s)", p.Log)
		}
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := b.Admin.ListBrokers(c)
		cancel()
		if err == nil {
			return b, nil
		}
		if time.Now().After(deadline) {
			b.Admin.Close()
			p.Stop(10 * time.Second)
			return nil, fmt.Errorf("broker not ready after 30s: %w (log %s)", err, p.Log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
