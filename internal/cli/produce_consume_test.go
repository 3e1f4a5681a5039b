package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/task"
)

func TestProduceConsumeKeysAndHeaders(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "events"))

	r := c.run("k1:v1\nk2:v:2\r\n:v3\nk4:", "produce", "events",
		"--key-separator", ":", "--header", "src=cli", "--header", "n=1")
	if r.err != nil {
		t.Fatalf("produce: %v", r.err)
	}
	if !strings.HasPrefix(r.stderr, `produced 4 records (13 bytes) to "events" in `) {
		t.Fatalf("produce summary = %q", r.stderr)
	}
	// Without a separator an empty line is a record with an empty value
	// and no key.
	c.ok("\n", "produce", "events")

	out := c.ok("", "consume", "events", "--format", `%k=%v p%p o%o [%h] %%\n`)
	want := "k1=v1 p0 o0 [src=cli,n=1] %\n" +
		"k2=v:2 p0 o1 [src=cli,n=1] %\n" +
		"=v3 p0 o2 [src=cli,n=1] %\n" +
		"k4= p0 o3 [src=cli,n=1] %\n" +
		"= p0 o4 [] %\n"
	if out != want {
		t.Fatalf("consume --format:\n%s\nwant:\n%s", out, want)
	}
	if out := c.ok("", "consume", "events"); out != "v1\nv:2\nv3\n\n\n" {
		t.Fatalf("consume with the default format = %q", out)
	}

	stamps := strings.Fields(c.ok("", "consume", "events", "--format", `%t\n`))
	headers := `[{"key":"src","value":"cli"},{"key":"n","value":"1"}]`
	var wantJSON strings.Builder
	for i, kv := range [][2]string{{`"k1"`, "v1"}, {`"k2"`, "v:2"}, {`""`, "v3"}, {`"k4"`, ""}, {"null", ""}} {
		if i == 4 {
			headers = "[]"
		}
		fmt.Fprintf(&wantJSON, `{"topic":"events","partition":0,"offset":%d,"timestamp":%s,"key":%s,"value":%q,"headers":%s}`+"\n",
			i, stamps[i], kv[0], kv[1], headers)
	}
	if out := c.ok("", "consume", "events", "--json"); out != wantJSON.String() {
		t.Fatalf("consume --json:\n%s\nwant:\n%s", out, wantJSON.String())
	}
}

func TestProduceWithoutKeysGivesNullKeys(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "t"))
	c.ok("a\n", "produce", "t")
	out := c.ok("", "consume", "t", "--json")
	if !strings.Contains(out, `"key":null,"value":"a","headers":[]`) {
		t.Fatalf("consume --json = %s", out)
	}
}

func TestProduceToFixedPartition(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(3, "t"))
	c.ok("a\nb\nc\n", "produce", "t", "--partition", "2")
	if out := c.ok("", "consume", "t", "--format", `%p:%v\n`); out != "2:a\n2:b\n2:c\n" {
		t.Fatalf("consume = %q", out)
	}
	if out := c.ok("", "consume", "t", "--partition", "1"); out != "" {
		t.Fatalf("consume --partition 1 = %q", out)
	}
	if out := c.ok("", "consume", "t", "--partition", "2", "--max", "2"); out != "a\nb\n" {
		t.Fatalf("consume --partition 2 --max 2 = %q", out)
	}
}

func TestProduceCompression(t *testing.T) {
	c := newTestCluster(t)
	lines := strings.Repeat("a compressible line of text\n", 50)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			topic := "compressed-" + codec
			c.ok("", "topic", "create", topic, "-p", "1")
			c.ok(lines, "produce", topic, "--compression", codec, "--acks", "1", "--linger", "50ms")
			if out := c.ok("", "consume", topic); out != lines {
				t.Fatalf("consumed %d bytes, want %d", len(out), len(lines))
			}
		})
	}
}

func TestProduceAcks(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "t"))
	for _, acks := range []string{"0", "1", "all"} {
		c.ok("x\n", "produce", "t", "--acks", acks)
	}
	if out := c.ok("", "consume", "t"); out != "x\nx\nx\n" {
		t.Fatalf("consume = %q", out)
	}
}

