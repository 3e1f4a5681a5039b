package broker

// ApiVersions (key 18), versions 0-4.
//
// Lists every API this broker answers with its version range (the table in
// apis.go, pinned by testdata/api_versions.golden), the supported and
// finalized features (KIP-584) from v3, and records the client's software
// name and version (KIP-511) for logs and client metrics subscriptions.
// GetTelemetrySubscriptions and PushTelemetry (KIP-714) are listed only
// when the broker has a receiver for client metrics, as in Kafka: here,
// with samsa.http.listener set (telemetry.go).
//
// A request above our maximum version is answered, as KIP-511 requires,
// with a v0 response carrying UNSUPPORTED_VERSION and ApiVersions' own
// range, as Kafka answers, so the client retries at a version we speak; that path is in handle, before
// the body is decoded. The response header is always v0 (appendResponse).
//
// Features (v3+, KIP-584): the supported ranges are this broker's
// (metadata.SupportedFeatures, also in its BrokerRegistration), the
// finalized levels the metadata image's (the controller writes them;
// UpdateFeatures changes them), with the image offset as their epoch. A v3
// answer leaves out the features whose supported minimum is 0
// (group.version, transaction.version), as Kafka does since KAFKA-17492:
// clients before v4 refuse such a range. transaction.version 2 tells clients to
// use transactions v2 (KIP-890): partitions join a transaction implicitly
// with their first transactional produce (Produce v12+), the group's offsets
// partition with TxnOffsetCommit v5+, and EndTxn v5 bumps the epoch.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ApiVersions, min: 0, max: 4, handle: typed(handleApiVersions)})
}

func handleApiVersions(b *Broker, c *conn, req *kmsg.ApiVersionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 && !c.identify(req) {
		resp.ErrorCode = kerr.InvalidRequest.Code
	}
	resp.ApiKeys = apiKeys(c.controllerListener, b.telemetry != nil)
	if req.Version >= 3 {
		b.appendFeatures(resp, req.Version)
	}
	return resp, nil
}

func (b *Broker) appendFeatures(resp *kmsg.ApiVersionsResponse, version int16) {
	supported := metadata.SupportedFeatures()
	for _, f := range supported {
		if f.Min == 0 && version < 4 {
			continue
		}
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = f.Name, f.Min, f.Max
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	}
	img := b.meta.Load()
	if img == nil {
		return
	}
	resp.FinalizedFeaturesEpoch = img.Offset()
	for _, f := range supported {
		if level := img.Feature(f.Name); level > 0 {
			ff := kmsg.NewApiVersionsResponseFinalizedFeature()
			ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = f.Name, level, level
			resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		}
	}
}

// apiKeys lists the APIs a listener advertises: the controller-only ones
// on controller listeners only, the client telemetry ones only with a
// receiver for them (telemetry.go).
func apiKeys(controllerListener, telemetry bool) []kmsg.ApiVersionsResponseApiKey {
	var keys []kmsg.ApiVersionsResponseApiKey
	for _, e := range sortedAPIs() {
		if e.controllerOnly && !controllerListener || e.needsTelemetry && !telemetry {
			continue
		}
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = e.key.Int16(), e.min, e.max
		keys = append(keys, k)
	}
	return keys
}

// unsupportedApiVersions is the v0 answer to an ApiVersions request at a
// version above ours: UNSUPPORTED_VERSION with ApiVersions' own range
// only, as Kafka's ApiVersionsRequest.getErrorResponse (KIP-511). The
// client retries at a version we speak, and so tells its software name and
// version, which logs and client metrics subscriptions match on; given the
// whole table instead, franz-go uses it and never retries.
func unsupportedApiVersions() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	k := kmsg.NewApiVersionsResponseApiKey()
	e := apiTable[kmsg.ApiVersions]
	k.ApiKey, k.MinVersion, k.MaxVersion = e.key.Int16(), e.min, e.max
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{k}
	return resp
}

// identify takes the client software an ApiVersions v3+ names, for logs,
// metrics and client metrics subscriptions; false when a field is not
// valid.
func (c *conn) identify(req *kmsg.ApiVersionsRequest) bool {
	c.clientSoftware = req.ClientSoftwareName + "/" + req.ClientSoftwareVersion
	if !validSoftwareField(req.ClientSoftwareName) || !validSoftwareField(req.ClientSoftwareVersion) {
		return false
	}
	c.softwareName, c.softwareVersion = req.ClientSoftwareName, req.ClientSoftwareVersion
	c.identifiedAs(req.ClientSoftwareName, req.ClientSoftwareVersion)
	return true
}

// validSoftwareField: KIP-511 allows letters, digits, '.', '-' and must
// start and end with a letter or digit.
func validSoftwareField(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(r byte) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' }
	for i := 0; i < len(s); i++ {
		if !alnum(s[i]) && s[i] != '.' && s[i] != '-' {
			return false
		}
	}
	return alnum(s[0]) && alnum(s[len(s)-1])
}
