package streamsdiff

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestMurmur2MatchesKafka checks that the inputs land where Kafka's Java
// producer would put them: franz-go's StickyKeyPartitioner(nil) hash
// against Utils.toPositive(Utils.murmur2(key)) as kafka-clients 4.4.0
// answered it (the first six are the vectors of Kafka's UtilsTest, the
// others keys of the inputs).
func TestMurmur2MatchesKafka(t *testing.T) {
	for key, want := range map[string]int64{
		"21":                         1173551340,
		"foobar":                     1357151166,
		"a-little-bit-long-string":   1161502112,
		"a-little-bit-longer-string": 661178819,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": 2088585677,
		"abc":   479470107,
		"a.3":   720626010,
		"flush": 717421888,
		"u1":    745337584,
		"o1":    1142095267,
	} {
		if got := murmur2Positive([]byte(key)); got != want {
			t.Errorf("murmur2(%q) = %d, Kafka's is %d", key, got, want)
		}
	}
}

// TestInputsAreDeterministic checks the properties of the data that make
// Kafka Streams' output a function of the input alone
// (DIFFERENTIAL.md, "the traps").
func TestInputsAreDeterministic(t *testing.T) {
	phases := inputs()
	for i, ph := range phases {
		for _, r := range ph {
			if n := inputTopics[r.topic]; n == 0 || r.partition < 0 || int(r.partition) >= n {
				t.Errorf("phase %d: %s partition %d of %d", i, r.topic, r.partition, n)
			}
			if r.key != nil && r.partition != murmur2Partition(*r.key, inputTopics[r.topic]) {
				t.Errorf("phase %d: %s key %q not in its murmur2 partition", i, r.topic, *r.key)
			}
		}
	}
	t.Run("a word's occurrences share a partition or a timestamp", func(t *testing.T) {
		type seen struct {
			partition int32
			timestamp int64
		}
		where := map[string][]seen{}
		for _, r := range phases[0] {
			if r.topic == "wc-in" {
				for _, w := range words(string(r.value)) {
					where[w] = append(where[w], seen{r.partition, r.timestamp})
				}
			}
		}
		for w, ss := range where {
			samePartition, sameTime := true, true
			for _, s := range ss {
				samePartition = samePartition && s.partition == ss[0].partition
				sameTime = sameTime && s.timestamp == ss[0].timestamp
			}
			if !samePartition && !sameTime {
				t.Errorf("word %q is in several partitions at several times: %v", w, ss)
			}
		}
	})
	t.Run("no timestamp ties between the topics of a task", func(t *testing.T) {
		for _, pair := range [][2]string{{"ssj-left", "ssj-right"}, {"stj-stream", "stj-table"}} {
			times := map[string]string{}
			for _, r := range phases[0] {
				if r.topic != pair[0] && r.topic != pair[1] {
					continue
				}
				slot := fmt.Sprintf("%d@%d", r.partition, r.timestamp)
				if other, ok := times[slot]; ok && other != r.topic {
					t.Errorf("%s and %s both have a record at %d in partition %d", other, r.topic, r.timestamp, r.partition)
				}
				times[slot] = r.topic
			}
		}
	})
	t.Run("an order is touched once per foreign-key phase", func(t *testing.T) {
		for i, ph := range phases[1:] {
			touched := map[string]bool{}
			products := map[string]bool{}
			for _, r := range ph {
				switch r.topic {
				case "fk-orders":
					if touched[*r.key] {
						t.Errorf("phase %d changes order %s twice", i+1, *r.key)
					}
					touched[*r.key] = true
				case "fk-products":
					products[*r.key] = true
				}
			}
			if len(touched) > 0 && len(products) > 0 {
				t.Errorf("phase %d changes orders and products together", i+1)
			}
		}
	})
}

var nonWord = regexp.MustCompile(`\W+`)

// words is T1's flatMapValues as Java computes it: lower case (Locale.ROOT),
// split on \W+ (ASCII, as Java's without UNICODE_CHARACTER_CLASS), empty
// tokens dropped.
func words(line string) []string {
	var out []string
	for _, w := range nonWord.Split(strings.ToLower(line), -1) {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}
