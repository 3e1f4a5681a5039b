package broker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/samsa-io/samsa/internal/vfs"
)

// clusterIDOf asks a running broker for its cluster ID, as DescribeCluster
// and Metadata answer it, and fails unless both agree.
func clusterIDOf(t *testing.T, b *Broker) string {
	t.Helper()
	cl := newFranz(t, b.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	dc := kmsg.NewPtrDescribeClusterRequest()
	dresp, err := dc.RequestWith(ctx, cl)
	if err != nil || dresp.ErrorCode != 0 {
		t.Fatalf("DescribeCluster: %v %+v", err, dresp)
	}
	md := kmsg.NewPtrMetadataRequest()
	mresp, err := md.RequestWith(ctx, cl)
	if err != nil || mresp.ClusterID == nil {
		t.Fatalf("Metadata: %v %+v", err, mresp)
	}
	if dresp.ClusterID != *mresp.ClusterID || dresp.ClusterID == "" {
		t.Fatalf("DescribeCluster says cluster %q, Metadata %q", dresp.ClusterID, *mresp.ClusterID)
	}
	return dresp.ClusterID
}

// produceOne produces one record to topic, creating it.
func produceOne(t *testing.T, b *Broker, topic, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	if err := newFranz(t, b.Addr(), kgo.AllowAutoTopicCreation()).ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readAll consumes topic from the start until it has n records.
func readAll(t *testing.T, b *Broker, topic string, n int) []string {
	t.Helper()
	cl := newFranz(t, b.Addr(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	var out []string
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume %s after %d records: %v", topic, len(out), err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

func readMetaProps(t *testing.T, dir string) (metaprops.Props, []byte) {
	t.Helper()
	p, err := metaprops.Read(vfs.OS, dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(metaprops.Path(dir))
	return p, raw
}

// A single node with no quorum configured formats its empty directory on
// first start, with the cluster ID its controller then writes, and
// restarts as the same cluster: meta.properties is not rewritten, and
// DescribeCluster and Metadata answer the same cluster ID.
func TestE2ESingleNodeFormatsItself(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "data")
	b := startBrokerWith(t, Config{LogDir: dir})
	p, file := readMetaProps(t, dir)
	if p.NodeID != 1 || p.DirectoryID == "" {
		t.Fatalf("meta.properties after the first start: %+v", p)
	}
	id := clusterIDOf(t, b)
	if id != p.ClusterID {
		t.Fatalf("the broker answers cluster %s, meta.properties says %s", id, p.ClusterID)
	}
	produceOne(t, b, "kept", "v0")

	b = restartBroker(t, b, dir)
	if again := clusterIDOf(t, b); again != id {
		t.Fatalf("cluster ID after restart %s, before %s", again, id)
	}
	if _, again := readMetaProps(t, dir); string(again) != string(file) {
		t.Fatalf("meta.properties changed on restart:\n%s\nwas:\n%s", again, file)
	}
	if got := readAll(t, b, "kept", 1); got[0] != "v0" {
		t.Fatalf("after restart: %q", got)
	}
}

// A data directory from before meta.properties (metadata, partitions, no
// file) keeps working: it is adopted with the cluster ID already in its
// metadata, and its data is all there.
func TestE2EAdoptsDirectoryWithoutMetaProperties(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	id := clusterIDOf(t, b)
	produceOne(t, b, "old", "before meta.properties")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(metaprops.Path(dir)); err != nil {
		t.Fatal(err)
	}

	b = startBrokerWith(t, Config{LogDir: dir})
	if again := clusterIDOf(t, b); again != id {
		t.Fatalf("cluster ID after adoption %s, before %s", again, id)
	}
	if p, _ := readMetaProps(t, dir); p.ClusterID != id || p.NodeID != 1 || p.DirectoryID == "" {
		t.Fatalf("meta.properties written on adoption: %+v, want cluster %s", p, id)
	}
	if got := readAll(t, b, "old", 1); got[0] != "before meta.properties" {
		t.Fatalf("after adoption: %q", got)
	}
	b = restartBroker(t, b, dir)
	if again := clusterIDOf(t, b); again != id {
		t.Fatalf("cluster ID after the next restart %s, want %s", again, id)
	}
}

// newBroker is New with a test's defaults; the caller starts it or expects
// an error.
func newBroker(t *testing.T, cfg Config) (*Broker, error) {
	t.Helper()
	cfg.NodeID = 1
	cfg.Listeners = []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0}}
	cfg.Logger = quiet
	return New(cfg)
}

// startErr is the error New or Start gives cfg; nil if it started (and was
// closed again).
func startErr(t *testing.T, cfg Config) error {
	t.Helper()
	b, err := newBroker(t, cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.Start(context.Background())
}

func brokerValues(t *testing.T, raw map[string]string) config.Values {
	t.Helper()
	v, err := config.Parse(config.Broker, raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Directories formatted for another cluster refuse to start, and the error
// names them: a log dir and a metadata log dir of two clusters, and
// meta.properties of one cluster over the metadata of another.
func TestE2EAnotherClusterRefusesToStart(t *testing.T) {
	const clusterA, clusterB = "MkU3OEVBNTcwNTJENDM2Qg", "q1Sh-9_ISia_zwGINzRvyQ"
	t.Run("log dir and metadata log dir", func(t *testing.T) {
		logDir, metaDir := t.TempDir(), t.TempDir()
		for dir, id := range map[string]string{logDir: clusterA, metaDir: clusterB} {
			if err := metaprops.Write(vfs.OS, dir, metaprops.Props{ClusterID: id, NodeID: 1}, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		err := startErr(t, Config{LogDir: logDir, Values: brokerValues(t, map[string]string{"metadata.log.dir": metaDir})})
		want := "log dir " + logDir + " belongs to cluster " + clusterA + ", " + metaDir + " to cluster " + clusterB
		if !errors.Is(err, metaprops.ErrInconsistent) || !strings.Contains(err.Error(), want) {
			t.Fatalf("start: %v\nwant an error with %q", err, want)
		}
		if ok, _ := vfs.OS.Exists(filepath.Join(metaDir, metadataDir)); ok {
			t.Fatal("the refused start opened the metadata log")
		}
	})
	t.Run("meta.properties over another cluster's metadata", func(t *testing.T) {
		dir := t.TempDir()
		b := startBrokerWith(t, Config{LogDir: dir})
		id := clusterIDOf(t, b)
		b.Close()
		// As a copy of another node's file, or a format run by hand.
		if err := metaprops.Write(vfs.OS, dir, metaprops.Props{ClusterID: clusterB, NodeID: 1}, time.Now()); err != nil {
			t.Fatal(err)
		}
		err := startErr(t, Config{LogDir: dir})
		for _, want := range []string{filepath.Join(dir, metadataDir) + " belongs to cluster " + id, clusterB} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("start: %v\nwant an error with %q", err, want)
			}
		}
	})
	t.Run("another node's directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := metaprops.Write(vfs.OS, dir, metaprops.Props{ClusterID: clusterA, NodeID: 2}, time.Now()); err != nil {
			t.Fatal(err)
		}
		err := startErr(t, Config{LogDir: dir})
		if want := metaprops.Path(dir) + " has node.id 2, this node is 1"; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("start: %v\nwant an error with %q", err, want)
		}
	})
	t.Run("a garbled meta.properties", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(metaprops.Path(dir), []byte("#\n#Thu Mar 05\nnode.id=1\ndirectory.id=7eX"), 0o644)
		err := startErr(t, Config{LogDir: dir})
		if !errors.Is(err, metaprops.ErrCorrupt) || !strings.Contains(err.Error(), metaprops.Path(dir)) {
			t.Fatalf("start: %v", err)
		}
	})
}

// A node configured as part of a quorum does not format itself: it
// refuses to start until `samsa storage format` (FormatStorage) has
// formatted its directories, leaving the disk untouched meanwhile; then it
// starts with the cluster ID it was formatted with.
func TestE2EQuorumNodeNeedsFormat(t *testing.T) {
	for _, quorum := range []string{"controller.quorum.voters=1@127.0.0.1:9093", "controller.quorum.bootstrap.servers=127.0.0.1:9093"} {
		t.Run(quorum, func(t *testing.T) {
			root := t.TempDir()
			logDir, metaDir := filepath.Join(root, "logs"), filepath.Join(root, "meta")
			k, v, _ := strings.Cut(quorum, "=")
			// This branch accepts only a quorum of this node alone, on one of
			// its listeners (the test broker itself listens on a free port).
			raw := map[string]string{k: v, "node.id": "1", "listeners": "PLAINTEXT://127.0.0.1:9093", "log.dirs": logDir, "metadata.log.dir": metaDir}
			values := brokerValues(t, raw)
			cfg := Config{LogDir: logDir, Values: values}

			err := startErr(t, cfg)
			want := `log dir ` + logDir + ` is not formatted: run "samsa storage format --config server.properties --cluster-id <id>"`
			if !errors.Is(err, metaprops.ErrNotFormatted) || !strings.Contains(err.Error(), want) {
				t.Fatalf("unformatted start: %v\nwant an error with %q", err, want)
			}
			if names, _ := os.ReadDir(root); len(names) != 0 {
				t.Fatalf("the refused start made %v", names)
			}

			// The metadata log dir alone formatted: the hint carries its ID.
			const id = "q1Sh-9_ISia_zwGINzRvyQ"
			os.MkdirAll(metaDir, 0o755)
			if err := metaprops.Write(vfs.OS, metaDir, metaprops.Props{ClusterID: id, NodeID: 1}, time.Now()); err != nil {
				t.Fatal(err)
			}
			err = startErr(t, cfg)
			want = `log dir ` + logDir + ` is not formatted: run "samsa storage format --config server.properties --cluster-id ` + id + ` --ignore-formatted"`
			if !errors.Is(err, metaprops.ErrNotFormatted) || !strings.Contains(err.Error(), want) {
				t.Fatalf("half-formatted start: %v\nwant an error with %q", err, want)
			}

			// Kafka asks a controller without voters for one of the quorum
			// flags; this one is the single node whatever it is given.
			noVoters := k == "controller.quorum.bootstrap.servers"
			done, err := FormatStorage(values, FormatOptions{ClusterID: id, IgnoreFormatted: true, NoInitialControllers: noVoters, Now: time.Now()})
			if err != nil || len(done) != 1 || done[0] != logDir {
				t.Fatalf("FormatStorage = %v, %v", done, err)
			}
			b := startBrokerWith(t, cfg)
			if got := clusterIDOf(t, b); got != id {
				t.Fatalf("formatted with %s, the broker answers %s", id, got)
			}
		})
	}
}
