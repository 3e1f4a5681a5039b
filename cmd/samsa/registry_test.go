package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// TestServeRunsRegistry: with samsa.schema.registry.listener set, serve
// runs the Schema Registry against itself, and stops it on shutdown.
func TestServeRunsRegistry(t *testing.T) {
	dir := t.TempDir()
	logs := &syncBuffer{ch: make(chan string, 100)}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	g := task.NewGroup(context.Background())
	defer g.Stop()
	g.Go(func(context.Context) {
		done <- serve(ctx, "", map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(dir, "data"),
			"samsa.http.listener": "", "samsa.schema.registry.listener": "127.0.0.1:0"}, false, logger)
	})
	re := regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)
	addr := ""
	for addr == "" {
		select {
		case line := <-logs.ch:
			if m := re.FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(60 * time.Second):
			t.Fatal("the registry did not start")
		}
	}
	drained := make(chan struct{})
	g.Go(func(context.Context) {
		for {
			select {
			case <-logs.ch:
			case <-drained:
				return
			}
		}
	})
	defer close(drained)
	resp, err := http.Post("http://"+addr+"/subjects/t-value/versions", "application/json", strings.NewReader(`{"schema":"\"string\""}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(got)) != `{"id":1}` {
		t.Fatalf("register: %d %s", resp.StatusCode, got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if _, err := http.Get("http://" + addr + "/subjects"); err == nil {
		t.Error("the registry still answers after serve returned")
	}
}
