package model

import "testing"

// The expected hashes are Java's String.hashCode; the partitions follow
// Kafka's abs(hash) % partitions with Utils.abs.
func TestKeyPartition(t *testing.T) {
	cases := []struct {
		key        string
		hash       int32
		partitions int32
		want       int32
	}{
		{"", 0, 50, 0},
		{"a", 97, 50, 47},
		{"hello", 99162322, 50, 22},
		{"Aa", 2112, 50, 12},
		{"BB", 2112, 50, 12},
		{"my-group", -1906497762, 50, 12},
		{"console-consumer-12345", 158455506, 50, 6},
		{"hellohellohello", -1353814638, 50, 38},
		// MinInt32: Kafka's Utils.abs makes it 0, not an overflow.
		{"polygenelubricants", -2147483648, 50, 0},
		{"polygenelubricants", -2147483648, 7, 0},
		// Outside the BMP: counted as two UTF-16 surrogates, as in Java.
		{"😀", 1772899, 50, 49},
		{"grüppe", -1233264812, 3, 2},
		{"g1:AQIDBAUGBwgJCgsMDQ4PEA:3", -851287136, 50, 36},
		{"hello", 99162322, 1, 0},
		{"hello", 99162322, 0, 0},
	}
	for _, c := range cases {
		if got := javaStringHash(c.key); got != c.hash {
			t.Errorf("javaStringHash(%q) = %d, want %d", c.key, got, c.hash)
		}
		if got := KeyPartition(c.key, c.partitions); got != c.want {
			t.Errorf("KeyPartition(%q, %d) = %d, want %d", c.key, c.partitions, got, c.want)
		}
	}
}
