package restproxy

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
)

// FuzzV2ProduceRequest feeds arbitrary bodies to v2 produce's decoding
// and serialization (binary and json, and the schema formats without a
// registry): records or a 4xx error with a message, never a panic.
func FuzzV2ProduceRequest(f *testing.F) {
	for _, s := range []string{
		`{"records":[{"key":"AAE=","value":"eA==","partition":1}]}`,
		`{"records":[{"value":{"a":[1,null]}}],"value_schema_id":3}`,
		`{"records":[{"value":"!!"}]}`,
		`{"records":[]}`,
		`null`,
		`{"records":[`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	formats := []embeddedFormat{formatBinary, formatJSON, formatAvro, formatJSONSchema, formatProtobuf}
	p := &Proxy{cfg: Config{MaxBody: 1 << 16}}
	f.Fuzz(func(t *testing.T, body []byte, fi uint8) {
		f := formats[int(fi)%len(formats)]
		req := httptest.NewRequest("POST", "/topics/t", bytes.NewReader(body))
		r, e := p.v2ReadProduce(httptest.NewRecorder(), req)
		if e == nil {
			keyEnc, ke := p.v2Encoder(context.Background(), f, "t", true, r.KeySchemaID, r.KeySchema, r.Records)
			valueEnc, ve := p.v2Encoder(context.Background(), f, "t", false, r.ValueSchemaID, r.ValueSchema, r.Records)
			e = ke
			if e == nil {
				e = ve
			}
			for _, rec := range r.Records {
				if e != nil {
					break
				}
				if _, e = v2Serialize(f, keyEnc, rec.Key); e == nil {
					_, e = v2Serialize(f, valueEnc, rec.Value)
				}
			}
		}
		if e != nil && (e.Status < 400 || e.Status >= 500 || e.Message == "") {
			t.Fatalf("format %s, body %q: error %+v, want a 4xx with a message", f, body, e)
		}
	})
}