func TestConsumeFrom(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(2, "t"))
	base := time.UnixMilli(1_700_000_000_000)
	var recs []*kgo.Record
	for i := range 6 {
		recs = append(recs, &kgo.Record{
			Topic:     "t",
			Partition: int32(i % 2),
			Value:     fmt.Appendf(nil, "r%d", i),
			Timestamp: base.Add(time.Duration(i) * time.Second),
		})
	}
	cl := c.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// Partition 0 holds r0 r2 r4 at offsets 0-2, partition 1 r1 r3 r5.
	consume := func(args ...string) string {
		t.Helper()
		return c.ok("", append([]string{"consume", "t", "--format", `%p/%o/%v/%t\n`}, args...)...)
	}
	cases := []struct {
		from string
		want []string
	}{
		{"beginning", []string{"0/0/r0/1700000000000", "0/1/r2/1700000002000", "0/2/r4/1700000004000",
			"1/0/r1/1700000001000", "1/1/r3/1700000003000", "1/2/r5/1700000005000"}},
		{"end", nil},
		{"offset:2", []string{"0/2/r4/1700000004000", "1/2/r5/1700000005000"}},
		{"offset:99", nil},
		{"timestamp:1700000003000", []string{"0/2/r4/1700000004000", "1/1/r3/1700000003000", "1/2/r5/1700000005000"}},
		{"timestamp:2023-11-14T22:13:23Z", []string{"0/2/r4/1700000004000", "1/1/r3/1700000003000", "1/2/r5/1700000005000"}},
		{"timestamp:2030-01-01T00:00:00Z", nil},
	}
	for _, tc := range cases {
		got := sortedLines(consume("--from", tc.from))
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("--from %s:\n%s\nwant:\n%s", tc.from, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
	if got := consume("--from", "offset:1", "--partition", "1"); got != "1/1/r3/1700000003000\n1/2/r5/1700000005000\n" {
		t.Errorf("--from offset:1 --partition 1 = %q", got)
	}
}

// sortedLines orders output by partition while keeping each partition's
// order: partitions interleave in any order.
func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if lines[0] == "" {
		return nil
	}
	byPartition := map[string][]string{}
	for _, l := range lines {
		p, _, _ := strings.Cut(l, "/")
		byPartition[p] = append(byPartition[p], l)
	}
	var out []string
	for _, p := range []string{"0", "1", "2"} {
		out = append(out, byPartition[p]...)
	}
	return out
}

func TestConsumeFollowStopsAtMax(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "t"))
	c.ok("a\nb\n", "produce", "t")
	done := make(chan result, 1)
	g := task.NewGroup(t.Context())
	defer g.Stop()
	g.Go(func(context.Context) { done <- c.run("", "consume", "t", "--follow", "--max", "3") })
	// The end snapshot holds two records; --follow reads past it, whether
	// the third arrives before or after the consumer starts.
	c.ok("c\n", "produce", "t")
	r := <-done
	if r.err != nil || r.stdout != "a\nb\nc\n" {
		t.Fatalf("consume --follow --max 3 = %q, %v", r.stdout, r.err)
	}
}

func TestConsumeGroupCommits(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(2, "t"))
	c.ok("a\nb\nc\nd\n", "produce", "t")
	first := c.ok("", "consume", "t", "--group", "g")
	if got := strings.Fields(first); len(got) != 4 {
		t.Fatalf("first group read = %q", first)
	}
	if out := c.ok("", "consume", "t", "--group", "g"); out != "" {
		t.Fatalf("second group read after commit = %q, want nothing", out)
	}
	c.ok("e\n", "produce", "t")
	if out := c.ok("", "consume", "t", "--group", "g"); out != "e\n" {
		t.Fatalf("group read after one more record = %q", out)
	}
	// --from applies only to partitions without a commit.
	if out := c.ok("", "consume", "t", "--group", "fresh", "--from", "end"); out != "" {
		t.Fatalf("fresh group from end = %q", out)
	}
}

