package group

import "testing"

// The expected hashes are Java's String.hashCode; the partitions follow
// Kafka's abs(hash) % partitions with Utils.abs.
func TestPartitionFor(t *testing.T) {
	cases := []struct {
		group      string
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
		// Outside the BMP: counted as two UTF-16 surrogates, as in Java.
		{"😀", 1772899, 50, 49},
		{"grüppe", -1233264812, 3, 2},
		{"hello", 99162322, 1, 0},
		{"hello", 99162322, 0, 0},
	}
	for _, c := range cases {
		if got := PartitionFor(c.group, c.partitions); got != c.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", c.group, c.partitions, got, c.want)
		}
	}
}
