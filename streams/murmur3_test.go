package streams

import "testing"

// The vectors of Kafka's Murmur3Test.testMurmur3_128 (seed 123), so that
// the foreign-key join's value hashes are Kafka's.
func TestMurmur3Hash128(t *testing.T) {
	cases := []struct {
		in     string
		h1, h2 int64
	}{
		{"21", 5857341059704281894, -5288187638297930763},
		{"foobar", -351361463397418609, 8959716011862540668},
		{"a-little-bit-long-string", 8836256500583638442, -198172363548498523},
		{"a-little-bit-longer-string", 1838346159335108511, 8794688210320490705},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -4024021876037397259, -1482317706335141238},
		{"abc", 1489494923063836066, -5440978547625122829},
	}
	for _, c := range cases {
		h1, h2 := murmur3Hash128([]byte(c.in), 123)
		if int64(h1) != c.h1 || int64(h2) != c.h2 {
			t.Errorf("%q: got %d %d, want %d %d", c.in, int64(h1), int64(h2), c.h1, c.h2)
		}
	}
}
