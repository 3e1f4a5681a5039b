package auth

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// The HMAC is HmacSHA512 of the UTF-8 token ID under the UTF-8 secret key,
// as Kafka's DelegationTokenManager.createHmac: RFC 4231's test case 2 is
// exactly such a key and message.
func TestDelegationTokenHMACRFC4231(t *testing.T) {
	want, _ := hex.DecodeString("164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd6" +
		"10270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737")
	if got := DelegationTokenHMAC("Jefe", "what do ya want for nothing?"); !bytes.Equal(got, want) {
		t.Fatalf("HMAC %x, want %x", got, want)
	}
}

// A token's credential takes the base64 HMAC as its password, for both
// SCRAM mechanisms, with Kafka's minimum iterations and a salt of its own
// each time it is derived.
func TestDelegationTokenCredentialLogsIn(t *testing.T) {
	hmac := DelegationTokenHMAC("the-secret", "token-1")
	for _, mech := range scramMechanisms {
		cred, err := NewDelegationTokenCredential(mech, hmac)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := NewDelegationTokenCredential(mech, hmac)
		if cred.Iterations != MinScramIterations || bytes.Equal(cred.Salt, again.Salt) || len(cred.Salt) < 20 {
			t.Errorf("%s: iterations %d, salts %q and %q", mech, cred.Iterations, cred.Salt, again.Salt)
		}
		m := newTestScram(t, mech, scramStore{}, WithDelegationTokens(tokenStore{mech + "/token-1": {Credential: cred, Owner: User("alice")}}))
		c := testScramClient{mechanism: mech, user: "token-1", password: DelegationTokenPassword(hmac), ext: ",tokenauth=true"}
		if s, _, err := c.run(t, m, nil); err != nil || s.Principal() != User("alice") {
			t.Errorf("%s: login with the token: principal %v, %v", mech, s.Principal(), err)
		}
		wrong := testScramClient{mechanism: mech, user: "token-1", password: DelegationTokenPassword(DelegationTokenHMAC("other", "token-1")), ext: ",tokenauth=true"}
		if _, _, err := wrong.run(t, m, nil); !IsAuthError(err) {
			t.Errorf("%s: an HMAC under another key logged in: %v", mech, err)
		}
	}
}
