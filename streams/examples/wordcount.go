package examples

import (
	"regexp"
	"strings"

	"github.com/samsa-io/samsa/streams"
)

var nonWord = regexp.MustCompile(`\W+`)

// WordCount counts the words of the lines on input and writes each word's
// new count to output (key: the word, value: the count as an 8-byte
// big-endian long, Kafka's LongSerde). The lines' keys are ignored; the
// words become keys, so the counts go through a repartition topic
// (<application.id>-counts-repartition) and are kept in the store
// "counts" (changelog <application.id>-counts-changelog).
func WordCount(input, output string) (*streams.Topology, error) {
	b := streams.NewBuilder()
	lines := streams.From[string, string](b, []string{input})
	words := streams.FlatMapValues(lines, func(_ string, line string) []string {
		var out []string
		for _, w := range nonWord.Split(strings.ToLower(line), -1) {
			if w != "" {
				out = append(out, w)
			}
		}
		return out
	})
	counts := streams.GroupBy(words, func(_, word string) string { return word }).
		Count(streams.Materialized[string, int64]{StoreName: "counts"})
	counts.ToStream().To(output)
	return b.Build()
}
