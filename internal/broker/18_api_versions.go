package broker

// ApiVersions (key 18), versions 0-4.
//
// Lists every API this broker answers with its version range (the table in
// apis.go, pinned by testdata/api_versions.golden), the supported and
// finalized features (KIP-584) from v3, and records the client's software
// name and version (KIP-511) for logs.
//
// A request above our maximum version is answered, as KIP-511 requires,
// with a v0 response carrying UNSUPPORTED_VERSION and the API list, so the
// client can retry at a version we speak; that path is in handle, before
// the body is decoded. The response header is always v0 (appendResponse).
//
// Not done: features are advertised from the metadata image once the
// controller tracks finalized levels; until then the list is static.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ApiVersions, min: 0, max: 4, handle: typed(handleApiVersions)})
}

func handleApiVersions(b *Broker, c *conn, req *kmsg.ApiVersionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 {
		c.clientSoftware = req.ClientSoftwareName + "/" + req.ClientSoftwareVersion
		if !validSoftwareField(req.ClientSoftwareName) || !validSoftwareField(req.ClientSoftwareVersion) {
			resp.ErrorCode = kerr.InvalidRequest.Code
		}
	}
	resp.ApiKeys = apiKeys()
	return resp, nil
}

func apiKeys() []kmsg.ApiVersionsResponseApiKey {
	var keys []kmsg.ApiVersionsResponseApiKey
	for _, e := range sortedAPIs() {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = e.key.Int16(), e.min, e.max
		keys = append(keys, k)
	}
	return keys
}

// unsupportedApiVersions is the v0 answer to an ApiVersions request at a
// version above ours.
func unsupportedApiVersions() *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = apiKeys()
	return resp
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
