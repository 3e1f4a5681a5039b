package s3sink

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/clock"
)

// keyedRecs are records from..to-1 whose value {"k": a|b, "n": offset}
// sends even offsets to directory k=a and odd ones to k=b, so each commit
// is two files.
func keyedRecs(from, to int64) []connect.SinkRecord {
	var out []connect.SinkRecord
	for o := from; o < to; o++ {
		k := "a"
		if o%2 == 1 {
			k = "b"
		}
		out = append(out, rec(tp0, o, time.UnixMilli(1_700_000_000_000+o), nil, map[string]any{"k": k, "n": o}))
	}
	return out
}

// checkEachOffsetOnce parses every object as whole JSON lines and checks
// that offsets 0..n-1 each appear in exactly one line of one object.
func checkEachOffsetOnce(t *testing.T, objects map[string][]byte, n int64) {
	t.Helper()
	seen := map[int64][]string{}
	for key, body := range objects {
		if len(body) == 0 || body[len(body)-1] != '\n' {
			t.Fatalf("%s is not whole JSON lines: %q", key, body)
		}
		for _, line := range lines(body) {
			var v struct{ N *int64 }
			if err := json.Unmarshal([]byte(line), &v); err != nil || v.N == nil {
				t.Fatalf("%s: line %q: %v", key, line, err)
			}
			seen[*v.N] = append(seen[*v.N], key)
		}
	}
	for o := int64(0); o < n; o++ {
		if len(seen[o]) != 1 {
			t.Errorf("offset %d is in %d objects %v", o, len(seen[o]), seen[o])
		}
	}
	if int64(len(seen)) != n {
		t.Errorf("%d offsets written, want %d", len(seen), n)
	}
}

// TestCrashMidCommit: a task dies after the first file of a two-file
// commit is uploaded and before the second is. The next task on the
// partition deletes the orphan, asks the runtime to read from the last
// whole commit, and the records replayed from the consumer's committed
// offset end up in exactly one object each.
func TestCrashMidCommit(t *testing.T) {
	s3 := newFakeS3(t)
	props := s3.props(cfgFlushSize, "4", cfgPartitionerClass, partitionerField, cfgPartitionField, "k")
	task1, _ := startTask(t, props, nil, tp0)
	put(t, task1, keyedRecs(0, 8))
	committed := preCommit(t, task1)[tp0]
	if committed != 8 {
		t.Fatalf("committed offset = %d, want 8", committed)
	}

	// The commit of 8..11 is files k=a (from 8) and k=b (from 9): the
	// second upload fails, then the task is dropped without Flush or Stop.
	s3.failWhen(func(r *http.Request) bool { return strings.Contains(r.URL.Path, "orders+0+0000000009") })
	err := task1.Put(t.Context(), keyedRecs(8, 12))
	if !connect.IsRetriable(err) {
		t.Fatalf("put during the store failure: %v, want a retriable error", err)
	}
	if got := preCommit(t, task1)[tp0]; got != 8 {
		t.Fatalf("committed offset with a commit half uploaded = %d, want 8", got)
	}
	orphan := "topics/orders/k=a/orders+0+0000000008.json"
	if _, ok := s3.objects()[orphan]; !ok {
		t.Fatalf("the first file of the cut commit was not uploaded: %v", s3.keys())
	}
	task1 = nil
	s3.failWhen(nil)

	task2, ctx2 := startTask(t, props, nil, tp0)
	if seek, ok := ctx2.seek(tp0); !ok || seek != 8 {
		t.Fatalf("seek = %d, %v; want 8", seek, ok)
	}
	if _, ok := s3.objects()[orphan]; ok {
		t.Fatalf("the orphan of the cut commit %s is still there", orphan)
	}
	put(t, task2, keyedRecs(committed, 16))
	if got := preCommit(t, task2)[tp0]; got != 16 {
		t.Fatalf("committed offset after replay = %d, want 16", got)
	}
	checkEachOffsetOnce(t, s3.objects(), 16)
}

// TestCrashBeforeOffsetCommit: the files are in the bucket but the consumer
// offset was never committed, so the runtime replays from further back.
// Directories come from the wall clock (TimeBasedPartitioner, Wallclock),
// which has moved on by the replay: Confluent's argument that a replay
// rewrites the same objects does not hold here, so only the position
// recovered from the bucket keeps records from being written twice. The new
// task seeks past what the bucket has, and drops what is delivered below it
// anyway (a runtime that had fetched before the seek).
func TestCrashBeforeOffsetCommit(t *testing.T) {
	s3 := newFakeS3(t)
	props := s3.props(cfgFlushSize, "3", cfgPartitionerClass, partitionerHourly, cfgLocale, "en", cfgTimezone, "UTC")
	clk := clock.NewManual(time.Date(2026, 5, 1, 10, 30, 0, 0, time.UTC))
	task1, _ := startTask(t, props, clk, tp0)
	put(t, task1, jsonRecs(tp0, 0, 7)) // files 0..2 and 3..5; 6 open
	task1 = nil                        // dropped: no PreCommit, no Flush, no Stop

	clk.Advance(time.Hour)
	task2, ctx2 := startTask(t, props, clk, tp0)
	if seek, ok := ctx2.seek(tp0); !ok || seek != 6 {
		t.Fatalf("seek = %d, %v; want 6", seek, ok)
	}
	if got := preCommit(t, task2)[tp0]; got != 6 {
		t.Fatalf("precommit after recovery = %d, want 6", got)
	}
	put(t, task2, jsonRecs(tp0, 0, 9)) // replayed from the consumer's offset, 0
	checkEachOffsetOnce(t, s3.objects(), 9)
	want := []string{
		"topics/orders/year=2026/month=05/day=01/hour=10/orders+0+0000000000.json",
		"topics/orders/year=2026/month=05/day=01/hour=10/orders+0+0000000003.json",
		"topics/orders/year=2026/month=05/day=01/hour=11/orders+0+0000000006.json",
	}
	if d := cmp.Diff(want, s3.keys()); d != "" {
		t.Fatalf("keys (-want +got):\n%s", d)
	}
}

