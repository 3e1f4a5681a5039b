package serde

// Serde serializes and deserializes one type to and from Kafka's bytes. It
// never sees a null: the runtime maps nil bytes to null itself.
type Serde[T any] interface {
	Serialize(topic string, v T) ([]byte, error)
	Deserialize(topic string, data []byte) (T, error)
}

// Window is a window's bounds in milliseconds.
type Window struct{ Start, End int64 }

// Windowed is a key with the window it was aggregated in.
type Windowed[K any] struct {
	Key    K
	Window Window
}
