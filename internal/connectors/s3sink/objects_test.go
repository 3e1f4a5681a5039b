package s3sink

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/samsa-io/samsa/connect"
)

// requestLog keeps the headers of the requests that reach the fake.
type requestLog struct {
	mu   sync.Mutex
	reqs []loggedRequest
}

type loggedRequest struct {
	method, path, query string
	header              http.Header
}

func (l *requestLog) record(s3 *fakeS3) {
	s3.failWhen(func(r *http.Request) bool {
		l.mu.Lock()
		l.reqs = append(l.reqs, loggedRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone()})
		l.mu.Unlock()
		return false
	})
}

// matching are the logged requests of a method whose query has all of has.
func (l *requestLog) matching(method string, has ...string) []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []loggedRequest
next:
	for _, r := range l.reqs {
		if r.method != method {
			continue
		}
		for _, h := range has {
			if !strings.Contains(r.query, h) {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

// TestObjectsEncryptedWithACLAndTags: s3.ssea.name, s3.sse.kms.key.id,
// s3.acl.canned and s3.object.tagging reach every object PUT as S3's
// headers; the tags say each file's offsets and record count.
func TestObjectsEncryptedWithACLAndTags(t *testing.T) {
	s3 := newFakeS3(t)
	var log requestLog
	log.record(s3)
	task, _ := startTask(t, s3.props(cfgFlushSize, "3", cfgSSEA, "aws:kms", cfgSSEKMSKeyID, "alias/connect",
		cfgACLCanned, "bucket-owner-full-control", cfgObjectTagging, "true"), nil, tp0)
	put(t, task, jsonRecs(tp0, 0, 6))
	puts := log.matching(http.MethodPut)
	if len(puts) != 2 {
		t.Fatalf("%d object PUTs, want 2", len(puts))
	}
	for i, r := range puts {
		got := map[string]string{}
		for _, h := range []string{"X-Amz-Server-Side-Encryption", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "X-Amz-Acl", "X-Amz-Tagging"} {
			got[h] = r.header.Get(h)
		}
		want := map[string]string{
			"X-Amz-Server-Side-Encryption":                "aws:kms",
			"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": "alias/connect",
			"X-Amz-Acl":     "bucket-owner-full-control",
			"X-Amz-Tagging": []string{"endOffset=2&recordCount=3&startOffset=0", "endOffset=5&recordCount=3&startOffset=3"}[i],
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("PUT %s headers (-want +got):\n%s", r.path, d)
		}
	}
}

// TestObjectsWithCustomerKey: SSE-C sends the customer's key (and its
// MD5) with the multipart upload's start and every part, and with the
// HEAD a new task's recovery reads the commit metadata with.
func TestObjectsWithCustomerKey(t *testing.T) {
	s3 := newFakeS3(t)
	var log requestLog
	log.record(s3)
	key := bytes.Repeat([]byte{7}, 32)
	key64 := base64.StdEncoding.EncodeToString(key)
	sum := md5.Sum(key)
	md5sum := base64.StdEncoding.EncodeToString(sum[:])
	props := s3.props(cfgFormatClass, formatByteArray, cfgFlushSize, "6", cfgPartSize, "5242880", cfgByteArraySep, "",
		cfgSSECustomerKey, key64)
	task, _ := startTask(t, props, nil, tp0)
	var recs []connect.SinkRecord
	for i := int64(0); i < 6; i++ {
		recs = append(recs, rec(tp0, i, time.Now(), connect.BytesSchema, bytes.Repeat([]byte{byte('a' + i)}, 1<<20)))
	}
	put(t, task, recs)
	startTask(t, props, nil, tp0) // recovery: HEAD of the committed object
	check := func(what string, rs []loggedRequest) {
		t.Helper()
		if len(rs) == 0 {
			t.Fatalf("no %s", what)
		}
		for _, r := range rs {
			if r.header.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "AES256" ||
				r.header.Get("X-Amz-Server-Side-Encryption-Customer-Key") != key64 ||
				r.header.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != md5sum {
				t.Fatalf("%s %s without the customer key's headers: %v", what, r.path, r.header)
			}
		}
	}
	check("multipart start", log.matching(http.MethodPost, "uploads"))
	check("part upload", log.matching(http.MethodPut, "partNumber"))
	check("recovery HEAD", log.matching(http.MethodHead))
	if len(s3.keys()) != 1 {
		t.Fatalf("objects %v, want the one file", s3.keys())
	}
}

func TestObjectOptionsRefused(t *testing.T) {
	s3 := newFakeS3(t)
	for _, tc := range []struct {
		props []string
		want  string
	}{
		{[]string{cfgSSEKMSKeyID, "k"}, "a KMS key needs s3.ssea.name=aws:kms"},
		{[]string{cfgSSEA, "aws:kms", cfgSSECustomerKey, base64.StdEncoding.EncodeToString(make([]byte, 32))}, "a customer key (s3.sse.customer.key) is used with AES256"},
		{[]string{cfgSSECustomerKey, "c2hvcnQ="}, "must be a 256-bit key in base64"},
		{[]string{cfgSSEA, "DES"}, "Invalid value DES for configuration s3.ssea.name"},
		{[]string{cfgACLCanned, "everyone"}, "Invalid value everyone for configuration s3.acl.canned"},
	} {
		_, err := parseConfig(s3.props(tc.props...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.props, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "c2hvcnQ=") {
			t.Errorf("the customer key leaked into %q", err)
		}
	}
}

// TestJSONFilesGzipped: s3.compression.type=gzip writes each JSON file as
// one gzip stream named .json.gz, and recovery finds the files by name as
// it does uncompressed ones.
func TestJSONFilesGzipped(t *testing.T) {
	s3 := newFakeS3(t)
	props := s3.props(cfgFlushSize, "3", cfgCompressionType, "gzip", cfgCompressionLevel, "9")
	task, _ := startTask(t, props, nil, tp0)
	put(t, task, jsonRecs(tp0, 0, 6))
	got := map[string][]string{}
	for k, b := range s3.objects() {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s is not gzip: %v", k, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		got[k] = lines(plain)
	}
	want := map[string][]string{
		"topics/orders/partition=0/orders+0+0000000000.json.gz": {`{"n":0}`, `{"n":1}`, `{"n":2}`},
		"topics/orders/partition=0/orders+0+0000000003.json.gz": {`{"n":3}`, `{"n":4}`, `{"n":5}`},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("objects (-want +got):\n%s", d)
	}
	_, ctx := startTask(t, props, nil, tp0)
	if off, ok := ctx.seek(tp0); !ok || off != 6 {
		t.Fatalf("a new task seeks to %d (%v), want 6: it must find the .json.gz files", off, ok)
	}
	if _, err := parseConfig(s3.props(cfgFormatClass, formatAvro, cfgCompressionType, "gzip")); err == nil || !strings.Contains(err.Error(), "avro.codec") {
		t.Fatalf("gzip of Avro files: %v, want a refusal naming avro.codec", err)
	}
}
