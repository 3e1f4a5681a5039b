package restproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestKafkaErrorMapping: each Kafka error gets the status and code
// rest-utils' KafkaExceptionMapper gives its exception (and the
// documented departures: bad input Confluent answers 500 is 400 here).
func TestKafkaErrorMapping(t *testing.T) {
	for _, c := range []struct {
		err          error
		status, code int
	}{
		{kerr.UnknownTopicOrPartition, http.StatusNotFound, 40403},
		{kerr.UnknownTopicID, http.StatusNotFound, 40403},
		{kerr.BrokerNotAvailable, http.StatusServiceUnavailable, 50302},
		{kerr.MessageTooLarge, http.StatusRequestEntityTooLarge, 413},
		{kerr.RecordListTooLarge, http.StatusRequestEntityTooLarge, 413},
		{kerr.ThrottlingQuotaExceeded, http.StatusTooManyRequests, 42901},
		{kerr.InvalidReplicationFactor, http.StatusBadRequest, 40002},
		{kerr.SecurityDisabled, http.StatusBadRequest, 40002},
		{kerr.UnsupportedVersion, http.StatusBadRequest, 40002},
		{kerr.InvalidPartitions, http.StatusBadRequest, 40002},
		{kerr.InvalidRequest, http.StatusBadRequest, 40002},
		{kerr.UnknownServerError, http.StatusBadRequest, 40002},
		{kerr.PolicyViolation, http.StatusBadRequest, 40002},
		{kerr.TopicAlreadyExists, http.StatusBadRequest, 40002},
		{kerr.InvalidConfig, http.StatusBadRequest, 40002},
		{kerr.TopicDeletionDisabled, http.StatusBadRequest, 40002},
		{kerr.InvalidTopicException, http.StatusBadRequest, 40002},
		{kerr.InvalidReplicaAssignment, http.StatusBadRequest, 40002},
		{kerr.SaslAuthenticationFailed, http.StatusUnauthorized, 40101},
		{kerr.TopicAuthorizationFailed, http.StatusForbidden, 40301},
		{kerr.ClusterAuthorizationFailed, http.StatusForbidden, 40301},
		{kerr.RequestTimedOut, http.StatusInternalServerError, 50003},
		{kerr.NotLeaderForPartition, http.StatusInternalServerError, 50003},
		{kerr.ReassignmentInProgress, http.StatusInternalServerError, 50002},
		{fmt.Errorf("create: %w", kerr.TopicAlreadyExists), http.StatusBadRequest, 40002},
		{fmt.Errorf("metadata: %w", context.DeadlineExceeded), http.StatusInternalServerError, 50003},
		{errors.New("connection refused"), http.StatusInternalServerError, 50002},
	} {
		e := kafkaError(c.err)
		if e.Status != c.status || e.Code != c.code {
			t.Errorf("%v: got %d %d, want %d %d", c.err, e.Status, e.Code, c.status, c.code)
		}
	}
}
