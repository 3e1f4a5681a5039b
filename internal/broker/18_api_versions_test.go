package broker

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestApiVersionsGolden pins what the broker advertises: a change to any
// API's version range or supported feature range must show in review as a
// change to this file.
func TestApiVersionsGolden(t *testing.T) {
	var sb strings.Builder
	for _, e := range sortedAPIs() {
		where := ""
		if e.controllerOnly {
			where = "  (controller listeners only)"
		}
		if e.needsTelemetry {
			where = "  (with samsa.http.listener only)"
		}
		fmt.Fprintf(&sb, "%3d %-28s %2d..%d%s\n", e.key, e.key.Name(), e.min, e.max, where)
	}
	// And the feature levels it supports (KIP-584), which ApiVersions v3+
	// and BrokerRegistration carry.
	for _, f := range metadata.SupportedFeatures() {
		fmt.Fprintf(&sb, "feature %-24s %2d..%d\n", f.Name, f.Min, f.Max)
	}
	const golden = "testdata/api_versions.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if sb.String() != string(want) {
		t.Fatalf("advertised API versions changed; run go test -run TestApiVersionsGolden -update and review:\n%s", sb.String())
	}
}

func TestApiVersionsEveryVersion(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	for v := int16(0); v <= 4; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-test", "1.0"
		resp := r.roundTrip(req, int32(v)).(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(apiKeys(false, false)) || len(apiKeys(false, false)) >= len(apiTable) {
			t.Fatalf("v%d: error %d, %d keys", v, resp.ErrorCode, len(resp.ApiKeys))
		}
	}
}

// TestApiVersionsTooNew: KIP-511, a version above ours gets a v0 response
// with UNSUPPORTED_VERSION and ApiVersions' range, as Kafka's.
func TestApiVersionsTooNew(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 4
	body := encodeRequest(req, 7)
	body[3] = 99 // version 99
	r.sendFrame(body)
	corr, payload, err := r.readFrame()
	if err != nil || corr != 7 {
		t.Fatalf("corr %d err %v", corr, err)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	if err := resp.ReadFrom(payload); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != kmsg.ApiVersions.Int16() ||
		resp.ApiKeys[0].MaxVersion != apiTable[kmsg.ApiVersions].max {
		t.Fatalf("error %d, keys %+v: want UNSUPPORTED_VERSION and ApiVersions' range alone, as Kafka", resp.ErrorCode, resp.ApiKeys)
	}
	// The connection stays usable.
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-test", "1.0"
	if resp := r.roundTrip(req, 8).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
		t.Fatalf("retry at v3: error %d", resp.ErrorCode)
	}
}

func TestApiVersionsBadSoftwareName(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "-bad name", "1"
	if resp := r.roundTrip(req, 1).(*kmsg.ApiVersionsResponse); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("error %d", resp.ErrorCode)
	}
}
