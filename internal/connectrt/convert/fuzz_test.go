package convert

import (
	"testing"
)

// FuzzJSONToConnectData feeds any bytes to JsonConverter, with and without
// schemas: bad input is an error, never a panic, and whatever is read can
// be written again without a panic.
func FuzzJSONToConnectData(f *testing.F) {
	for _, seed := range []string{
		`{"schema":{"type":"struct","fields":[{"field":"a","type":"int8","optional":true,"default":3},{"field":"m","type":"map","keys":{"type":"int64"},"values":{"type":"bytes"}}]},"payload":{"a":1,"m":[[1,"AA=="]]}}`,
		`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":"AQ=="}`,
		`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"x"}},"payload":1e5}`,
		`{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date"},"payload":19000}`,
		`{"schema":{"type":"array","items":{"type":"float"}},"payload":[1.5,"NaN",1e40]}`,
		`{"schema":null,"payload":{"a":[1,2.5,{"b":null}]}}`,
		`{"a":1}`, `[]`, `null`, `"x"`, `1e999999999`,
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	with, without := newJSON(f, nil), newJSON(f, map[string]string{"schemas.enable": "false", "decimal.format": "NUMERIC"})
	f.Fuzz(func(t *testing.T, data []byte, schemas bool) {
		c := without
		if schemas {
			c = with
		}
		s, v, err := c.ToConnectData("t", nil, data)
		if err != nil {
			return
		}
		_, _ = c.FromConnectData("t", nil, s, v)
	})
}

// FuzzSimpleHeaderConverter reads any header text without a panic.
func FuzzSimpleHeaderConverter(f *testing.F) {
	for _, seed := range []string{"", "null", "12", "-1.5e3", "2024-01-02", "01:02:03.004Z", "1e-99999", "+", "9e9999"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c SimpleHeaderConverter
		s, v, err := c.ToConnectHeader("t", "k", data)
		if err != nil {
			return
		}
		if _, err := c.FromConnectHeader("t", "k", s, v); err != nil {
			t.Fatalf("%q read as %v %#v but cannot be written: %v", data, s, v, err)
		}
	})
}
