package schemaregistry

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/samsa-io/samsa/internal/httpauth"
)

// withAuth puts basic authentication (internal/httpauth) in front of h,
// answering its refusals in the registry's error body; a nil Auth lets
// everything through.
func withAuth(a *httpauth.Auth, h http.Handler) http.Handler {
	if a == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, err := a.Check(req)
		switch {
		case err == nil:
			h.ServeHTTP(w, req)
		case errors.Is(err, httpauth.ErrUnauthorized):
			a.Challenge(w)
			writeError(w, &Error{http.StatusUnauthorized, http.StatusUnauthorized, "Unauthorized"})
		case errors.Is(err, httpauth.ErrForbidden):
			writeError(w, &Error{http.StatusForbidden, http.StatusForbidden, "Forbidden"})
		default:
			writeError(w, &Error{http.StatusInternalServerError, codeStore, fmt.Sprintf("Error while authenticating against the Kafka cluster: %v", errors.Unwrap(err))})
		}
	})
}
