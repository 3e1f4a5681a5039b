package serde_test

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/pkg/serde"
)

// Serializing a topic's values with an Avro schema registered under
// <topic>-value, and reading them back as Avro's JSON encoding.
func Example() {
	ctx := context.Background()
	cl, err := sr.NewClient(sr.URLs("http://127.0.0.1:8081"))
	if err != nil {
		panic(err)
	}
	sd := serde.New(cl) // TopicNameStrategy, auto-register
	enc, err := sd.ForTopic(ctx, "orders", false, serde.Source{
		Type: serde.Avro,
		Text: `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`,
	})
	if err != nil {
		panic(err)
	}
	value, err := enc.EncodeJSON([]byte(`{"id":1}`)) // the record's value
	if err != nil {
		panic(err)
	}
	text, schema, err := sd.DecodeJSON(ctx, value)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(text), schema.ID)
}
