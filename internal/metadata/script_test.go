package metadata

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/model"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt with the actual output")

// TestScripts runs the text scripts in testdata. Each case is a command line,
// its input lines, a "----" line and the expected output, ended by a blank
// line; lines starting with '#' before a command are comments. Commands:
//
//	apply [offset=N]   input: encoded records, one per line, applied as one
//	                   batch; output: "ok" and the topic delta, or "error: ..."
//	dump               output: the whole image
//
// Run with -update to rewrite the expected output.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runScript(t, file) })
	}
}

type scriptCase struct {
	comments []string
	command  string
	input    []string
	output   []string
	line     int
}

func runScript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := parseScript(string(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	img := Empty()
	for i := range cases {
		c := &cases[i]
		var got []string
		img, got = runCommand(t, img, c)
		if *update {
			c.output = got
			continue
		}
		if !slices.Equal(got, c.output) {
			t.Errorf("%s:%d: %s\n got:\n%s\nwant:\n%s", file, c.line, c.command,
				strings.Join(got, "\n"), strings.Join(c.output, "\n"))
		}
	}
	if *update {
		if err := os.WriteFile(file, []byte(formatScript(cases)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runCommand(t *testing.T, img *Image, c *scriptCase) (*Image, []string) {
	fields := strings.Fields(c.command)
	switch fields[0] {
	case "apply":
		offset := img.Offset() + 1
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "offset="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("line %d: %v", c.line, err)
				}
				offset = n
			}
		}
		var recs []Record
		for _, in := range c.input {
			r, err := DecodeRecord([]byte(in))
			if err != nil {
				return img, []string{"error: " + err.Error()}
			}
			recs = append(recs, r)
		}
		next, err := img.ApplyAt(offset, recs...)
		if err != nil {
			if next != img {
				t.Errorf("line %d: a failed apply returned a new image", c.line)
			}
			return img, []string{"error: " + err.Error()}
		}
		return next, append([]string{"ok"}, formatDelta(DiffTopics(img, next))...)
	case "dump":
		return img, dumpImage(img)
	}
	t.Fatalf("line %d: unknown command %q", c.line, c.command)
	return nil, nil
}

func formatDelta(d TopicDelta) []string {
	var out []string
	for _, tp := range d.Created {
		out = append(out, "created "+tp.Name)
	}
	for _, tp := range d.Changed {
		out = append(out, "changed "+tp.Name)
	}
	for _, tp := range d.Deleted {
		out = append(out, "deleted "+tp.Name)
	}
	return out
}

// dumpImage prints every part of an image in a fixed order.
func dumpImage(img *Image) []string {
	out := []string{fmt.Sprintf("offset %d", img.Offset())}
	if img.ClusterID() != "" {
		out = append(out, "cluster "+img.ClusterID())
	}
	features := img.Features()
	for _, name := range sortedKeys(features) {
		out = append(out, fmt.Sprintf("feature %s=%d", name, features[name]))
	}
	for _, b := range img.Brokers() {
		var eps []string
		for _, ep := range b.Endpoints {
			eps = append(eps, fmt.Sprintf("%s://%s:%d/%s", ep.Name, ep.Host, ep.Port, ep.SecurityProtocol))
		}
		out = append(out, fmt.Sprintf("broker %d incarnation=%s rack=%q endpoints=%s", b.NodeID, b.Incarnation, b.Rack, strings.Join(eps, ",")))
	}
	if img.NextProducerID() > 0 {
		out = append(out, fmt.Sprintf("next producer id %d", img.NextProducerID()))
	}
	for _, res := range []string{"", "0", "1", "2", "3"} {
		if cfg := img.BrokerConfig(res); len(cfg) > 0 {
			out = append(out, fmt.Sprintf("broker config %q %s", res, formatConfig(cfg)))
		}
	}
	for _, tp := range img.Topics() {
		out = append(out, fmt.Sprintf("topic %s id=%s", tp.Name, FormatUUID(tp.ID)))
		for _, p := range tp.Partitions {
			out = append(out, fmt.Sprintf("  %d leader=%d leaderEpoch=%d partitionEpoch=%d replicas=%v isr=%v",
				p.Partition, p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.Replicas, p.ISR))
		}
		if cfg := img.TopicConfig(tp.Name); len(cfg) > 0 {
			out = append(out, "  config "+formatConfig(cfg))
		}
	}
	return out
}

func formatConfig(cfg map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(cfg) {
		parts = append(parts, k+"="+cfg[k])
	}
	return strings.Join(parts, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func parseScript(s string) ([]scriptCase, error) {
	lines := strings.Split(s, "\n")
	var cases []scriptCase
	var cur *scriptCase
	state := "between" // between, input, output
	for i, line := range lines {
		switch state {
		case "between":
			switch {
			case strings.TrimSpace(line) == "":
			case strings.HasPrefix(line, "#"):
				cases = append(cases, scriptCase{})
				cur = &cases[len(cases)-1]
				cur.comments = append(cur.comments, line)
				state = "comments"
			default:
				cases = append(cases, scriptCase{command: line, line: i + 1})
				cur = &cases[len(cases)-1]
				state = "input"
			}
		case "comments":
			if strings.HasPrefix(line, "#") {
				cur.comments = append(cur.comments, line)
			} else if strings.TrimSpace(line) != "" {
				cur.command, cur.line, state = line, i+1, "input"
			}
		case "input":
			if line == "----" {
				state = "output"
			} else {
				cur.input = append(cur.input, line)
			}
		case "output":
			if strings.TrimSpace(line) == "" {
				state = "between"
			} else {
				cur.output = append(cur.output, line)
			}
		}
	}
	if state == "input" || state == "comments" {
		return nil, fmt.Errorf("case at line %d has no ---- line", cur.line)
	}
	return cases, nil
}

func formatScript(cases []scriptCase) string {
	var b strings.Builder
	for i, c := range cases {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, l := range c.comments {
			b.WriteString(l + "\n")
		}
		b.WriteString(c.command + "\n")
		for _, l := range c.input {
			b.WriteString(l + "\n")
		}
		b.WriteString("----\n")
		for _, l := range c.output {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// mustID parses a topic ID for tests.
func mustID(t testing.TB, s string) model.TopicID {
	t.Helper()
	id, err := ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
