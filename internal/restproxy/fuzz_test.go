package restproxy

import (
	"encoding/json"
	"testing"
)

// FuzzProduceRequest feeds arbitrary bodies to the produce request's
// decoding and serialization: any input is a record or a 400, never a
// panic.
func FuzzProduceRequest(f *testing.F) {
	for _, s := range []string{
		`{"partition_id":1,"key":{"type":"BINARY","data":"AAE="},"value":{"type":"JSON","data":{"a":[1]}},"headers":[{"name":"h","value":"eA=="}]}`,
		`{"value":{"type":"STRING","data":"x"},"timestamp":"2021-02-05T19:14:42Z"}`,
		`{"key":{"type":"AVRO","schema_id":1,"data":null}}`,
		`{"value":{"data":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r produceRequest
		if json.Unmarshal(body, &r) != nil {
			return
		}
		rec, _, _, e := r.record("t")
		if e != nil {
			// 422 42206: a schema format without a registry, as Confluent.
			if !(e.Status == 400 && e.Code == 400 || e.Status == 422 && e.Code == codeInvalidPayload) || e.Message == "" {
				t.Fatalf("error %+v, want a 400 or a 422 42206 with a message", e)
			}
			return
		}
		if rec.Topic != "t" {
			t.Fatalf("topic %q", rec.Topic)
		}
	})
}
