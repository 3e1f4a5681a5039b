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
