// Command historycheck reads the histories a failure test's clients wrote
// (JSON lines, docs/HISTORY-CHECK.md) and prints what internal/history's
// checker finds: every anomaly with its evidence, then the counts.
//
//	go run ./test/historycheck [-json] [-fail-at-least-once] file...
//
// The files are read in order as one history; a consumer session's events
// must sit in one file, in the order they happened. The exit code is 0
// when the history is clean, 1 when it shows an anomaly (at-least-once
// duplicates of producers without idempotence count only with
// -fail-at-least-once), 2 when it cannot be read or judged.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/samsa-io/samsa/internal/history"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("historycheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	failAtLeastOnce := fs.Bool("fail-at-least-once", false, "fail on duplicates of producers without idempotence too")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: historycheck [-json] [-fail-at-least-once] file...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	h, err := history.ReadFiles(fs.Args()...)
	if err != nil {
		fmt.Fprintln(stderr, "historycheck:", err)
		return 2
	}
	r, err := history.Check(h)
	if err != nil {
		fmt.Fprintln(stderr, "historycheck:", err)
		return 2
	}
	if *asJSON {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		err = e.Encode(r)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "historycheck:", err)
		return 2
	}
	if r.Failed(*failAtLeastOnce) {
		return 1
	}
	return 0
}
