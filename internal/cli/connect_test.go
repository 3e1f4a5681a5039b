package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// TestConnectStandalone runs samsa connect --standalone as
// connect-standalone.sh is run: a worker properties file and connector
// property files; lines of a file reach another file through a topic.
func TestConnectStandalone(t *testing.T) {
	b := newSamsaBroker(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	if err := os.WriteFile(in, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	worker := write("worker.properties", "bootstrap.servers="+b.addr+"\nlisteners=http://127.0.0.1:0\n"+
		"key.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\n"+
		"offset.storage.file.filename="+filepath.Join(dir, "offsets")+"\noffset.flush.interval.ms=200\n")
	src := write("src.properties", "name=local-file-source\nconnector.class=FileStreamSource\ntasks.max=1\nfile="+in+"\ntopic=connect-test\n")
	snk := write("snk.properties", "name=local-file-sink\nconnector.class=FileStreamSink\ntasks.max=1\nfile="+out+"\ntopics=connect-test\n")

	proc := exec.Command(samsaBinary(t), "connect", "--standalone", worker, src, snk)
	stdout, err := proc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	proc.Stderr = &stderr
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	g := task.NewGroup(context.Background())
	t.Cleanup(g.Stop)
	t.Cleanup(func() { proc.Process.Kill() })
	first := make(chan string, 1)
	g.Go(func(context.Context) {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		first <- line
		io.Copy(io.Discard, stdout)
	})
	select {
	case line := <-first:
		if !regexp.MustCompile(`connect worker \(standalone\) serving on http://127\.0\.0\.1:[0-9]+`).MatchString(line) {
			t.Fatalf("first line %q; stderr:\n%s", line, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("samsa connect did not start; stderr:\n%s", stderr.String())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(out)
		if string(data) == "one\ntwo\nthree\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("out.txt is %q; stderr:\n%s", data, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConnectRefusals: what samsa connect cannot honour is refused by name.
func TestConnectRefusals(t *testing.T) {
	c := newTestCluster(t)
	dir := t.TempDir()
	write := func(content string) string {
		p := filepath.Join(dir, fmt.Sprintf("w%d.properties", time.Now().UnixNano()))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := "key.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\n"
	c.fails("a worker properties file is needed", "connect")
	c.fails("plugin.path: connectors are built into the samsa binary", "connect", "--standalone", write(base+"offset.storage.file.filename=/tmp/x\nplugin.path=/opt/connectors\n"))
	c.fails("unknown worker property bogus.setting", "connect", "--standalone", write(base+"offset.storage.file.filename=/tmp/x\nbogus.setting=1\n"))
	c.fails(`Missing required configuration "group.id"`, "connect", write(base+"config.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"))
	c.fails("three different topics", "connect", write(base+"group.id=g\nconfig.storage.topic=c\noffset.storage.topic=c\nstatus.storage.topic=s\n"))
	c.fails("connector property files", "connect", write(base+"group.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"), "extra.properties")
	c.fails("exactly.once.source.support=preparing", "connect", write(base+"group.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\nexactly.once.source.support=preparing\n"))
	c.fails("client property max.block.ms is not supported", "connect", "--standalone", write(base+"offset.storage.file.filename=/tmp/x\nproducer.max.block.ms=100\n"))
	c.fails("client property max.poll.interval.ms is not supported", "connect", "--standalone", write(base+"offset.storage.file.filename=/tmp/x\nconsumer.max.poll.interval.ms=1000\n"))
	c.fails("unknown worker property internal.key.converter", "connect", "--standalone", write(base+"offset.storage.file.filename=/tmp/x\ninternal.key.converter=x\n"))
	c.fails("Invalid value https for configuration rest.advertised.listener", "connect", "--standalone", write(base+"offset.storage.file.filename=/tmp/x\nrest.advertised.listener=https\n"))
}