// TestStoreFailureIsRetriable: a store answering 500, then a store that is
// gone, make Put fail retriably with nothing partial in the bucket; the
// runtime's retry of the same records writes each once.
func TestStoreFailureIsRetriable(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFlushSize, "3"), nil, tp0)

	s3.failWhen(func(r *http.Request) bool { return r.Method == http.MethodPut })
	// Two commits' worth: the redelivered batch must not start a second
	// commit before the first one is in.
	batch := jsonRecs(tp0, 0, 7)
	if err := task.Put(t.Context(), batch); !connect.IsRetriable(err) {
		t.Fatalf("put against a failing store: %v, want retriable", err)
	}
	if keys := s3.keys(); len(keys) != 0 {
		t.Fatalf("objects after a failed upload: %v", keys)
	}
	if got := preCommit(t, task); len(got) != 0 {
		t.Fatalf("precommit after a failed upload = %v, want nothing", got)
	}
	s3.failWhen(nil)
	put(t, task, batch) // the runtime redelivers the batch

	s3.stop()
	batch2 := jsonRecs(tp0, 7, 10)
	if err := task.Put(t.Context(), batch2); !connect.IsRetriable(err) {
		t.Fatalf("put against a closed store: %v, want retriable", err)
	}
	s3.restart()
	put(t, task, batch2)

	if d := cmp.Diff(map[connect.TopicPartition]int64{tp0: 9}, preCommit(t, task)); d != "" {
		t.Fatalf("precommit: %s", d)
	}
	checkEachOffsetOnce(t, s3.objects(), 9)
}

// TestMultipartUpload: a file of s3.part.size or more goes up in parts and
// is visible only once completed; a failed completion leaves no object.
func TestMultipartUpload(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFormatClass, formatByteArray, cfgFlushSize, "12", cfgPartSize, "5242880", cfgByteArraySep, ""), nil, tp0)
	var recs []connect.SinkRecord
	var want bytes.Buffer
	for i := int64(0); i < 12; i++ {
		b := bytes.Repeat([]byte{byte('a' + i)}, 1<<20)
		want.Write(b)
		recs = append(recs, rec(tp0, i, time.Now(), connect.BytesSchema, b))
	}
	var parts []string
	s3.failWhen(func(r *http.Request) bool {
		if r.URL.Query().Has("partNumber") {
			parts = append(parts, r.URL.Query().Get("partNumber"))
		}
		// CompleteMultipartUpload is the POST with an upload ID.
		return r.Method == http.MethodPost && r.URL.Query().Has("uploadId")
	})
	if err := task.Put(t.Context(), recs); !connect.IsRetriable(err) {
		t.Fatalf("put with a failing completion: %v, want retriable", err)
	}
	if keys := s3.keys(); len(keys) != 0 {
		t.Fatalf("objects after a failed multipart upload: %v", keys)
	}
	sort.Strings(parts)
	if d := cmp.Diff([]string{"1", "2"}, parts); d != "" {
		t.Fatalf("parts uploaded (12 MiB in 5 MiB parts, the remainder joined to the last): %s", d)
	}
	s3.failWhen(nil)
	put(t, task, recs)
	got := s3.objects()["topics/orders/partition=0/orders+0+0000000000.bin"]
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("object is %d bytes, want the %d bytes written", len(got), want.Len())
	}
	// The commit metadata rides on multipart objects too: a new task
	// recovers its position from this one.
	_, ctx2 := startTask(t, s3.props(cfgFormatClass, formatByteArray, cfgFlushSize, "12"), nil, tp0)
	if seek, ok := ctx2.seek(tp0); !ok || seek != 12 {
		t.Fatalf("seek after a multipart commit = %d, %v; want 12", seek, ok)
	}
}

// TestRecoveryAbortsUnfinishedUploads: a task killed between the parts of
// a multipart upload and its completion leaves an invisible upload; the
// next task's recovery aborts it.
func TestRecoveryAbortsUnfinishedUploads(t *testing.T) {
	s3 := newFakeS3(t)
	props := s3.props()
	task1, _ := startTask(t, props, nil, tp0)
	key := "topics/orders/partition=0/orders+0+0000000000.json"
	other := "topics/orders/partition=1/orders+1+0000000000.json"
	for _, k := range []string{key, other} {
		if _, err := task1.store.client.CreateMultipartUpload(t.Context(), &awss3.CreateMultipartUploadInput{Bucket: aws.String(testBucket), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	startTask(t, props, nil, tp0)
	out, err := task1.store.client.ListMultipartUploads(t.Context(), &awss3.ListMultipartUploadsInput{Bucket: aws.String(testBucket)})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, u := range out.Uploads {
		left = append(left, aws.ToString(u.Key))
	}
	// Partition 1's upload is another task's business.
	if d := cmp.Diff([]string{other}, left); d != "" {
		t.Fatalf("uploads left (-want +got):\n%s", d)
	}
}
