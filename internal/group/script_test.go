package group

import (
	"path/filepath"
	"testing"

	"github.com/samsa-io/samsa/internal/scripttest"
)

// TestScripts runs the text scripts in testdata against a Coordinator with
// a manual clock and an in-memory log (internal/scripttest). The commands
// are documented on harness.run. Run with -update to rewrite the expected
// output after a deliberate change, and review the diff.
func TestScripts(t *testing.T) {
	scripttest.Run(t, filepath.Join("testdata", "*.txt"), func(t *testing.T) func(c *scripttest.Case) []string {
		h := newHarness(t)
		t.Cleanup(h.close)
		return func(c *scripttest.Case) []string { return h.run(c.Command, c.Line) }
	})
}
