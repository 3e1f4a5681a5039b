package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/freeport"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/samsa-io/samsa/internal/vfs"
)

// samsa runs the root command with args and returns its output and error.
func runSamsa(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(new(bytes.Buffer))
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestStorageRandomUUID(t *testing.T) {
	a, err := runSamsa(t, "storage", "random-uuid")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := runSamsa(t, "storage", "random-uuid")
	id := strings.TrimSuffix(a, "\n")
	if _, err := metadata.ParseUUID(id); err != nil || a == b || !strings.HasSuffix(a, "\n") {
		t.Fatalf("random-uuid printed %q then %q (%v)", a, b, err)
	}
}

func TestStorageUnknownSubcommand(t *testing.T) {
	_, err := runSamsa(t, "storage", "formt")
	if err == nil || err.Error() != `unknown command "formt" for "samsa storage"; did you mean format? (see samsa storage --help)` {
		t.Fatalf("samsa storage formt: %v", err)
	}
}

// writeProps writes a server.properties and returns its path. The HTTP
// listener gets a free port and the Schema Registry none: the default
// ones may be taken, and tests run side by side.
func writeProps(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(path, []byte(text+"samsa.http.listener=127.0.0.1:0\nsamsa.schema.registry.listener=\nsamsa.rest.listener=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// storage format writes meta.properties into the log dir and the metadata
// log dir of the config, and then follows kafka-storage.sh: a formatted
// directory fails the command unless --ignore-formatted, and one of
// another cluster fails it even then.
func TestStorageFormat(t *testing.T) {
	dir := t.TempDir()
	logs, meta := filepath.Join(dir, "logs"), filepath.Join(dir, "meta")
	props := writeProps(t, dir, "node.id=3\nlog.dirs="+logs+"\nmetadata.log.dir="+meta+"\n")
	const id, other = "q1Sh-9_ISia_zwGINzRvyQ", "MkU3OEVBNTcwNTJENDM2Qg"

	out, err := runSamsa(t, "storage", "format", "--config", props, "--cluster-id", id)
	want := "Formatted " + logs + ": cluster.id " + id + ", node.id 3.\nFormatted " + meta + ": cluster.id " + id + ", node.id 3.\n"
	if err != nil || out != want {
		t.Fatalf("format: %v\n%s\nwant:\n%s", err, out, want)
	}
	for _, d := range []string{logs, meta} {
		if p, err := metaprops.Read(vfs.OS, d); err != nil || p.ClusterID != id || p.NodeID != 3 || p.DirectoryID == "" {
			t.Fatalf("%s: %+v %v", d, p, err)
		}
	}
	before, _ := os.ReadFile(metaprops.Path(logs))
	node4 := writeProps(t, t.TempDir(), "node.id=4\nlog.dirs="+logs+"\nmetadata.log.dir="+meta+"\n")

	for _, c := range []struct {
		args []string
		out  string
		err  string
	}{
		{[]string{"--config", props, "--cluster-id", id}, "", "log dir " + logs + " is already formatted: use --ignore-formatted"},
		{[]string{"-c", props, "-t", id, "-g"}, "All of the log directories are already formatted.\n", ""},
		{[]string{"--config", props, "--cluster-id", other, "--ignore-formatted"}, "", "log dir " + logs + " belongs to cluster " + id + ", not " + other},
		{[]string{"--config", node4, "--cluster-id", id, "--ignore-formatted"}, "", "has node.id 3, this node is 4"},
		{[]string{"--config", props}, "", `required flag(s) "cluster-id" not set`},
		{[]string{"--config", props, "--cluster-id", "a b", "--log.dirs", filepath.Join(dir, "x")}, "", `cluster.id "a b": byte 1 is not printable ASCII`},
		{[]string{"--config", props, "--cluster-id", id, "--override", "node.id"}, "", `--override "node.id": want name=value`},
		{[]string{"--config", filepath.Join(dir, "missing.properties"), "--cluster-id", id}, "", "missing.properties"},
	} {
		out, err := runSamsa(t, append([]string{"storage", "format"}, c.args...)...)
		if c.err == "" && (err != nil || out != c.out) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("format %v: %q, %v\nwant %q, error with %q", c.args, out, err, c.out, c.err)
		}
	}
	if after, _ := os.ReadFile(metaprops.Path(logs)); !bytes.Equal(after, before) {
		t.Fatalf("a refused or ignored format rewrote meta.properties:\n%s", after)
	}
	if ok, _ := vfs.OS.Exists(filepath.Join(dir, "x")); ok {
		t.Fatal("a refused format made its directory")
	}
}

// freePort is a loopback port nothing listens on (for a moment), outside
// the kernel's ephemeral range (internal/freeport).
func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A node configured with a quorum refuses to serve on unformatted
// directories, saying what to run; once storage format has run with the
// config it serves, with the cluster ID it was formatted with.
func TestServeNeedsStorageFormatWithQuorum(t *testing.T) {
	dir := t.TempDir()
	port := strconv.Itoa(freePort(t))
	data := filepath.Join(dir, "data")
	props := writeProps(t, dir, "node.id=1\nlisteners=PLAINTEXT://127.0.0.1:"+port+"\ncontroller.quorum.voters=1@127.0.0.1:"+port+"\nlog.dirs="+data+"\n")
	quiet := slog.New(slog.DiscardHandler)
	err := serve(context.Background(), props, nil, false, quiet)
	want := `log dir ` + data + ` is not formatted: run "samsa storage format --config server.properties --cluster-id <id>"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("serve before format: %v\nwant an error with %q", err, want)
	}

	out, err := runSamsa(t, "storage", "random-uuid")
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(out)
	if _, err := runSamsa(t, "storage", "format", "--config", props, "--cluster-id", id); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{ch: make(chan string, 1000)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, props, nil, false, slog.New(slog.NewTextHandler(logs, nil))) }()
	re := regexp.MustCompile(`msg="samsa serving".* cluster_id=(\S+)`)
	deadline := time.After(10 * time.Second)
	for served := ""; served == ""; {
		select {
		case line := <-logs.ch:
			if m := re.FindStringSubmatch(line); m != nil {
				served = m[1]
				if served != id {
					t.Errorf("serving cluster %s, formatted with %s", served, id)
				}
			}
		case err := <-done:
			t.Fatalf("serve after format stopped: %v", err)
		case <-deadline:
			t.Fatal("serve did not start")
		}
	}
	go func() {
		for range logs.ch {
		}
	}()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// storage format's quorum flags (KIP-853) reach FormatStorage: --standalone
// stores this controller as the only initial voter and says so; two of
// them at once are refused.
func TestStorageFormatQuorumFlags(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "meta")
	props := writeProps(t, dir, "process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://127.0.0.1:9093\ncontroller.listener.names=CONTROLLER\n"+
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT\ncontroller.quorum.bootstrap.servers=127.0.0.1:9093\nlog.dirs="+meta+"\n")
	const id = "q1Sh-9_ISia_zwGINzRvyQ"
	if _, err := runSamsa(t, "storage", "format", "-c", props, "-t", id, "--standalone", "--no-initial-controllers"); err == nil ||
		!strings.Contains(err.Error(), "only one of --standalone, --initial-controllers and --no-initial-controllers may be given") {
		t.Fatalf("two quorum flags: %v", err)
	}
	if _, err := runSamsa(t, "storage", "format", "-c", props, "-t", id); err == nil || !strings.Contains(err.Error(), "you must specify one of the following") {
		t.Fatalf("no quorum flag: %v", err)
	}
	out, err := runSamsa(t, "storage", "format", "-c", props, "-t", id, "-s")
	if err != nil {
		t.Fatal(err)
	}
	p, err := metaprops.Read(vfs.OS, meta)
	if err != nil {
		t.Fatal(err)
	}
	want := "Formatted " + meta + ": cluster.id " + id + ", node.id 1.\nStored the initial voters in " + metaprops.InitialVotersPath(meta) +
		": 1@127.0.0.1:9093:" + p.DirectoryID + ".\n"
	if out != want {
		t.Fatalf("format --standalone:\n%s\nwant:\n%s", out, want)
	}
}
