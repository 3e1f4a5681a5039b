package broker

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestHeader is a decoded Kafka request header (v1, or v2 for flexible
// requests). The client ID aliases the frame buffer.
type requestHeader struct {
	key           int16
	version       int16
	correlationID int32
	clientID      string
}

var errMalformed = errors.New("broker: malformed request")

// parseRequestHeader decodes the fixed part of the header. The tagged
// fields of a v2 header are skipped by skipHeaderTags once the caller knows
// the request is flexible.
func parseRequestHeader(frame []byte) (requestHeader, []byte, error) {
	var h requestHeader
	if len(frame) < 10 {
		return h, nil, fmt.Errorf("%w: %d-byte frame", errMalformed, len(frame))
	}
	h.key = int16(binary.BigEndian.Uint16(frame[0:]))
	h.version = int16(binary.BigEndian.Uint16(frame[2:]))
	h.correlationID = int32(binary.BigEndian.Uint32(frame[4:]))
	n := int16(binary.BigEndian.Uint16(frame[8:]))
	rest := frame[10:]
	if n > 0 {
		if int(n) > len(rest) {
			return h, nil, fmt.Errorf("%w: client id of %d bytes in %d", errMalformed, n, len(rest))
		}
		h.clientID = string(rest[:n])
		rest = rest[n:]
	}
	return h, rest, nil
}

// skipHeaderTags skips the tagged fields of a v2 request header.
func skipHeaderTags(b []byte) ([]byte, error) {
	r := kbin.Reader{Src: b}
	n := r.Uvarint()
	for i := uint32(0); i < n && r.Ok(); i++ {
		r.Uvarint()
		r.Span(int(r.Uvarint()))
	}
	if !r.Ok() {
		return nil, fmt.Errorf("%w: request header tags", errMalformed)
	}
	return r.Src, nil
}

// appendResponse encodes a whole response frame: size, correlation ID, the
// response header's empty tag section when flexible (never for
// ApiVersions, whose response header is always v0 so that a client of any
// version can read it), then the body.
func appendResponse(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt32(dst, correlationID)
	if resp.IsFlexible() && resp.Key() != kmsg.ApiVersions.Int16() {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
