package broker

// DescribeUserScramCredentials (key 50), version 0 (KIP-554).
//
// Lists the SCRAM credentials of the broker's current metadata image: per
// user, each mechanism (1 SCRAM-SHA-256, 2 SCRAM-SHA-512) with its
// iteration count, never the salt or the keys. A null or empty user list
// means every user, sorted by name. A named user without a credential is
// RESOURCE_NOT_FOUND, a name asked for twice is DUPLICATE_RESOURCE (one
// result per name), with Kafka's messages (ScramImage.describe); the
// results follow the order names first appear, where Kafka's is a hash
// map's. No authorizer is needed: Kafka answers this API without one.
// With one, DESCRIBE on the cluster is, else CLUSTER_AUTHORIZATION_FAILED
// for the request and each user named (Kafka's
// KafkaApis.handleDescribeUserScramCredentialsRequest).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeUserSCRAMCredentials, min: 0, max: 0, handle: typed(handleDescribeUserScramCredentials)})
}

func handleDescribeUserScramCredentials(b *Broker, c *conn, req *kmsg.DescribeUserSCRAMCredentialsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationDescribe) {
		// The whole request, and each user named, as Kafka's
		// getErrorResponse answers it.
		msg := kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, msg
		for _, u := range req.Users {
			r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			r.User, r.ErrorCode, r.ErrorMessage = u.Name, kerr.ClusterAuthorizationFailed.Code, msg
			resp.Results = append(resp.Results, r)
		}
		return resp, nil
	}
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	if len(req.Users) == 0 {
		for _, cr := range img.ScramCredentials() {
			n := len(resp.Results)
			if n == 0 || resp.Results[n-1].User != cr.User {
				r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
				r.User = cr.User
				resp.Results = append(resp.Results, r)
				n++
			}
			resp.Results[n-1].CredentialInfos = append(resp.Results[n-1].CredentialInfos, scramInfo(cr.Mechanism, cr.Iterations))
		}
		return resp, nil
	}
	count := map[string]int{}
	for _, u := range req.Users {
		count[u.Name]++
	}
	for _, u := range req.Users {
		n, listed := count[u.Name]
		if !listed {
			continue // a repeat, already answered
		}
		delete(count, u.Name)
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = u.Name
		switch {
		case n > 1:
			r.ErrorCode = kerr.DuplicateResource.Code
			r.ErrorMessage = kmsg.StringPtr("Cannot describe SCRAM credentials for the same user twice in a single request: " + u.Name)
		default:
			for _, m := range []int8{metadata.ScramSHA256, metadata.ScramSHA512} {
				if cr, ok := img.ScramCredential(u.Name, m); ok {
					r.CredentialInfos = append(r.CredentialInfos, scramInfo(m, cr.Iterations))
				}
			}
			if len(r.CredentialInfos) == 0 {
				r.ErrorCode = kerr.ResourceNotFound.Code
				r.ErrorMessage = kmsg.StringPtr("Attempt to describe a user credential that does not exist: " + u.Name)
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}

func scramInfo(mechanism int8, iterations int32) kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo {
	info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
	info.Mechanism, info.Iterations = mechanism, iterations
	return info
}
