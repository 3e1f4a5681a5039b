package pgtest

import (
	"context"
	"strings"
	"testing"
)

func TestStartAnswersQueriesWithLogicalReplication(t *testing.T) {
	s := Start(t)
	out, err := s.Exec(context.Background(), "postgres", "SHOW wal_level")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != "logical" {
		t.Fatalf("wal_level = %q, want logical (the CDC connector needs it)", out)
	}
}

func TestRestartKeepsTheDataAndThePort(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	if _, err := s.Exec(ctx, "postgres", "SET synchronous_commit = on; CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	port := s.Port
	s.Restart(t)
	out, err := s.Exec(ctx, "postgres", "SELECT v FROM kept")
	if err != nil || strings.TrimSpace(out) != "42" || s.Port != port {
		t.Fatalf("after restart: %q %v (port %d, was %d)", out, err, s.Port, port)
	}
}
