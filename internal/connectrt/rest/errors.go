package rest

import (
	"context"
	"errors"
	"net/http"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// errorMessage is Kafka's ErrorMessage entity, the body of every error.
type errorMessage struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// The messages Kafka's HerderRequestHandler answers with.
const (
	msgTimedOut     = "Request timed out"
	msgInterrupted  = "Request interrupted"
	msgNoLeaderURL  = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	msgTooManyHops  = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
	msgForwardIOErr = "IO Error trying to forward REST request: "
)

// writeError answers err as Kafka's ConnectExceptionMapper does: the status
// and message of an *api.Error, 500 "Request timed out" for a herder call
// past the request timeout, 500 with the error's text for anything else.
// The error code is the HTTP status, as in every Kafka answer.
func writeError(w http.ResponseWriter, err error) {
	status, msg := errorStatus(err)
	writeJSON(w, status, errorMessage{ErrorCode: status, Message: msg})
}

func errorStatus(err error) (int, string) {
	var e *api.Error
	switch {
	case errors.As(err, &e):
		return e.Status, e.Message
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusInternalServerError, msgTimedOut
	case errors.Is(err, context.Canceled):
		return http.StatusInternalServerError, msgInterrupted
	default:
		return http.StatusInternalServerError, err.Error()
	}
}
