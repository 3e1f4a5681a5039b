package serde

import "testing"

// The serdes run once per record per key and value; these show what a
// record pays for the common ones.
func BenchmarkSerdes(b *testing.B) {
	b.Run("Int64", func(b *testing.B) {
		b.ReportAllocs()
		s := Int64()
		for i := range b.N {
			data, _ := s.Serialize("t", int64(i))
			if _, err := s.Deserialize("t", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("String", func(b *testing.B) {
		b.ReportAllocs()
		s := String()
		for range b.N {
			data, _ := s.Serialize("t", "a word of text")
			if _, err := s.Deserialize("t", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("TimeWindowed", func(b *testing.B) {
		b.ReportAllocs()
		s := TimeWindowed(String(), 60_000)
		for i := range b.N {
			data, _ := s.Serialize("t", Windowed[string]{Key: "a word", Window: Window{Start: int64(i)}})
			if _, err := s.Deserialize("t", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