func TestConsumeIsolation(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "t"))
	txn := c.client(kgo.TransactionalID("cli-test"), kgo.DefaultProduceTopic("t"))
	ctx := context.Background()
	write := func(value string, commit kgo.TransactionEndTry) {
		t.Helper()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := txn.ProduceSync(ctx, kgo.StringRecord(value)).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	write("committed-1", kgo.TryCommit)
	write("aborted", kgo.TryAbort)
	write("committed-2", kgo.TryCommit)
	// The log ends in a commit marker, which is never printed: the command
	// must still see that it reached the end.
	if out := c.ok("", "consume", "t", "--isolation", "read_committed"); out != "committed-1\ncommitted-2\n" {
		t.Fatalf("read_committed = %q", out)
	}
	if out := c.ok("", "consume", "t", "--isolation", "read_uncommitted"); out != "committed-1\naborted\ncommitted-2\n" {
		t.Fatalf("read_uncommitted = %q", out)
	}
	// Only aborted data after the start: nothing to print, and no hang.
	write("aborted-2", kgo.TryAbort)
	if out := c.ok("", "consume", "t", "--isolation", "read_committed", "--from", "offset:6"); out != "" {
		t.Fatalf("read_committed over an aborted tail = %q", out)
	}
}

func TestProduceConsumeErrors(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "t"))
	c.fails(`topic "missing" does not exist`, "produce", "missing")
	c.fails(`topic "missing" does not exist`, "consume", "missing")
	c.fails(`topic "t" has no partition 4 (it has 1)`, "produce", "t", "--partition", "4")
	c.fails(`topic "t" has no partition 4 (it has 1)`, "consume", "t", "--partition", "4")
	c.fails(`invalid --acks "2": want 0, 1 or all`, "produce", "t", "--acks", "2")
	c.fails(`invalid --compression "brotli"`, "produce", "t", "--compression", "brotli")
	c.fails(`invalid --header "novalue": want key=value`, "produce", "t", "--header", "novalue")
	c.fails(`invalid --from "yesterday"`, "consume", "t", "--from", "yesterday")
	c.fails(`invalid --from "offset:-1"`, "consume", "t", "--from", "offset:-1")
	c.fails(`invalid --from "timestamp:noon"`, "consume", "t", "--from", "timestamp:noon")
	c.fails(`invalid --isolation "dirty"`, "consume", "t", "--isolation", "dirty")
	c.fails(`invalid --format "%x": unknown verb %x`, "consume", "t", "--format", "%x")
	c.fails("--json and --format cannot be used together", "consume", "t", "--json", "--format", "%v")
	c.fails("--partition cannot be used with --group", "consume", "t", "--group", "g", "--partition", "0")

	r := c.run("k:v\nnosep\n", "produce", "t", "--key-separator", ":")
	if r.err == nil || r.err.Error() != `read standard input: line 2 has no key separator ":"` {
		t.Fatalf("missing separator: %v", r.err)
	}
}

func TestProduceReportsBrokerErrors(t *testing.T) {
	c := newTestCluster(t)
	c.ok("", "topic", "create", "small", "-p", "1", "--config", "max.message.bytes=100")
	r := c.run(strings.Repeat("x", 500)+"\n", "produce", "small")
	if r.err == nil || !strings.Contains(r.err.Error(), `produce to topic "small": message too large: `) {
		t.Fatalf("oversized record: %v", r.err)
	}
	if !strings.Contains(r.stderr, "produced 0 of 1 records read (0 bytes) to \"small\" in ") || !strings.Contains(r.stderr, ": 1 rejected, 0 unacknowledged") {
		t.Fatalf("summary = %q", r.stderr)
	}
}

func TestUnreachableCluster(t *testing.T) {
	root := Commands()[0]
	root.SetArgs([]string{"list", "--bootstrap-server", "127.0.0.1:1", "--timeout", "2s"})
	root.SetOut(new(strings.Builder))
	root.SetErr(new(strings.Builder))
	root.SilenceErrors, root.SilenceUsage = true, true
	err := root.ExecuteContext(t.Context())
	if err == nil || !strings.HasPrefix(err.Error(), "cannot connect to 127.0.0.1:1") && !strings.HasPrefix(err.Error(), "no answer from 127.0.0.1:1") {
		t.Fatalf("unreachable cluster: %v", err)
	}
}

