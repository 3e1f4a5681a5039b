package streamsdiff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDescribeMatchesKafka requires Samsa's Describe() of each topology to
// be Kafka Streams 4.4's text for the same program (the goldens the Java
// run wrote to testdata/describe, the output topics' prefix written
// $PREFIX as the harness does): the node names, store names, internal
// topics and subtopologies are the ones Kafka's builder makes.
func TestDescribeMatchesKafka(t *testing.T) {
	const prefix = "samsa-"
	topos, err := samsaTopologies(prefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range apps {
		t.Run(app.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "describe", app.name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			d, err := topos[app.name].Describe()
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(d.String(), "(topic: "+prefix, "(topic: $PREFIX")
			if got != string(want) {
				t.Errorf("Describe() differs from Kafka Streams'\n%s", lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff shows both texts line by line, marking the lines that differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			b.WriteString("    " + wl + "\n")
			continue
		}
		b.WriteString("- " + wl + "\n+ " + gl + "\n")
	}
	return b.String()
}
