package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-io/samsa/internal/controller"
)

// storage format --add-scram: the users log in with SCRAM on the first
// start, and no file of the node holds a password.
func TestStorageFormatAddScram(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	props := writeProps(t, dir, "node.id=1\nlog.dirs="+data+"\n"+
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0\n"+
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512\n")
	const id = "q1Sh-9_ISia_zwGINzRvyQ"
	out, err := runSamsa(t, "storage", "format", "-c", props, "-t", id,
		"--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret]",
		"-S", `SCRAM-SHA-512=[name="bob",password="bob-secret",iterations=8192]`)
	if err != nil {
		t.Fatal(err)
	}
	want := "Formatted " + data + ": cluster.id " + id + ", node.id 1.\n" +
		"Added the SCRAM-SHA-256 credential of user alice for the first start.\n" +
		"Added the SCRAM-SHA-512 credential of user bob for the first start.\n"
	if out != want {
		t.Fatalf("format:\n%s\nwant:\n%s", out, want)
	}

	addr, stop := serveSASL(t, props)
	login := func(m sasl.Mechanism) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(m), kgo.RequestRetries(0), kgo.RetryTimeout(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		return err
	}
	if err := login(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()); err != nil {
		t.Fatalf("alice on the first start: %v", err)
	}
	if err := login(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism()); err != nil {
		t.Fatalf("bob on the first start: %v", err)
	}
	if err := login(scram.Auth{User: "alice", Pass: "wrong"}.AsSha256Mechanism()); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("alice with a wrong password: %v", err)
	}
	stop()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		for _, secret := range []string{"alice-secret", "bob-secret"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the password %s", path, secret)
			}
		}
		return nil
	})
}

// serveSASL runs serve on a config and returns its SASL_PLAINTEXT
// listener's address, and a stop that waits for it to end.
func serveSASL(t *testing.T, props string) (string, func()) {
	t.Helper()
	logs := &syncBuffer{ch: make(chan string, 1000)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, props, nil, false, slog.New(slog.NewTextHandler(logs, nil))) }()
	re := regexp.MustCompile(`msg="samsa serving".*SASL_PLAINTEXT://[^ ]* \(bound ([0-9.:]+)\)`)
	addr := ""
	for addr == "" {
		select {
		case line := <-logs.ch:
			if m := re.FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
		case err := <-done:
			cancel()
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(10 * time.Second):
			cancel()
			t.Fatal("serve did not start")
		}
	}
	go func() {
		for range logs.ch {
		}
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	t.Cleanup(stop)
	return addr, stop
}

// --add-scram is refused with the reason, and a refused or failed format
// leaves no credentials behind.
func TestStorageFormatAddScramErrors(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	props := writeProps(t, dir, "node.id=1\nlog.dirs="+data+"\n")
	const id = "q1Sh-9_ISia_zwGINzRvyQ"
	alice := "SCRAM-SHA-256=[name=alice,password=alice-secret]"
	bootstrap := filepath.Join(data, "__cluster_metadata", controller.BootstrapRecordsFile)
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--add-scram", "SCRAM-SHA-1=[name=a,password=b]"}, `--add-scram: the mechanism "SCRAM-SHA-1" is not supported`},
		{[]string{"--add-scram", "SCRAM-SHA-256=[name=a]"}, `--add-scram: you must supply one of 'password' or 'saltedpassword' for "a"`},
		{[]string{"--add-scram", alice, "--add-scram", alice}, `--add-scram: the SCRAM-SHA-256 credential of "alice" is given twice`},
		{[]string{"--add-scram", alice, "--cluster-id", "not an id"}, `cluster.id "not an id"`},
	} {
		_, err := runSamsa(t, append([]string{"storage", "format", "-c", props, "-t", id}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("format %v: %v, want an error with %q", c.args, err, c.err)
		}
		if strings.Contains(err.Error(), "alice-secret") {
			t.Errorf("format %v: the error shows the password: %v", c.args, err)
		}
		if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("format %v left %s behind: %v", c.args, data, err)
		}
	}
	if _, err := runSamsa(t, "storage", "format", "-c", props, "-t", id); err != nil {
		t.Fatal(err)
	}
	_, err := runSamsa(t, "storage", "format", "-c", props, "-t", id, "--ignore-formatted", "--add-scram", alice)
	if want := "--add-scram: the metadata log directory " + data + " is formatted already: add users to a running cluster with samsa user create"; err == nil || err.Error() != want {
		t.Fatalf("format --add-scram of a formatted directory: %v\nwant %s", err, want)
	}
	if _, err := os.Stat(bootstrap); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused --add-scram wrote %s: %v", bootstrap, err)
	}
}
