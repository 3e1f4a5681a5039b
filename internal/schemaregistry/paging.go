package schemaregistry

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
)

// Confluent's paging: offset (default 0) skips, limit (default -1) caps a
// list. A limit that is not positive, or above the endpoint's largest,
// falls back to the endpoint's default, as its normalizeLimit does. The
// defaults and largest limits are Confluent's: schema lists (GET
// /schemas, referencedby) 1000, subject, version and context lists
// unbounded.
const (
	schemaSearchLimit = 1000
	unboundedLimit    = math.MaxInt32
)

// page is the offset and limit of a listing request.
type page struct {
	offset, limit int
}

// pageParams reads offset and limit for a list whose default and largest
// limit is max. A value that is not a number gets the 404 Jersey answers
// for a query parameter it cannot convert; a negative offset, which
// Confluent fails on with a 500, is refused with 422.
func pageParams(req *http.Request, max int) (page, *Error) {
	q := req.URL.Query()
	p := page{limit: max}
	if s := q.Get("offset"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return page{}, errHTTPNotFound()
		}
		if n < 0 {
			return page{}, errBadBody(fmt.Sprintf("Query parameter offset=%d is negative", n))
		}
		p.offset = int(n)
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return page{}, errHTTPNotFound()
		}
		if n > 0 && int(n) <= max {
			p.limit = int(n)
		}
	}
	return p, nil
}

// paged cuts one page out of a list.
func paged[T any](list []T, p page) []T {
	if p.offset >= len(list) {
		return []T{} // [], never null
	}
	list = list[p.offset:]
	if p.limit < len(list) {
		list = list[:p.limit]
	}
	return list
}

func errHTTPNotFound() *Error {
	return &Error{http.StatusNotFound, http.StatusNotFound, "HTTP 404 Not Found"}
}
