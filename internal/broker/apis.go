package broker

import (
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiEntry is one Kafka API this broker answers: its key, the version range
// it advertises in ApiVersions, and its handler. A request outside the
// range is refused before its body is decoded.
type apiEntry struct {
	key      kmsg.Key
	min, max int16
	handle   handlerFunc
	// controllerOnly APIs (broker registration and heartbeats, ISR
	// changes) are served and advertised on controller listeners only, as
	// Kafka's controllers do; elsewhere they are unknown.
	controllerOnly bool
	// needsTelemetry APIs (KIP-714's) are served and advertised only
	// when the broker has a receiver for client metrics (telemetry.go);
	// elsewhere they are unknown.
	needsTelemetry bool
}

// handlerFunc handles one decoded request. It returns the encoded response
// frame, nil for no response (acks=0 produce), or an error that closes the
// connection (Kafka closes it on requests it cannot make sense of).
type handlerFunc func(b *Broker, c *conn, h requestHeader, req kmsg.Request) (*frame, error)

// typed adapts a handler that takes its own request type and returns a
// kmsg response (nil for none).
func typed[Req kmsg.Request](fn func(b *Broker, c *conn, req Req) (kmsg.Response, error)) handlerFunc {
	return func(b *Broker, c *conn, h requestHeader, req kmsg.Request) (*frame, error) {
		resp, err := fn(b, c, req.(Req))
		if err != nil || resp == nil {
			return nil, err
		}
		b.settleQuotas(c, resp)
		return encodeResponse(h, resp), nil
	}
}

// apiTable lists every API; each handler file registers its entry in
// init, and apiVersionsGolden pins the result so any change shows in review.
var apiTable = map[kmsg.Key]apiEntry{}

func registerAPI(e apiEntry) {
	if _, dup := apiTable[e.key]; dup {
		panic(fmt.Sprintf("broker: API %s registered twice", e.key.Name()))
	}
	apiTable[e.key] = e
}

// sortedAPIs lists the table by key.
func sortedAPIs() []apiEntry {
	out := make([]apiEntry, 0, len(apiTable))
	for _, e := range apiTable {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}
