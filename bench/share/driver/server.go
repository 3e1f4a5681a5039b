package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/bench/internal/kafkanode"
	"github.com/samsa-io/samsa/bench/internal/procstat"
)

// server is one broker a run measures, of either kind.
type server struct {
	kind  string
	addr  string
	pid   int
	log   string
	admin *kadm.Client
	stop  func()
}

// startServer starts a fresh broker of kind with its data in dir.
func startServer(ctx context.Context, o options, kind, dir string) (*server, error) {
	switch kind {
	case brokerSamsa:
		b, err := procstat.StartBroker(ctx, o.samsa, dir)
		if err != nil {
			return nil, err
		}
		return &server{kind: kind, addr: b.Addr, pid: b.PID(), log: b.Log, admin: b.Admin,
			stop: func() { b.Admin.Close(); b.Stop(10 * time.Second) }}, nil
	case brokerKafka:
		n, err := kafkanode.Start(ctx, kafkanode.Options{Java: o.java, Libs: o.kafkaLibs, Log4j: o.log4j,
			Heap: o.kafkaHeap, Extra: o.kafkaProps}, dir)
		if err != nil {
			return nil, err
		}
		return &server{kind: kind, addr: n.Addr, pid: n.PID(), log: n.Log, admin: n.Admin,
			stop: func() { n.Stop(15 * time.Second) }}, nil
	}
	return nil, fmt.Errorf("unknown broker %q", kind)
}
