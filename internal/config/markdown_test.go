package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files (docs/CONFIG-*.md)")

// TestMarkdownGolden pins the generated reference docs; the lead copies them to docs/.
func TestMarkdownGolden(t *testing.T) {
	for _, c := range []*Catalog{Broker, Topic, Group} {
		path := filepath.Join("..", "..", "docs", "CONFIG-"+c.scope+".md")
		got := c.Markdown()
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/config -update)", err)
		}
		if diff := cmp.Diff(string(want), got); diff != "" {
			t.Errorf("%s is stale; run go test ./internal/config -update (-file +generated):\n%s", path, diff)
		}
	}
}

func TestMarkdownRows(t *testing.T) {
	md := Topic.Markdown()
	for _, want := range []string{
		"| `retention.ms` | long | 604800000 | [-1,...] | log.retention.ms | medium |",
		"| `follower.replication.throttled.replicas` | list | \"\" |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("topic markdown lacks %q", want)
		}
	}
	md = Broker.Markdown()
	for _, want := range []string{
		"| `log.retention.ms` | long | null |  | cluster-wide | high |",
		"| `listeners` | string | PLAINTEXT://:9092 |",
		"| `node.id` | int | -1 |  | read-only | high |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("broker markdown lacks %q", want)
		}
	}
}
