package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata")

// TestReports runs the command on each history in testdata and compares
// its output with the golden report beside it.
func TestReports(t *testing.T) {
	for _, c := range []struct {
		args   []string
		golden string
		code   int
	}{
		{[]string{"testdata/clean.jsonl"}, "clean.txt", 0},
		{[]string{"-fail-at-least-once", "testdata/clean.jsonl"}, "clean.txt", 1},
		{[]string{"testdata/anomalies.jsonl"}, "anomalies.txt", 1},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errs bytes.Buffer
			if code := run(c.args, &out, &errs); code != c.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, c.code, errs.String())
			}
			golden := filepath.Join("testdata", c.golden)
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), out.String()); d != "" {
				t.Fatalf("report (-%s +got):\n%s", golden, d)
			}
		})
	}
}

func TestJSONReport(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"-json", "testdata/anomalies.jsonl"}, &out, &bytes.Buffer{}); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	var r struct {
		Anomalies []struct {
			Kind     string `json:"kind"`
			Evidence []struct {
				At string `json:"at"`
			} `json:"evidence"`
		} `json:"anomalies"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Anomalies) == 0 || r.Anomalies[0].Evidence[0].At == "" {
		t.Fatalf("JSON report %s: want anomalies with evidence naming its line", out.String())
	}
}

func TestUnusableInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"type":"produce","client":"p"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noFinal := filepath.Join(t.TempDir(), "nofinal.jsonl")
	if err := os.WriteFile(noFinal, []byte(`{"type":"produce","client":"p","topic":"t","partition":0,"value":"v","outcome":"unknown"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage: historycheck"},
		{[]string{"-colour"}, "flag provided but not defined"},
		{[]string{"testdata/missing.jsonl"}, "no such file"},
		{[]string{bad}, `bad.jsonl:1: produce: no "topic"`},
		{[]string{noFinal}, "t/0: no final read_uncommitted read"},
	} {
		var errs bytes.Buffer
		if code := run(c.args, &bytes.Buffer{}, &errs); code != 2 || !strings.Contains(errs.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs.String(), c.want)
		}
	}
}
