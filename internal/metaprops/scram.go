package metaprops

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
)

// defaultScramIterations is kafka-storage.sh format's iteration count
// when --add-scram names none.
const defaultScramIterations = 4096

// ParseAddScram reads one --add-scram argument of `samsa storage format`,
// in kafka-storage.sh format's syntax (its ScramParser):
//
//	SCRAM-SHA-256=[name=alice,password=alice-secret]
//	SCRAM-SHA-512=[name=bob,iterations=8192,salt="c2FsdA==",saltedpassword="..."]
//
// name is required; so is password, or saltedpassword with salt (both in
// standard base64); salt is drawn at random when not given, iterations is
// 4096 when not given. A value may be enclosed in double quotes, which are
// dropped. Components are split at every comma, as in Kafka, so a password
// cannot hold one. It returns the credential as the metadata keeps it: the
// salt and the keys, never the password. Errors never repeat a password.
func ParseAddScram(arg string) (metadata.UserScramCredentialRecord, error) {
	mechanism, body, err := splitAddScram(strings.TrimSpace(arg))
	if err != nil {
		return metadata.UserScramCredentialRecord{}, err
	}
	comps := map[string]string{}
	for _, c := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(c, "=")
		if !ok {
			return metadata.UserScramCredentialRecord{}, errors.New("--add-scram: a component has no equals sign: want key=value, separated by commas (a password cannot hold a comma)")
		}
		if len(v) >= 2 && strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`) {
			v = v[1 : len(v)-1]
		}
		comps[k] = v
	}
	take := func(k string) (string, bool) {
		v, ok := comps[k]
		delete(comps, k)
		return v, ok
	}
	name, ok := take("name")
	if !ok || name == "" {
		return metadata.UserScramCredentialRecord{}, errors.New("--add-scram: you must supply 'name'")
	}
	cred := metadata.UserScramCredentialRecord{Name: name, Mechanism: mechanism, Iterations: defaultScramIterations}
	var salt, salted []byte
	if s, ok := take("salt"); ok {
		if salt, err = base64.StdEncoding.DecodeString(s); err != nil || len(salt) == 0 {
			return metadata.UserScramCredentialRecord{}, fmt.Errorf("--add-scram: failed to decode the salt of %q: want standard base64", name)
		}
	}
	if s, ok := take("iterations"); ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return metadata.UserScramCredentialRecord{}, fmt.Errorf("--add-scram: failed to parse the iteration count %q of %q", s, name)
		}
		cred.Iterations = int32(n)
	}
	password, hasPassword := take("password")
	saltedText, hasSalted := take("saltedpassword")
	switch {
	case hasPassword && hasSalted:
		return metadata.UserScramCredentialRecord{}, fmt.Errorf("--add-scram: you cannot supply both 'password' and 'saltedpassword' for %q", name)
	case !hasPassword && !hasSalted:
		return metadata.UserScramCredentialRecord{}, fmt.Errorf("--add-scram: you must supply one of 'password' or 'saltedpassword' for %q", name)
	case hasSalted && salt == nil:
		return metadata.UserScramCredentialRecord{}, fmt.Errorf("--add-scram: you must supply 'salt' with 'saltedpassword' for %q", name)
	case hasSalted:
		if salted, err = base64.StdEncoding.DecodeString(saltedText); err != nil || len(salted) == 0 {
			return metadata.UserScramCredentialRecord{}, fmt.Errorf("--add-scram: failed to decode the salted password of %q: want standard base64", name)
		}
	}
	if len(comps) > 0 {
		return metadata.UserScramCredentialRecord{}, fmt.Errorf("--add-scram: unknown SCRAM configurations for %q: %s (want name, password, saltedpassword, salt, iterations)",
			name, strings.Join(slices.Sorted(maps.Keys(comps)), ", "))
	}
	if salt == nil {
		salt = make([]byte, 32)
		if _, err := rand.Read(salt); err != nil {
			return metadata.UserScramCredentialRecord{}, fmt.Errorf("--add-scram: draw a salt: %w", err)
		}
	}
	mechName := scramMechanismName(mechanism)
	var c auth.ScramCredential
	if hasSalted {
		c, err = auth.ScramCredentialFromSalted(mechName, salt, salted, cred.Iterations)
	} else {
		c, err = auth.NewScramCredential(mechName, password, salt, cred.Iterations)
	}
	if err != nil {
		return metadata.UserScramCredentialRecord{}, fmt.Errorf("--add-scram: user %q: %w", name, err)
	}
	cred.Salt, cred.StoredKey, cred.ServerKey = c.Salt, c.StoredKey, c.ServerKey
	return cred, nil
}

// splitAddScram splits MECHANISM=[...] into the mechanism and what the
// brackets hold.
func splitAddScram(arg string) (int8, string, error) {
	mech, body, ok := strings.Cut(arg, "=")
	if !ok {
		return 0, "", errors.New("--add-scram: want MECHANISM=[name=NAME,password=PASSWORD], e.g. SCRAM-SHA-256=[name=alice,password=alice-secret]")
	}
	var mechanism int8
	switch mech {
	case auth.MechanismScramSHA256:
		mechanism = metadata.ScramSHA256
	case auth.MechanismScramSHA512:
		mechanism = metadata.ScramSHA512
	default:
		return 0, "", fmt.Errorf("--add-scram: the mechanism %q is not supported: want %s or %s", mech, auth.MechanismScramSHA256, auth.MechanismScramSHA512)
	}
	if !strings.HasPrefix(body, "[") || !strings.HasSuffix(body, "]") {
		return 0, "", errors.New("--add-scram: expected the configuration in brackets: MECHANISM=[name=NAME,password=PASSWORD]")
	}
	return mechanism, body[1 : len(body)-1], nil
}

func scramMechanismName(m int8) string {
	if m == metadata.ScramSHA512 {
		return auth.MechanismScramSHA512
	}
	return auth.MechanismScramSHA256
}
