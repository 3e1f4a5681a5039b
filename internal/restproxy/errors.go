package restproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Error is an answer of the API that is not a success: Confluent's error
// body {"error_code":N,"message":"..."} and the HTTP status it goes with.
// Handlers return these (or a Kafka error, which kafkaError maps), so the
// API maps errors in this one place.
type Error struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Confluent's error codes: kafka-rest's Errors.java and rest-utils'
// KafkaExceptionMapper. A plain HTTP error (bad JSON, wrong content type,
// a cluster or config that does not exist) carries its status as its code,
// as rest-utils' WebApplicationExceptionMapper answers.
const (
	codeTopicNotFound     = 40403
	codePartitionNotFound = 40402
	codeKafkaBadRequest   = 40002
	codeAuthentication    = 40101
	codeAuthorization     = 40301
	codeKafkaError        = 50002
	codeKafkaRetriable    = 50003
	codeBrokerUnavailable = 50302
	codeThrottlingQuota   = 42901
)

func errNotFound(msg string) *Error {
	return &Error{http.StatusNotFound, http.StatusNotFound, msg}
}

func errClusterNotFound(id string) *Error {
	return errNotFound(fmt.Sprintf("Cluster %s cannot be found.", id))
}

// errTopicNotFound is what Confluent answers when Kafka answers
// UNKNOWN_TOPIC_OR_PARTITION: KafkaExceptionMapper's 40403 with the
// exception's message.
func errTopicNotFound() *Error {
	return &Error{http.StatusNotFound, codeTopicNotFound, kerr.UnknownTopicOrPartition.Description}
}

func errPartitionNotFound() *Error {
	return &Error{http.StatusNotFound, codePartitionNotFound, "Partition not found."}
}

func errBadRequest(msg string) *Error {
	return &Error{http.StatusBadRequest, http.StatusBadRequest, msg}
}

func errUnsupportedMediaType() *Error {
	return &Error{http.StatusUnsupportedMediaType, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type"}
}

func errTooLarge(limit int64) *Error {
	return &Error{http.StatusRequestEntityTooLarge, http.StatusRequestEntityTooLarge,
		fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes", limit)}
}

// kafkaError maps an error of a Kafka request as rest-utils'
// KafkaExceptionMapper maps Kafka's exceptions (fromKafkaCode has the
// table). A request that ran out of time waiting for the cluster is
// Kafka's TimeoutException there, a retriable one: 500 50003.
func kafkaError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return fromKafkaCode(ke)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{http.StatusInternalServerError, codeKafkaRetriable, "Timed out waiting for the Kafka cluster: " + err.Error()}
	}
	return &Error{http.StatusInternalServerError, codeKafkaError, "Unexpected Kafka error: " + err.Error()}
}

// fromKafkaCode is KafkaExceptionMapper's table: UNKNOWN_TOPIC_OR_PARTITION
// and UNKNOWN_TOPIC_ID 404 40403; BROKER_NOT_AVAILABLE 503 50302;
// MESSAGE_TOO_LARGE (RecordTooLargeException) 413 413;
// THROTTLING_QUOTA_EXCEEDED 429 42901; the input Kafka refused
// (INVALID_REPLICATION_FACTOR, SECURITY_DISABLED, UNSUPPORTED_VERSION,
// INVALID_PARTITIONS, INVALID_REQUEST, UNKNOWN_SERVER_ERROR,
// POLICY_VIOLATION, TOPIC_ALREADY_EXISTS, INVALID_CONFIG,
// TOPIC_DELETION_DISABLED, INVALID_TOPIC_EXCEPTION) 400 40002;
// authentication 401 40101, authorization 403 40301; other retriable
// errors 500 50003, the rest 500 50002.
//
// Where Confluent's mapper falls through to 500 for an error that is the
// request's fault, this answers 400 40002 instead (a 500 tells the user
// to retry what can never succeed): INVALID_REPLICA_ASSIGNMENT,
// INVALID_TIMESTAMP, INVALID_RECORD, CORRUPT_MESSAGE; RECORD_LIST_TOO_LARGE
// is 413 with MESSAGE_TOO_LARGE.
func fromKafkaCode(ke *kerr.Error) *Error {
	msg := ke.Description
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.UnknownTopicID:
		return errTopicNotFound()
	case kerr.BrokerNotAvailable:
		return &Error{http.StatusServiceUnavailable, codeBrokerUnavailable, msg}
	case kerr.MessageTooLarge, kerr.RecordListTooLarge:
		return &Error{http.StatusRequestEntityTooLarge, http.StatusRequestEntityTooLarge, msg}
	case kerr.ThrottlingQuotaExceeded:
		return &Error{http.StatusTooManyRequests, codeThrottlingQuota, msg}
	case kerr.TopicAlreadyExists, kerr.InvalidTopicException, kerr.InvalidPartitions,
		kerr.InvalidReplicationFactor, kerr.InvalidReplicaAssignment, kerr.InvalidConfig,
		kerr.InvalidRequest, kerr.PolicyViolation, kerr.UnsupportedVersion, kerr.InvalidTimestamp,
		kerr.InvalidRecord, kerr.CorruptMessage, kerr.SecurityDisabled, kerr.UnknownServerError,
		kerr.TopicDeletionDisabled:
		return &Error{http.StatusBadRequest, codeKafkaBadRequest, msg}
	case kerr.SaslAuthenticationFailed, kerr.IllegalSaslState, kerr.UnsupportedSaslMechanism:
		return &Error{http.StatusUnauthorized, codeAuthentication, msg}
	case kerr.TopicAuthorizationFailed, kerr.ClusterAuthorizationFailed, kerr.GroupAuthorizationFailed,
		kerr.TransactionalIDAuthorizationFailed, kerr.DelegationTokenAuthorizationFailed:
		return &Error{http.StatusForbidden, codeAuthorization, msg}
	}
	if ke.Retriable {
		return &Error{http.StatusInternalServerError, codeKafkaRetriable, msg}
	}
	return &Error{http.StatusInternalServerError, codeKafkaError, msg}
}

// The v2 consumer instances' errors, as Confluent's Errors.java and
// RestConstraintViolationException name them.
const (
	codeConsumerInstanceNotFound        = 40403
	codeConsumerFormatMismatch          = 40601
	codeConsumerAlreadyExists           = 40902
	codeIllegalState                    = 40903
	codeInvalidConsumerConfig           = 42204
	codeInvalidConsumerConfigConstraint = 40001
	codeConstraintViolation             = 42200
)

func errConsumerInstanceNotFound() *Error {
	return &Error{http.StatusNotFound, codeConsumerInstanceNotFound, "Consumer instance not found."}
}

func errConsumerAlreadyExists() *Error {
	return &Error{http.StatusConflict, codeConsumerAlreadyExists,
		"Consumer with specified consumer ID already exists in the specified consumer group."}
}

func errConsumerFormatMismatch() *Error {
	return &Error{http.StatusNotAcceptable, codeConsumerFormatMismatch,
		"The requested embedded data format does not match the deserializer for this consumer instance"}
}

func errIllegalState(msg string) *Error {
	return &Error{http.StatusConflict, codeIllegalState, "Illegal state: " + msg}
}

func errInvalidConsumerConfig(msg string) *Error {
	return &Error{http.StatusUnprocessableEntity, codeInvalidConsumerConfig, "Invalid consumer configuration: " + msg}
}

func errConstraintViolation(msg string) *Error {
	return &Error{http.StatusUnprocessableEntity, codeConstraintViolation, msg}
}
