package broker

// AlterUserScramCredentials (key 51), version 0 (KIP-554).
//
// Deletes and sets users' SCRAM credentials through the active controller
// (internal/controller's AlterUserScramCredentials, Kafka's
// ScramControlManager rules): an upsertion carries the salt, the iteration
// count and the password the client salted; the controller keeps the salt
// and the StoredKey and ServerKey it derives, never the salted password,
// and commits every valid change of the request in one metadata batch. The
// broker applies the image before it answers. In a quorum a broker that
// is not the active controller forwards the request. One result per user:
// DUPLICATE_RESOURCE for a user named twice, UNACCEPTABLE_CREDENTIAL for
// an empty name, salt or salted password or iterations outside
// [4096, 16384], UNSUPPORTED_SASL_MECHANISM for a mechanism other than 1
// (SCRAM-SHA-256) and 2 (SCRAM-SHA-512), RESOURCE_NOT_FOUND for deleting a
// credential that does not exist. No authorizer is needed: Kafka answers
// this API without one. With one, ALTER on the cluster is, else every user
// gets CLUSTER_AUTHORIZATION_FAILED (Kafka's
// ControllerApis.handleAlterUserScramCredentials).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AlterUserSCRAMCredentials, min: 0, max: 0, handle: typed(handleAlterUserScramCredentials)})
}

func handleAlterUserScramCredentials(b *Broker, c *conn, req *kmsg.AlterUserSCRAMCredentialsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationAlter) {
		// Every user, as Kafka's ControllerApis answers it.
		seen := map[string]bool{}
		users := func(name string) {
			if !seen[name] {
				seen[name] = true
				r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
				r.User, r.ErrorCode = name, kerr.ClusterAuthorizationFailed.Code
				r.ErrorMessage = kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
				resp.Results = append(resp.Results, r)
			}
		}
		for _, d := range req.Deletions {
			users(d.Name)
		}
		for _, u := range req.Upsertions {
			users(u.Name)
		}
		return resp, nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.alterUserScramCredentials(req) })
}

func (b *Broker) alterUserScramCredentials(req *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	dels := make([]controller.ScramDeletion, len(req.Deletions))
	for i, d := range req.Deletions {
		dels[i] = controller.ScramDeletion{User: d.Name, Mechanism: d.Mechanism}
	}
	ups := make([]controller.ScramUpsertion, len(req.Upsertions))
	for i, u := range req.Upsertions {
		ups[i] = controller.ScramUpsertion{User: u.Name, Mechanism: u.Mechanism, Iterations: u.Iterations, Salt: u.Salt, SaltedPassword: u.SaltedPassword}
	}
	ctx, cancel := b.adminContext(0)
	defer cancel()
	results := b.ctrl.AlterUserScramCredentials(ctx, dels, ups)
	b.catchUpMetadata()
	for _, res := range results {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorCode, r.ErrorMessage = res.User, res.ErrorCode, optionalMessage(res.ErrorMessage)
		resp.Results = append(resp.Results, r)
	}
	return resp
}
