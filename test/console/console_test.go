package consoletest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// TestConsoleInBrowser drives the console in headless Chromium through
// every page and action on a seeded samsa serve: walk.mjs visits every
// section (status 200, one h1, no browser console errors, axe-core with
// no serious or critical violation, a screenshot), the keyboard
// shortcuts, the themes and the CSRF refusal; actions.mjs does each
// page's actions and checks what they show.
func TestConsoleInBrowser(t *testing.T) {
	requireBrowser(t)
	start := time.Now()
	mods := npmModules(t)
	scripts := scriptDir(t, mods)
	if _, err := devcluster.BuildOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	built := time.Now()
	p := startPlatform(t)
	up := time.Now()
	s := seedPlatform(t, p)
	t.Logf("npm ci and samsa built in %s, serve up in %s, seeded in %s: console %s, broker %s, registry %s, connect %s",
		built.Sub(start).Round(time.Millisecond), up.Sub(built).Round(time.Millisecond), time.Since(up).Round(time.Millisecond),
		p.Console, p.Broker, p.Registry, p.Connect)

	shots := os.Getenv("SAMSA_CONSOLE_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(t.TempDir(), "shots")
	} else if !filepath.IsAbs(shots) {
		// A relative directory is the repository's (docs/console), not
		// this package's, where go test runs.
		shots = filepath.Join(here(), "..", "..", shots)
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	seedJSON, _ := json.Marshal(s)
	env := []string{"CONSOLE_URL=" + p.Console, "LOGIN_URL=" + p.LoginConsole, "REGISTRY_URL=" + p.Registry,
		"CONNECT_URL=" + p.Connect, "SHOTS_DIR=" + shots, "SEED=" + string(seedJSON)}
	// The limits are for a hung browser: a run takes a minute or two,
	// more on a loaded machine.
	runNode(t, scripts, "walk.mjs", 4*time.Minute, env...)
	runNode(t, scripts, "actions.mjs", 6*time.Minute, env...)
	runNode(t, scripts, "login.mjs", 2*time.Minute, env...)
	checkEffects(t, p, s)
	t.Logf("the browser test took %s in all", time.Since(start).Round(time.Millisecond))
}

// checkEffects checks in the cluster, the registry and Connect what the
// action scripts did through the pages:
// the browser's word is not taken for it.
func checkEffects(t *testing.T, p *platform, s seed) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	hc := &http.Client{Timeout: 10 * time.Second}
	get := func(url string) (int, string) {
		resp, err := hc.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// The record produced through the form, on partition 2.
	recs := readPartition(ctx, t, p.Broker, s.JSONTopic, 2)
	found := false
	for _, r := range recs {
		if string(r.Key) == "from-the-browser" && strings.Contains(string(r.Value), "produced by the browser test") {
			found = len(r.Headers) == 1 && r.Headers[0].Key == "origin" && string(r.Headers[0].Value) == "playwright"
		}
	}
	if !found {
		t.Errorf("the record produced in the browser is not on %s partition 2 (with its header)", s.JSONTopic)
	}
	// Created and deleted; a config edited; records deleted.
	if td, err := adm.ListTopics(ctx, s.NewTopic); err != nil || td.Has(s.NewTopic) {
		t.Errorf("topic %s, created and deleted in the browser, is still there (%v)", s.NewTopic, err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, s.EmptyTopic)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rcs.On(s.EmptyTopic, nil); err != nil || !hasConfig(c.Configs, "retention.ms", "3600000") {
		t.Errorf("%s's retention.ms after the edit in the browser: %v %+v", s.EmptyTopic, err, c.Configs)
	}
	starts, err := adm.ListStartOffsets(ctx, s.AvroTopic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := starts.Lookup(s.AvroTopic, 0); o.Offset != 5 {
		t.Errorf("%s partition 0 starts at %d after deleting the records before 5 in the browser", s.AvroTopic, o.Offset)
	}
	// Reset to the earliest: every committed offset is 0.
	offs, err := adm.FetchOffsets(ctx, s.ClassicLag)
	if err != nil || offs.Error() != nil {
		t.Fatalf("offsets of %s: %v %v", s.ClassicLag, err, offs.Error())
	}
	n := 0
	offs.Each(func(o kadm.OffsetResponse) {
		n++
		if o.Topic == s.JSONTopic && o.At != 0 {
			t.Errorf("group %s partition %d committed %d after the reset to the earliest", s.ClassicLag, o.Partition, o.At)
		}
	})
	if n != 3 {
		t.Errorf("group %s has %d committed offsets after the reset, want 3", s.ClassicLag, n)
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := listed[s.RetiredGroup]; ok {
		t.Errorf("group %s, deleted in the browser, is still listed", s.RetiredGroup)
	}
	if st, body := get(p.Registry + "/subjects/" + s.NewSchema + "/versions"); st != 200 || strings.TrimSpace(body) != "[1]" {
		t.Errorf("registry subject %s: %d %s, want version 1 only", s.NewSchema, st, body)
	}
	if !connectorRunning(hc, p.Connect, s.Connector) {
		t.Errorf("connector %s is not running after pause and resume", s.Connector)
	}
	if st, _ := get(p.Connect + "/connectors/" + s.NewConnector); st != http.StatusNotFound {
		t.Errorf("connector %s, deleted in the browser, answers %d", s.NewConnector, st)
	}
	acls, err := adm.DescribeACLs(ctx, kadm.NewACLs().Allow(s.ACLUser).AllowHosts("*").Topics(s.AvroTopic).Operations(kadm.OpRead).
		ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || len(acls) != 1 || acls[0].Err != nil || len(acls[0].Described) != 1 {
		t.Errorf("the ACL created in the browser (%s READ on topic %s): %v %+v", s.ACLUser, s.AvroTopic, err, acls)
	}
	users, err := adm.DescribeUserSCRAMs(ctx, s.SCRAMUser)
	if err != nil || users[s.SCRAMUser].Err != nil || len(users[s.SCRAMUser].CredInfos) != 1 {
		t.Errorf("the SCRAM user created in the browser (%s): %v %+v", s.SCRAMUser, err, users)
	}
}

// readPartition reads a partition from its start to its end.
func readPartition(ctx context.Context, t *testing.T, broker, topic string, partition int32) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {partition: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, partition)
	var out []*kgo.Record
	for int64(len(out)) < end.Offset && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

func hasConfig(cs []kadm.Config, key, value string) bool {
	for _, c := range cs {
		if c.Key == key {
			return c.Value != nil && *c.Value == value
		}
	}
	return false
}
