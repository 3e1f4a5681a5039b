package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// clusterBrokers are the cluster mode's brokers by default: the two
// three-node clusters and the single Samsa node (RF 1) to compare with.
const clusterBrokers = "samsa-3,kafka-3,samsa"

// clusterKinds are the brokers the cluster mode knows: the clusters, and
// every single-node kind of the main comparison except kfake (no
// replication, no acks to wait for).
func (d *driver) clusterKinds(single map[string]brokerKind) map[string]clusterKind {
	kafka := single["kafka"].(kafkaKind)
	out := map[string]clusterKind{
		"samsa-3": samsaCluster{bin: d.o.samsaBin, n: 3},
		"kafka-3": kafkaCluster{kafka: kafka, n: 3},
	}
	for name, k := range single {
		if k.full() {
			out[name] = singleNode{kind: k}
		}
	}
	return out
}

// runClusters is run for -cluster: every round runs clusterPhase on each
// broker in the rotated order.
func (d *driver) runClusters(single map[string]brokerKind) error {
	kinds := d.clusterKinds(single)
	for _, name := range d.o.brokers {
		if kinds[name] == nil {
			return fmt.Errorf("unknown broker %q in the cluster mode (samsa-3, kafka-3, or a single node: samsa, samsa-durable, kafka)", name)
		}
	}
	d.emit(result{Kind: "meta", Meta: d.meta()})
	for r := d.o.firstRound; r < d.o.firstRound+d.o.rounds; r++ {
		for _, name := range roundOrder(d.o.brokers, r) {
			d.clusterPhase(r, kinds[name])
		}
	}
	return nil
}

// clusterWorkloads are the cluster mode's measurements: produce to 8
// partitions, 1 KiB records then 100 B, acks=all then acks=1; then the
// end-to-end latency at a fixed rate, acks=all, linger 0 and 5 ms. Every
// topic has the kind's replication factor. Each produce run ends with the
// replication barrier: after an acks=1 run the followers are still
// copying (hundreds of MB behind at 1 KiB), and without it that work, its
// CPU and its contention fell on the next workload (the 100 B acks=all run
// after the 1 KiB acks=1 one, the e2e run after 100 B acks=1).
func (d *driver) clusterWorkloads(rf int) []workload {
	var ws []workload
	for _, size := range []int{1024, 100} {
		for _, acks := range []string{"all", "1"} {
			ws = append(ws, workload{kind: "produce", size: size, partitions: 8, replication: rf, acks: acks,
				linger: d.o.produceLinger, topic: fmt.Sprintf("t%d-p8-acks%s", size, acks), records: d.o.records,
				waitReplicated: true})
		}
	}
	for _, linger := range []time.Duration{0, 5 * time.Millisecond} {
		ws = append(ws, workload{kind: "e2e", size: 100, partitions: 1, replication: rf, acks: "all", linger: linger,
			rate: d.o.e2eRate, topic: fmt.Sprintf("e2e-linger%d", linger.Milliseconds()), records: d.o.e2eRecords})
	}
	return ws
}

// clusterPhase starts kind on a fresh directory, records the time to
// ready and each process's idle RSS, warms up (not recorded) and runs the
// cluster workloads; the directory is removed afterwards. Any failure
// becomes an error line, with the nodes' log tails saved beside the
// results.
func (d *driver) clusterPhase(round int, kind clusterKind) {
	dir := filepath.Join(d.o.work, fmt.Sprintf("r%d-%s-cluster", round, kind.name()))
	d.logf("round %d: %s: cluster phase (%d node(s), RF %d)", round, kind.name(), kind.nodes(), kind.replication())
	c, err := kind.start(dir, d.o.startTimeout)
	if err == nil {
		err = d.clusterWork(round, kind, c)
		if err != nil {
			_ = os.WriteFile(filepath.Join(d.o.out, fmt.Sprintf("r%d-%s-cluster-broker.log.tail", round, kind.name())),
				[]byte(c.logTail()), 0o644)
		}
		c.close()
	}
	if err != nil {
		d.logf("round %d: %s: cluster: %v", round, kind.name(), err)
		d.emit(result{Kind: "error", Round: round, Broker: kind.name(), Workload: "cluster", Error: err.Error()})
	}
	if d.o.keepLogs {
		d.keepClusterLogs(dir)
	}
	os.RemoveAll(dir)
}

func (d *driver) clusterWork(round int, kind clusterKind, c cluster) error {
	ready := time.Since(c.startedAt())
	time.Sleep(2 * time.Second) // let start-up work settle before reading idle memory
	pids := c.pids()
	idle, err := readEach(pids, "VmRSS")
	if err != nil {
		return err
	}
	st := result{Kind: "start", Round: round, Broker: kind.name(), Nodes: len(pids), Replication: kind.replication(),
		ReadyMS: ms(ready), IdleRSSKB: slices.Max(idle)}
	if len(pids) > 1 {
		st.IdleRSSKBNodes = idle
	}
	d.emit(st)
	d.logf("round %d: %s: ready after %.0fms, idle RSS per node %v KiB", round, kind.name(), ms(ready), idle)

	// Warm-up, not recorded, as in the main phase.
	warm := max(d.o.records/10, 10_000)
	rf := strconv.Itoa(kind.replication())
	if _, err := d.bench([]string{"bench", "produce", "--bootstrap-server", c.bootstrap(), "--json", "--topic", "warmup",
		"--records", strconv.FormatInt(warm, 10), "--record-size", "1024", "--partitions", "8",
		"--replication-factor", rf}); err != nil {
		return err
	}
	if _, err := d.bench([]string{"bench", "consume", "--bootstrap-server", c.bootstrap(), "--json", "--topic", "warmup",
		"--records", strconv.FormatInt(warm, 10)}); err != nil {
		return err
	}
	for _, w := range d.clusterWorkloads(kind.replication()) {
		if err := d.runWorkload(round, c, w); err != nil {
			return err
		}
	}
	return nil
}

// keepClusterLogs copies every node's log under dir to -out/logs/.
func (d *driver) keepClusterLogs(dir string) {
	var logs []string
	for _, pattern := range []string{"*/broker.log", "*/*/node.log", "broker.log"} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		logs = append(logs, m...)
	}
	_ = os.MkdirAll(filepath.Join(d.o.out, "logs"), 0o755)
	for _, l := range logs {
		rel, _ := filepath.Rel(d.o.work, l)
		if data, err := os.ReadFile(l); err == nil {
			name := filepath.Join(d.o.out, "logs", filepath.Clean(rel))
			_ = os.MkdirAll(filepath.Dir(name), 0o755)
			_ = os.WriteFile(name, data, 0o644)
		}
	}
}