func TestBootstrapFromEnvironment(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "from-env"))
	t.Setenv(bootstrapEnv, c.addr)
	root := Commands()[0]
	var out strings.Builder
	root.SetArgs([]string{"list"})
	root.SetOut(&out)
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "from-env") {
		t.Fatalf("list via %s = %q", bootstrapEnv, out.String())
	}
}

// TestProduceCreatesTopicsWhereAllowed produces to a missing topic on a
// broker that creates topics on first use and on one that does not.
func TestProduceCreatesTopicsWhereAllowed(t *testing.T) {
	b := newSamsaBroker(t, "--num.partitions", "2")
	r := b.run("a\n", "produce", "fresh")
	if r.err != nil {
		t.Fatalf("produce to a missing topic: %v\nstderr: %s", r.err, r.stderr)
	}
	if want := "topic \"fresh\" did not exist: the cluster created it on first use (auto.create.topics.enable), partitions: 2\n" +
		"produced 1 records (1 bytes) to \"fresh\" in "; !strings.HasPrefix(r.stderr, want) {
		t.Fatalf("stderr = %q, want %q...", r.stderr, want)
	}
	if out := b.ok("", "consume", "fresh"); out != "a\n" {
		t.Fatalf("consume = %q", out)
	}
	b.fails(`topic "fresh2" has no partition 5 (it has 2)`, "produce", "fresh2", "--partition", "5")

	strict := newSamsaBroker(t, "--auto.create.topics.enable", "false")
	strict.fails(`topic "fresh" does not exist, and the cluster does not create topics on first use (auto.create.topics.enable=false): create it with samsa topic create`,
		"produce", "fresh")
}

// TestConsumeJSONBinary: keys, values and header values that are not
// UTF-8 come out of consume --json in base64, marked, and decode to the
// bytes produced; text stays text.
func TestConsumeJSONBinary(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "bin"))
	binary := []byte{0xff, 0x00, 0xfe, 'a', 0x80}
	recs := []*kgo.Record{
		{Topic: "bin", Key: binary, Value: []byte("héllo"), Headers: []kgo.RecordHeader{{Key: "h", Value: binary}, {Key: "t", Value: []byte("ok")}}},
		{Topic: "bin", Key: []byte("k"), Value: binary},
		{Topic: "bin", Value: []byte{0xc3}}, // a UTF-8 sequence cut short
	}
	if err := c.client().ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var got []jsonRecord
	for _, line := range strings.Split(strings.TrimSuffix(c.ok("", "consume", "bin", "--json"), "\n"), "\n") {
		var jr jsonRecord
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&jr); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		got = append(got, jr)
	}
	decoded := func(s *string, encoding string) []byte {
		t.Helper()
		switch {
		case s == nil:
			return nil
		case encoding == "":
			return []byte(*s)
		case encoding != "base64":
			t.Fatalf("encoding %q", encoding)
		}
		b, err := base64.StdEncoding.DecodeString(*s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i, want := range recs {
		jr := got[i]
		if k := decoded(jr.Key, jr.KeyEncoding); !bytes.Equal(k, want.Key) {
			t.Errorf("record %d: key %q, want %q", i, k, want.Key)
		}
		if v := decoded(jr.Value, jr.ValueEncoding); !bytes.Equal(v, want.Value) {
			t.Errorf("record %d: value %q, want %q", i, v, want.Value)
		}
		for j, h := range jr.Headers {
			if v := decoded(&h.Value, h.ValueEncoding); h.Key != want.Headers[j].Key || !bytes.Equal(v, want.Headers[j].Value) {
				t.Errorf("record %d header %d: %s=%q", i, j, h.Key, v)
			}
		}
	}
	if got[0].KeyEncoding != "base64" || got[0].ValueEncoding != "" || *got[0].Value != "héllo" ||
		got[0].Headers[0].ValueEncoding != "base64" || got[0].Headers[1].ValueEncoding != "" || got[1].KeyEncoding != "" {
		t.Errorf("encodings marked wrongly: %+v", got)
	}
}
