package metadata

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/scripttest"
)

// TestScripts runs the text scripts in testdata (internal/scripttest).
// Each case is a command line, its input lines, a "----" line and the
// expected output. Commands:
//
//	apply [offset=N]   input: encoded records, one per line, applied as one
//	                   batch; output: "ok" and the topic delta, or "error: ..."
//	dump               output: the whole image
//	snapshot           writes the image as a snapshot and reads it back
//	                   (the same dump, or the test fails); output: its
//	                   partition records
//
// Run with -update to rewrite the expected output.
func TestScripts(t *testing.T) {
	scripttest.Run(t, filepath.Join("testdata", "*.txt"), func(t *testing.T) func(c *scripttest.Case) []string {
		img := Empty()
		return func(c *scripttest.Case) []string {
			var out []string
			img, out = runCommand(t, img, c)
			return out
		}
	})
}

func runCommand(t *testing.T, img *Image, c *scripttest.Case) (*Image, []string) {
	fields := strings.Fields(c.Command)
	switch fields[0] {
	case "apply":
		offset := img.Offset() + 1
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "offset="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("line %d: %v", c.Line, err)
				}
				offset = n
			}
		}
		var recs []Record
		for _, in := range c.Input {
			r, err := DecodeRecord([]byte(in))
			if err != nil {
				return img, []string{"error: " + err.Error()}
			}
			recs = append(recs, r)
		}
		next, err := img.ApplyAt(offset, recs...)
		if err != nil {
			if next != img {
				t.Errorf("line %d: a failed apply returned a new image", c.Line)
			}
			return img, []string{"error: " + err.Error()}
		}
		return next, append([]string{"ok"}, formatDelta(DiffTopics(img, next))...)
	case "dump":
		return img, dumpImage(img)
	case "snapshot":
		var buf bytes.Buffer
		if err := WriteSnapshot(&buf, img); err != nil {
			t.Fatalf("line %d: %v", c.Line, err)
		}
		back, err := ReadSnapshot(&buf)
		if err != nil {
			return img, []string{"error: " + err.Error()}
		}
		if !slices.Equal(dumpImage(back), dumpImage(img)) {
			t.Errorf("line %d: the image read back differs:\n%s", c.Line, strings.Join(dumpImage(back), "\n"))
		}
		var out []string
		for _, r := range back.Records() {
			if _, ok := r.(PartitionRecord); ok {
				b, err := EncodeRecord(r)
				if err != nil {
					t.Fatalf("line %d: %v", c.Line, err)
				}
				out = append(out, string(b))
			}
		}
		return back, out
	}
	t.Fatalf("line %d: unknown command %q", c.Line, c.Command)
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
		line := fmt.Sprintf("broker %d incarnation=%s rack=%q endpoints=%s", b.NodeID, b.Incarnation, b.Rack, strings.Join(eps, ","))
		for _, f := range b.Features {
			line += fmt.Sprintf(" %s=%s", f.Name, f)
		}
		if b.Fenced {
			line += fmt.Sprintf(" fenced fencedAtMs=%d", b.FencedAtMs)
		}
		out = append(out, line)
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
			line := fmt.Sprintf("  %d leader=%d leaderEpoch=%d partitionEpoch=%d replicas=%v isr=%v",
				p.Partition, p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.Replicas, p.ISR)
			if p.Reassigning() {
				line += fmt.Sprintf(" adding=%v removing=%v", p.AddingReplicas, p.RemovingReplicas)
			}
			out = append(out, line)
		}
		if cfg := img.TopicConfig(tp.Name); len(cfg) > 0 {
			out = append(out, "  config "+formatConfig(cfg))
		}
	}
	for _, a := range img.ACLs() {
		out = append(out, fmt.Sprintf("acl %s resource=%d/%q/%d principal=%q host=%q operation=%d permission=%d",
			a.ID, a.ResourceType, a.ResourceName, a.PatternType, a.Principal, a.Host, a.Operation, a.PermissionType))
	}
	for _, c := range img.ScramCredentials() {
		out = append(out, fmt.Sprintf("scram %q mechanism=%d iterations=%d salt=%s storedKey=%s serverKey=%s",
			c.User, c.Mechanism, c.Iterations, b64(c.Salt), b64(c.StoredKey), b64(c.ServerKey)))
	}
	for _, tk := range img.DelegationTokens() {
		out = append(out, fmt.Sprintf("token %s owner=%q requester=%q renewers=%q issue=%d expiry=%d max=%d",
			tk.TokenID, tk.Owner, tk.Requester, tk.Renewers, tk.IssueTimestamp, tk.ExpiryTimestamp, tk.MaxTimestamp))
	}
	for _, e := range slices.SortedFunc(maps.Keys(img.ClientQuotas()), QuotaEntity.Compare) {
		values, _ := img.ClientQuota(e)
		var parts []string
		for _, k := range sortedKeys(values) {
			parts = append(parts, k+"="+strconv.FormatFloat(values[k], 'f', -1, 64))
		}
		out = append(out, fmt.Sprintf("quota %s: %s", e, strings.Join(parts, " ")))
	}
	for _, name := range img.ClientMetricsSubscriptions() {
		out = append(out, fmt.Sprintf("client metrics %q %s", name, formatConfig(img.ClientMetricsConfig(name))))
	}
	return out
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

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

// mustID parses a topic ID for tests.
func mustID(t testing.TB, s string) model.TopicID {
	t.Helper()
	id, err := ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
