package schemaregistry

import (
	"fmt"
	"net/http"
)

// Error is an answer of the API that is not a success: Confluent's error
// body {"error_code":N,"message":"..."} and the HTTP status it goes with.
// Every operation of Registry returns one of these (or a store failure,
// which the API turns into 50001/50002), so the API maps errors in one
// place.
type Error struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Confluent's error codes (its rest/exceptions/Errors.java).
const (
	codeSubjectNotFound       = 40401
	codeVersionNotFound       = 40402
	codeSchemaNotFound        = 40403
	codeSubjectSoftDeleted    = 40404
	codeSubjectNotSoftDeleted = 40405
	codeVersionSoftDeleted    = 40406
	codeVersionNotSoftDeleted = 40407
	codeSubjectCompatNotSet   = 40408
	codeSubjectModeNotSet     = 40409
	codeIncompatible          = 409
	codeUnprocessable         = 422
	codeInvalidSchema         = 42201
	codeInvalidVersion        = 42202
	codeInvalidCompatibility  = 42203
	codeInvalidMode           = 42204
	codeOperationNotPermitted = 42205
	codeReferenceExists       = 42206
	codeContextNotEmpty       = 42211
	codeStore                 = 50001
	codeTimeout               = 50002
	codeForwarding            = 50003
	codeUnknownLeader         = 50004
	codeUnsupportedMediaType  = 415
)

func errSubjectNotFound(subject string) *Error {
	return &Error{http.StatusNotFound, codeSubjectNotFound, fmt.Sprintf("Subject '%s' not found.", subject)}
}

func errVersionNotFound(version int) *Error {
	return &Error{http.StatusNotFound, codeVersionNotFound, fmt.Sprintf("Version %d not found.", version)}
}

func errSchemaNotFound() *Error {
	return &Error{http.StatusNotFound, codeSchemaNotFound, "Schema not found"}
}

func errSchemaIDNotFound(id int) *Error {
	return &Error{http.StatusNotFound, codeSchemaNotFound, fmt.Sprintf("Schema %d not found", id)}
}

// The two soft-delete messages lack a space after the period in
// Confluent's registry too; clients match on the code, people on the
// words, so they are kept as Confluent writes them.
func errSubjectSoftDeleted(subject string) *Error {
	return &Error{http.StatusNotFound, codeSubjectSoftDeleted,
		fmt.Sprintf("Subject '%s' was soft deleted.Set permanent=true to delete permanently", subject)}
}

func errSubjectNotSoftDeleted(subject string) *Error {
	return &Error{http.StatusNotFound, codeSubjectNotSoftDeleted,
		fmt.Sprintf("Subject '%s' was not deleted first before being permanently deleted", subject)}
}

func errVersionSoftDeleted(subject string, version int) *Error {
	return &Error{http.StatusNotFound, codeVersionSoftDeleted,
		fmt.Sprintf("Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", subject, version)}
}

func errVersionNotSoftDeleted(subject string, version int) *Error {
	return &Error{http.StatusNotFound, codeVersionNotSoftDeleted,
		fmt.Sprintf("Subject '%s' Version %d was not deleted first before being permanently deleted", subject, version)}
}

func errSubjectCompatNotSet(subject string) *Error {
	return &Error{http.StatusNotFound, codeSubjectCompatNotSet,
		fmt.Sprintf("Subject '%s' does not have subject-level compatibility configured", subject)}
}

func errSubjectModeNotSet(subject string) *Error {
	return &Error{http.StatusNotFound, codeSubjectModeNotSet,
		fmt.Sprintf("Subject '%s' does not have subject-level mode configured", subject)}
}

func errIncompatible(subject string, details []string) *Error {
	return &Error{http.StatusConflict, codeIncompatible,
		fmt.Sprintf("Schema being registered is incompatible with an earlier schema for subject \"%s\", details: %s",
			subject, javaList(details))}
}

func errInvalidSchema(msg string) *Error {
	return &Error{http.StatusUnprocessableEntity, codeInvalidSchema, msg}
}

func errInvalidVersion(version string) *Error {
	return &Error{http.StatusUnprocessableEntity, codeInvalidVersion,
		fmt.Sprintf("The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", version)}
}

func errInvalidCompatibility() *Error {
	return &Error{http.StatusUnprocessableEntity, codeInvalidCompatibility,
		"Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"}
}

// Confluent's message names FORWARD too, a mode of its own forwarding
// setups; this registry does not take it, so the message lists the three
// it does.
func errInvalidMode() *Error {
	return &Error{http.StatusUnprocessableEntity, codeInvalidMode,
		"Invalid mode. Valid values are READWRITE, READONLY and IMPORT."}
}

func errNotPermitted(msg string) *Error {
	return &Error{http.StatusUnprocessableEntity, codeOperationNotPermitted, msg}
}

func errReferenceExists(msg string) *Error {
	return &Error{http.StatusUnprocessableEntity, codeReferenceExists,
		fmt.Sprintf("One or more references exist to the schema %s.", msg)}
}

func errBadBody(msg string) *Error {
	return &Error{http.StatusUnprocessableEntity, codeUnprocessable, msg}
}

func errStore(msg string, err error) *Error {
	return &Error{http.StatusInternalServerError, codeStore, fmt.Sprintf("%s; error: %v", msg, err)}
}

func errTimeout(msg string, err error) *Error {
	return &Error{http.StatusInternalServerError, codeTimeout, fmt.Sprintf("%s; error: %v", msg, err)}
}

func errUnknownPrimary() *Error {
	return &Error{http.StatusInternalServerError, codeUnknownLeader, "Leader not known."}
}

func errNotPrimary(primary string) *Error {
	return &Error{http.StatusInternalServerError, codeForwarding,
		fmt.Sprintf("This instance is not the primary (%s is); the request was not forwarded", primary)}
}

func errForwarding(err error) *Error {
	return &Error{http.StatusInternalServerError, codeForwarding,
		fmt.Sprintf("Error while forwarding the request to the leader; error: %v", err)}
}

// javaList renders strings as Java's List.toString does: [a, b, c].
func javaList(items []string) string {
	out := "["
	for i, s := range items {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out + "]"
}
