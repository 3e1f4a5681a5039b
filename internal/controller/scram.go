package controller

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
)

// ScramDeletion removes a user's credential for one mechanism
// (metadata.ScramSHA256 or ScramSHA512).
type ScramDeletion struct {
	User      string
	Mechanism int8
}

// ScramUpsertion sets a user's credential for one mechanism from what
// AlterUserScramCredentials carries: the client drew the salt and salted
// the password (RFC 5802's Hi), so the password never reaches the broker.
// The salted password does; it goes no further than this call, which
// keeps only the StoredKey and ServerKey derived from it.
type ScramUpsertion struct {
	User           string
	Mechanism      int8
	Iterations     int32
	Salt           []byte
	SaltedPassword []byte
}

// ScramResult is one user's outcome.
type ScramResult struct {
	User         string
	ErrorCode    int16
	ErrorMessage string
}

// scramMechanisms are the mechanism names of Kafka's ScramMechanism
// numbers.
var scramMechanisms = map[int8]string{
	metadata.ScramSHA256: auth.MechanismScramSHA256,
	metadata.ScramSHA512: auth.MechanismScramSHA512,
}

// AlterUserScramCredentials deletes and sets SCRAM credentials, as Kafka's
// ScramControlManager.alterCredentials: one result per user named, in the
// order users first appear (deletions, then upsertions), and every valid
// change in one committed batch. Per user: DUPLICATE_RESOURCE when named
// twice in the request, whatever the mechanisms; UNACCEPTABLE_CREDENTIAL
// for an empty name, salt or salted password or iterations outside
// [4096, 16384]; UNSUPPORTED_SASL_MECHANISM for a mechanism other than
// SCRAM-SHA-256 (1) and SCRAM-SHA-512 (2); RESOURCE_NOT_FOUND for deleting
// a credential that does not exist. A user whose first mention is refused
// keeps that error, and later mentions are not looked at, as in Kafka.
func (c *Controller) AlterUserScramCredentials(ctx context.Context, deletions []ScramDeletion, upsertions []ScramUpsertion) []ScramResult {
	var order []string
	seen := map[string]bool{}
	note := func(user string) {
		if !seen[user] {
			seen[user] = true
			order = append(order, user)
		}
	}
	for _, d := range deletions {
		note(d.User)
	}
	for _, u := range upsertions {
		note(u.User)
	}
	errs := map[string]*failure{}
	results := func() []ScramResult {
		out := make([]ScramResult, len(order))
		for i, user := range order {
			out[i] = ScramResult{User: user, ErrorCode: errs[user].code(), ErrorMessage: errs[user].message()}
		}
		return out
	}

	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		for _, user := range order {
			errs[user] = proposeFailure(err)
		}
		return results()
	}
	img := c.Image()
	dels := map[string]ScramDeletion{}
	ups := map[string]ScramUpsertion{}
	duplicate := fail(kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
	for _, d := range deletions {
		switch _, twice := dels[d.User]; {
		case errs[d.User] != nil:
		case twice:
			delete(dels, d.User)
			errs[d.User] = duplicate
		default:
			if f := checkScramDeletion(img, d); f != nil {
				errs[d.User] = f
			} else {
				dels[d.User] = d
			}
		}
	}
	for _, u := range upsertions {
		_, deleting := dels[u.User]
		_, upserting := ups[u.User]
		switch {
		case errs[u.User] != nil:
		case deleting || upserting:
			delete(dels, u.User)
			delete(ups, u.User)
			errs[u.User] = duplicate
		default:
			if f := checkScramUpsertion(u); f != nil {
				errs[u.User] = f
			} else {
				ups[u.User] = u
			}
		}
	}

	var recs []metadata.Record
	var planned []string
	for _, user := range order {
		if d, ok := dels[user]; ok {
			recs = append(recs, metadata.RemoveUserScramCredentialRecord{Name: d.User, Mechanism: d.Mechanism})
			planned = append(planned, user)
		}
		if u, ok := ups[user]; ok {
			cred, err := auth.ScramCredentialFromSalted(scramMechanisms[u.Mechanism], u.Salt, u.SaltedPassword, u.Iterations)
			if err != nil {
				errs[user] = fail(kerr.UnacceptableCredential, "%v", err)
				continue
			}
			recs = append(recs, metadata.UserScramCredentialRecord{Name: u.User, Mechanism: u.Mechanism,
				Salt: cred.Salt, StoredKey: cred.StoredKey, ServerKey: cred.ServerKey, Iterations: cred.Iterations})
			planned = append(planned, user)
		}
	}
	if len(recs) == 0 {
		return results()
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		for _, user := range planned {
			errs[user] = proposeFailure(err)
		}
		return results()
	}
	c.log.Info("scram credentials altered", "users", planned)
	return results()
}

// checkUserAndMechanism is Kafka's validateScramUsernameAndMechanism.
func checkUserAndMechanism(user string, mechanism int8) *failure {
	if user == "" {
		return fail(kerr.UnacceptableCredential, "Username must not be empty")
	}
	if _, ok := scramMechanisms[mechanism]; !ok {
		return fail(kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
	}
	return nil
}

func checkScramDeletion(img *metadata.Image, d ScramDeletion) *failure {
	if f := checkUserAndMechanism(d.User, d.Mechanism); f != nil {
		return f
	}
	if _, ok := img.ScramCredential(d.User, d.Mechanism); !ok {
		return fail(kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist")
	}
	return nil
}

func checkScramUpsertion(u ScramUpsertion) *failure {
	if f := checkUserAndMechanism(u.User, u.Mechanism); f != nil {
		return f
	}
	switch {
	case u.Iterations < auth.MinScramIterations:
		return fail(kerr.UnacceptableCredential, "Too few iterations")
	case u.Iterations > auth.MaxScramIterations:
		return fail(kerr.UnacceptableCredential, "Too many iterations")
	case len(u.Salt) == 0:
		return fail(kerr.UnacceptableCredential, "Salt must not be empty")
	case len(u.SaltedPassword) == 0:
		return fail(kerr.UnacceptableCredential, "Salted password must not be empty")
	}
	return nil
}
