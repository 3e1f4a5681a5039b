package devcluster

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build compiles the samsa binary of the source tree the current directory
// is in (cmd/samsa of the module `go env GOMOD` names) into out. It is for
// tests, which run in their package's directory and need a binary of the
// code under test, not one found on the PATH.
func Build(ctx context.Context, out string) error {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("devcluster: go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(gomod))
	if mod == "" || mod == "/dev/null" {
		return errors.New("devcluster: not inside a Go module")
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/samsa")
	cmd.Dir = filepath.Dir(mod)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("devcluster: go build ./cmd/samsa: %w: %s", err, msg)
	}
	return nil
}
