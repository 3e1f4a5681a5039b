package streams

import (
	"fmt"

	"github.com/samsa-io/samsa/streams/serde"
)

// anySerde is a Serde with the type erased, as the runtime holds it.
type anySerde interface {
	serialize(topic string, v any) ([]byte, error)
	deserialize(topic string, b []byte) (any, error)
}

type boxed[T any] struct{ s serde.Serde[T] }

func box[T any](s serde.Serde[T]) anySerde {
	if s == nil {
		return nil
	}
	return boxed[T]{s}
}

func (b boxed[T]) serialize(topic string, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	t, ok := v.(T)
	if !ok {
		return nil, fmt.Errorf("streams: serializing for topic %q: got %T, the serde takes %T", topic, v, t)
	}
	return b.s.Serialize(topic, t)
}

func (b boxed[T]) deserialize(topic string, data []byte) (any, error) {
	if data == nil {
		return nil, nil
	}
	return b.s.Deserialize(topic, data)
}
