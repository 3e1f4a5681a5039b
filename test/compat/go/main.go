// Command compat-go drives a Samsa broker ($SAMSA_BOOTSTRAP) with the Go
// client families (franz-go, sarama, segmentio/kafka-go,
// confluent-kafka-go, and franz-go held to the Kafka 2.1 protocol) and
// appends one result line per client and feature to $COMPAT_RESULTS. See
// test/compat/README.md for the contract. With COMPAT_PART=security it runs
// the security features instead, over the secured listeners lib.sh's
// start_secure_samsa exports (security.go). It exits 1 when any result is
// a fail.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
)

// features are the README's features in its order; a family reports each.
var features = []string{
	"create-topic", "delete-topic",
	"produce-none", "produce-gzip", "produce-snappy", "produce-lz4", "produce-zstd",
	"acks-0", "acks-1", "acks-all",
	"keys-headers", "group-consume-commit", "rebalance-two-members",
	"list-offsets", "reset-offsets", "describe-configs",
	"idempotent-produce", "transactions",
	"rebalance-two-members-kip848",
}

// featureTimeout bounds one feature; a feature still running after it is a
// fail and the suite moves on.
const featureTimeout = 45 * time.Second

type result struct {
	Client  string `json:"client"`
	Version string `json:"version"`
	Feature string `json:"feature"`
	Result  string `json:"result"`
	Detail  string `json:"detail"`
}

// unsupportedError marks what a client cannot do; the result is
// "unsupported" with the reason as detail.
type unsupportedError struct{ why string }

func (e unsupportedError) Error() string { return e.why }

func unsupported(format string, args ...any) error {
	return unsupportedError{fmt.Sprintf(format, args...)}
}

// passNote is a pass with a remark for the detail field.
type passNote struct{ note string }

func (e passNote) Error() string { return e.note }

// moduleVersion is the version of module path in this binary's build.
func moduleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "unknown"
}

type output struct {
	mu     sync.Mutex
	f      *os.File
	failed bool
}

// add prints r as progress and keeps it for write.
func (o *output) add(r result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r.Result == "fail" {
		o.failed = true
	}
	mark := map[string]string{"pass": "ok  ", "fail": "FAIL", "unsupported": "n/a "}[r.Result]
	fmt.Println(strings.TrimSpace(fmt.Sprintf("%s %-30s %-22s %s", mark, r.Client, r.Feature, r.Detail)))
}

// write appends result lines; the families run concurrently, so they are
// written at the end in a fixed order (the report's columns follow it).
func (o *output) write(rs []result) {
	for _, r := range rs {
		b, _ := json.Marshal(r)
		fmt.Fprintf(o.f, "%s\n", b)
	}
}

// runFeature runs fn with a timeout and turns its error into a result.
func runFeature(h *harness, fam family, feature string, fn func(ctx context.Context, h *harness, fam family) error) result {
	r := result{Client: fam.name(), Version: fam.version(), Feature: feature}
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		done <- fn(ctx, h, fam)
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(featureTimeout + 5*time.Second):
		err = fmt.Errorf("timed out after %v", featureTimeout)
	}
	var ue unsupportedError
	var pn passNote
	switch {
	case err == nil:
		r.Result = "pass"
	case errors.As(err, &pn):
		r.Result = "pass"
		r.Detail = pn.note
	case errors.As(err, &ue):
		r.Result = "unsupported"
		r.Detail = ue.why
	default:
		r.Result = "fail"
		r.Detail = err.Error()
		if ctx.Err() != nil && !strings.Contains(r.Detail, "deadline") {
			r.Detail += fmt.Sprintf(" (feature timeout %v)", featureTimeout)
		}
	}
	if d := time.Since(start); d > 10*time.Second && r.Result == "pass" {
		r.Detail = fmt.Sprintf("took %v", d.Round(time.Second))
	}
	return r
}

func main() {
	only := flag.String("clients", "", "comma-separated client names to run (default all)")
	flag.Parse()
	bootstrap := os.Getenv("SAMSA_BOOTSTRAP")
	if bootstrap == "" {
		fmt.Fprintln(os.Stderr, "SAMSA_BOOTSTRAP is not set")
		os.Exit(2)
	}
	path := os.Getenv("COMPAT_RESULTS")
	f := os.Stdout
	if path != "" {
		var err error
		f, err = os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer f.Close()
	}
	out := &output{f: f}
	h, err := newHarness(bootstrap)
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(2)
	}
	defer h.close()
	// The security part (README, "Security") runs its own features against
	// the secured broker; SAMSA_BOOTSTRAP is its PLAINTEXT listener, for
	// the harness.
	feats, funcs := features, featureFuncs
	security := os.Getenv("COMPAT_PART") == "security"
	if security {
		if h.sec, err = loadSecEnv(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		feats, funcs = securityFeatures, securityFuncs
		if h.sec.authorizer == "" {
			// Without an authorizer nothing a client sees depends on its
			// principal: the check is left out rather than faked.
			feats = slices.DeleteFunc(slices.Clone(feats), func(f string) bool { return f == "mtls-principal" })
			fmt.Println("mtls-principal: not run, the broker has no authorizer (SAMSA_AUTHORIZER is empty)")
		}
	}

	fams := []family{
		newFranzFamily(bootstrap, false),
		newFranzFamily(bootstrap, true),
		newSaramaFamily(bootstrap),
		newKafkaGoFamily(bootstrap),
		newConfluentFamily(bootstrap),
	}
	results := make([][]result, len(fams))
	start := time.Now()
	var wg sync.WaitGroup
	for i, fam := range fams {
		if *only != "" && !strings.Contains(","+*only+",", ","+fam.name()+",") {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := map[string]string{}
			for _, feat := range feats {
				r := runFeature(h, fam, feat, funcs[feat])
				got[feat] = r.Result
				out.add(r)
				results[i] = append(results[i], r)
			}
			if of, ok := fam.(*franzFamily); ok && of.old && !security {
				r := oldProtocolEra(of, got)
				out.add(r)
				results[i] = append(results[i], r)
			}
		}()
	}
	wg.Wait()
	for _, rs := range results {
		out.write(rs)
	}
	fmt.Printf("go compat suite: %v\n", time.Since(start).Round(time.Second))
	if out.failed {
		os.Exit(1)
	}
}

// oldProtocolEra passes when the Kafka 2.1 protocol client could produce,
// consume and use a group.
func oldProtocolEra(fam family, got map[string]string) result {
	r := result{Client: fam.name(), Version: fam.version(), Feature: "old-protocol-era", Result: "pass"}
	var bad []string
	for _, f := range []string{"produce-none", "group-consume-commit"} {
		if got[f] != "pass" {
			bad = append(bad, f+" "+got[f])
		}
	}
	if len(bad) > 0 {
		r.Result = "fail"
		r.Detail = "needs produce, consume and group with the Kafka 2.1 protocol: " + strings.Join(bad, ", ")
	}
	return r
}

// seeds splits SAMSA_BOOTSTRAP, which names one broker or several
// (host:port,host:port, a cluster), for the clients that take a list.
func seeds(bootstrap string) []string { return strings.Split(bootstrap, ",") }
