package connectors

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fakeS3 serves gofakes3 (in memory) on a loopback port.
type fakeS3 struct {
	backend *s3mem.Backend
	url     string
}

func startS3(t *testing.T, bucket string) *fakeS3 {
	t.Helper()
	f := &fakeS3{backend: s3mem.New()}
	if err := f.backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: gofakes3.New(f.backend).Server()}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	f.url = "http://" + l.Addr().String()
	return f
}

// objects are the bucket's keys and bodies.
func (f *fakeS3) objects(t *testing.T, bucket string) map[string][]byte {
	t.Helper()
	list, err := f.backend.ListBucket(bucket, &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, o := range list.Contents {
		obj, err := f.backend.GetObject(bucket, o.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[o.Key] = b
	}
	return out
}

// s3Key is Confluent's object name with DefaultPartitioner and JsonFormat.
var s3Key = regexp.MustCompile(`^topics/orders/partition=([0-9]+)/orders\+([0-9]+)\+([0-9]{10})\.json$`)

// TestS3Sink: a produced topic (two partitions) -> S3SinkConnector
// (JsonFormat, flush.size) -> gofakes3. The worker is killed (SIGKILL)
// while files are being written and another started. Every object is
// named by Confluent's scheme (topic+partition+start offset), holds
// exactly flush.size records starting at that offset, in order; every
// record is in exactly one object.
func TestS3Sink(t *testing.T) {
	const (
		bucket     = "e2e"
		partitions = 2
		flushSize  = 25
		n          = 2000 // per partition, a multiple of flushSize
	)
	s3 := startS3(t, bucket)
	cl := newClient(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("orders"), kgo.AllowAutoTopicCreation())
	g := startGroup(t, "e2e-s3")
	if code, body := g.call("POST", "/connectors", map[string]any{"name": "s3", "config": map[string]string{
		"connector.class":       "io.confluent.connect.s3.S3SinkConnector",
		"topics":                "orders",
		"s3.bucket.name":        bucket,
		"store.url":             s3.url,
		"aws.access.key.id":     "e2e",
		"aws.secret.access.key": "e2e-secret",
		"format.class":          "io.confluent.connect.s3.format.json.JsonFormat",
		"flush.size":            strconv.Itoa(flushSize),
		"tasks.max":             "1",
		// The killed task's consumer sends no LeaveGroup: its partitions
		// move after this, not after the 45 s default.
		"consumer.override.session.timeout.ms": "6000",
	}}, nil); code != 201 {
		t.Fatalf("create s3: %d %s", code, body)
	}
	// The topic first, with its partitions, then the records.
	produce := func(ctx context.Context, from, to int) {
		for i := from; i < to; i++ {
			for p := range partitions {
				r := &kgo.Record{Partition: int32(p), Value: jsonEnvelope(`{"type":"struct","name":"order","fields":[{"field":"p","type":"int32"},{"field":"n","type":"int64"},{"field":"item","type":"string"}]}`,
					map[string]any{"p": p, "n": i, "item": fmt.Sprintf("item-%d-%d", p, i)})}
				cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
					if err != nil && ctx.Err() == nil {
						t.Errorf("produce: %v", err)
					}
				})
			}
			if i%100 == 99 {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if err := cl.Flush(ctx); err != nil {
			t.Error(err)
		}
	}
	createTopic(t, "orders", partitions)
	g.running("s3", 1)
	produce(t.Context(), 0, n/4)
	eventually(t, 60*time.Second, "files written", func() (bool, string) {
		g.failIfFailed("s3")
		got := len(s3.objects(t, bucket))
		return got >= 10, fmt.Sprint(got, " objects")
	})
	// Kill while the rest is produced and written.
	done := make(chan struct{})
	go func() { defer close(done); produce(context.Background(), n/4, n) }()
	g.kill(g.workers[0])
	g.start()
	g.running("s3", 1)
	<-done

	var objs map[string][]byte
	eventually(t, 90*time.Second, "every record in an object", func() (bool, string) {
		g.failIfFailed("s3")
		objs = s3.objects(t, bucket)
		return len(objs) >= partitions*n/flushSize, fmt.Sprintf("%d objects of %d", len(objs), partitions*n/flushSize)
	})
	// Objects only grow in number while the test reads: a final look.
	time.Sleep(time.Second)
	objs = s3.objects(t, bucket)
	seen := map[[2]int]string{}
	keys := make([]string, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := s3Key.FindStringSubmatch(k)
		if m == nil || m[1] != m[2] {
			t.Fatalf("object %q is not named topics/orders/partition=<p>/orders+<p>+<offset>.json", k)
		}
		p, _ := strconv.Atoi(m[1])
		start, _ := strconv.Atoi(m[3])
		sc := bufio.NewScanner(bytes.NewReader(objs[k]))
		lines := 0
		for sc.Scan() {
			var v struct {
				P    int    `json:"p"`
				N    int    `json:"n"`
				Item string `json:"item"`
			}
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("object %s line %d: %v: %s", k, lines, err, sc.Bytes())
			}
			// One record per offset, produced in order: offset = n.
			if v.P != p || v.N != start+lines || v.Item != fmt.Sprintf("item-%d-%d", p, v.N) {
				t.Fatalf("object %s line %d: %+v, want partition %d record %d", k, lines, v, p, start+lines)
			}
			if prev, dup := seen[[2]int{p, v.N}]; dup {
				t.Fatalf("partition %d record %d is in %s and in %s", p, v.N, prev, k)
			}
			seen[[2]int{p, v.N}] = k
			lines++
		}
		if lines != flushSize {
			t.Fatalf("object %s has %d records, want flush.size %d (a partial object)", k, lines, flushSize)
		}
	}
	if len(seen) != partitions*n {
		t.Fatalf("%d records in objects, want %d", len(seen), partitions*n)
	}
	t.Logf("%d objects, %d records, each once", len(objs), len(seen))
}
