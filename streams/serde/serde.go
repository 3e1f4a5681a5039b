package serde

import (
	"errors"
	"fmt"
)

// Serde serializes and deserializes the values of type T of a topic's
// keys or values. Implementations are safe for concurrent use: a topology
// shares one serde between its tasks.
type Serde[T any] interface {
	// Serialize writes v; the runtime never calls it for a null.
	Serialize(topic string, v T) ([]byte, error)
	// Deserialize reads data, never nil (the runtime maps a null itself).
	// The slice may be reused by the caller after it returns, so a serde
	// that keeps bytes copies them.
	Deserialize(topic string, data []byte) (T, error)
}

// Window is a window's bounds in milliseconds: [Start, End) for time
// windows, [Start, End] for session windows, as Kafka's Window.
type Window struct{ Start, End int64 }

// Windowed is a key of a windowed aggregation: the record's key and its
// window (Kafka Streams' Windowed<K>).
type Windowed[K any] struct {
	Key    K
	Window Window
}

// ErrInvalidData marks bytes a serde cannot read (Kafka's
// SerializationException): a wrong length, a byte out of range, text that
// does not parse. Test for it with errors.Is.
var ErrInvalidData = errors.New("serde: invalid data")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidData, fmt.Sprintf(format, args...))
}

// Func is a serde made of two functions, for types no built-in serde
// covers. A nil function answers an error rather than crashing, so a
// serde used only one way may leave the other out.
func Func[T any](ser func(topic string, v T) ([]byte, error), de func(topic string, data []byte) (T, error)) Serde[T] {
	return funcSerde[T]{ser: ser, de: de}
}

type funcSerde[T any] struct {
	ser func(string, T) ([]byte, error)
	de  func(string, []byte) (T, error)
}

func (f funcSerde[T]) Serialize(topic string, v T) ([]byte, error) {
	if f.ser == nil {
		return nil, fmt.Errorf("serde: Func has no serializer (topic %q)", topic)
	}
	return f.ser(topic, v)
}

func (f funcSerde[T]) Deserialize(topic string, data []byte) (T, error) {
	if f.de == nil {
		var zero T
		return zero, fmt.Errorf("serde: Func has no deserializer (topic %q)", topic)
	}
	return f.de(topic, data)
}
