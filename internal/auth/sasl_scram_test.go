package auth

import (
	"crypto/pbkdf2"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xdg-go/scram"
)

// scramStore is an in-memory ScramCredentials.
type scramStore map[string]ScramCredential

func (s scramStore) ScramCredential(mechanism, user string) (ScramCredential, bool) {
	c, ok := s[mechanism+"/"+user]
	return c, ok
}

func (s scramStore) add(t *testing.T, mechanism, user, password string) {
	t.Helper()
	c, err := NewScramCredential(mechanism, password, []byte("salt-of-"+user), MinScramIterations)
	if err != nil {
		t.Fatal(err)
	}
	s[mechanism+"/"+user] = c
}

// tokenStore is an in-memory DelegationTokens.
type tokenStore map[string]DelegationToken

func (s tokenStore) DelegationToken(mechanism, tokenID string) (DelegationToken, bool) {
	t, ok := s[mechanism+"/"+tokenID]
	return t, ok
}

var scramMechanisms = []string{MechanismScramSHA256, MechanismScramSHA512}

func scramGeneric(mechanism string) string {
	return "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mechanism
}

func newTestScram(t *testing.T, mechanism string, creds ScramCredentials, opts ...ScramOption) Mechanism {
	t.Helper()
	m, err := NewScram(mechanism, creds, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// RFC 7677 section 3: user "user", password "pencil".
func TestScramRFC7677Vector(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	cred, err := NewScramCredential(MechanismScramSHA256, "pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	store := scramStore{MechanismScramSHA256 + "/user": cred}
	m := newTestScram(t, MechanismScramSHA256, store, withScramNonce(func() string { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0" }))
	s := m.NewSession()
	steps := []struct{ client, server string }{
		{"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
			"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"},
		{"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
			"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="},
	}
	for i, st := range steps {
		reply, done, err := s.Step([]byte(st.client))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if string(reply) != st.server {
			t.Fatalf("step %d: server sent %q, want %q", i, reply, st.server)
		}
		if done != (i == 1) {
			t.Fatalf("step %d: done = %v", i, done)
		}
	}
	if s.Principal() != User("user") {
		t.Errorf("Principal() = %v", s.Principal())
	}
}

func xdgHash(mechanism string) scram.HashGeneratorFcn {
	if mechanism == MechanismScramSHA512 {
		return scram.SHA512
	}
	return scram.SHA256
}

// xdgExchange runs xdg-go/scram's client against a session; it returns the
// error of the step that failed and whether the client accepted the
// server's signature.
func xdgExchange(t *testing.T, m Mechanism, user, password, authzid string) (Session, int, error, bool) {
	t.Helper()
	client, err := xdgHash(m.Name()).NewClient(user, password, authzid)
	if err != nil {
		t.Fatal(err)
	}
	conv := client.NewConversation()
	s := m.NewSession()
	msg, err := conv.Step("")
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; ; step++ {
		reply, done, err := s.Step([]byte(msg))
		if err != nil {
			if !done {
				t.Fatalf("step %d failed without ending the exchange", step)
			}
			return s, step, err, false
		}
		if msg, err = conv.Step(string(reply)); err != nil {
			t.Fatalf("client refused step %d reply %q: %v", step, reply, err)
		}
		if done {
			return s, step, nil, conv.Valid()
		}
	}
}

func TestScramExchange(t *testing.T) {
	for _, mech := range scramMechanisms {
		t.Run(mech, func(t *testing.T) {
			store := scramStore{}
			store.add(t, mech, "alice", "alice-secret")
			store.add(t, mech, "a,b=c", "odd-secret")
			m := newTestScram(t, mech, store)
			if m.Name() != mech {
				t.Fatalf("Name() = %q", m.Name())
			}
			for _, tc := range []struct{ user, password, authzid string }{
				{"alice", "alice-secret", ""},
				{"alice", "alice-secret", "alice"},
				{"a,b=c", "odd-secret", ""},
			} {
				s, step, err, valid := xdgExchange(t, m, tc.user, tc.password, tc.authzid)
				if err != nil || step != 1 || !valid {
					t.Fatalf("%+v: step %d, err %v, client accepted server %v", tc, step, err, valid)
				}
				if s.Principal() != User(tc.user) || !s.Expiry().IsZero() || s.(TokenSession).TokenAuthenticated() {
					t.Errorf("%+v: principal %v, expiry %v, token %v", tc, s.Principal(), s.Expiry(), s.(TokenSession).TokenAuthenticated())
				}
			}
		})
	}
}

func TestScramFailures(t *testing.T) {
	for _, mech := range scramMechanisms {
		t.Run(mech, func(t *testing.T) {
			store := scramStore{}
			store.add(t, mech, "alice", "alice-secret")
			store.add(t, mech, "bob", "bob-secret")
			m := newTestScram(t, mech, store)
			for _, tc := range []struct {
				name                    string
				user, password, authzid string
				wantStep                int
				wantErr                 string
			}{
				{"wrong password", "alice", "bob-secret", "", 1, scramGeneric(mech)},
				{"unknown user fails where a wrong password does", "carol", "alice-secret", "", 1, scramGeneric(mech)},
				{"authzid of another user", "alice", "alice-secret", "bob", 0, msgAuthzidDiffers},
				{"authzid of another user, unknown user", "carol", "x-secret", "bob", 0, msgAuthzidDiffers},
			} {
				t.Run(tc.name, func(t *testing.T) {
					s, step, err, _ := xdgExchange(t, m, tc.user, tc.password, tc.authzid)
					if !IsAuthError(err) || err.Error() != tc.wantErr || step != tc.wantStep {
						t.Fatalf("failed at step %d with %v; want step %d, *Error %q", step, err, tc.wantStep, tc.wantErr)
					}
					assertNoSecret(t, err, tc.password, "alice-secret")
					if s.Principal() != (Principal{}) {
						t.Errorf("Principal() after a failure = %v", s.Principal())
					}
				})
			}
		})
	}
}

// testScramClient is a hand-written RFC 5802 client, for what xdg-go's
// client will not send: extensions, tampered messages, other GS2 flags.
type testScramClient struct {
	mechanism, user, password string
	gs2, nonce, ext           string
	bare                      string
}

func (c *testScramClient) first() string {
	if c.gs2 == "" {
		c.gs2 = "n,,"
	}
	if c.nonce == "" {
		c.nonce = "fyko+d2lbbFgONRv9qkxdawL"
	}
	name := strings.NewReplacer("=", "=3D", ",", "=2C").Replace(c.user)
	c.bare = "n=" + name + ",r=" + c.nonce + c.ext
	return c.gs2 + c.bare
}

// final answers serverFirst; it returns the client-final message without
// and with its proof, and the server signature to expect.
func (c *testScramClient) final(t testing.TB, serverFirst string) (withoutProof, proof, serverSig string) {
	t.Helper()
	attrs := map[string]string{}
	for _, f := range strings.Split(serverFirst, ",") {
		k, v, _ := strings.Cut(f, "=")
		attrs[k] = v
	}
	salt, err := base64.StdEncoding.DecodeString(attrs["s"])
	if err != nil {
		t.Fatalf("server-first %q: %v", serverFirst, err)
	}
	iters, _ := strconv.Atoi(attrs["i"])
	h := scramHash(c.mechanism)
	salted, err := pbkdf2.Key(h, c.password, salt, iters, h().Size())
	if err != nil {
		t.Fatal(err)
	}
	withoutProof = "c=" + base64.StdEncoding.EncodeToString([]byte(c.gs2)) + ",r=" + attrs["r"]
	authMsg := c.bare + "," + serverFirst + "," + withoutProof
	clientKey := hmacOf(h, salted, "Client Key")
	stored := h()
	stored.Write(clientKey)
	sig := hmacOf(h, stored.Sum(nil), authMsg)
	for i := range clientKey {
		clientKey[i] ^= sig[i]
	}
	serverSig = base64.StdEncoding.EncodeToString(hmacOf(h, hmacOf(h, salted, "Server Key"), authMsg))
	return withoutProof, base64.StdEncoding.EncodeToString(clientKey), serverSig
}

// run drives the exchange; tamper may rewrite the client-final message.
func (c *testScramClient) run(t *testing.T, m Mechanism, tamper func(string) string) (Session, int, error) {
	t.Helper()
	s := m.NewSession()
	reply, done, err := s.Step([]byte(c.first()))
	if err != nil || done {
		return s, 0, err
	}
	withoutProof, proof, serverSig := c.final(t, string(reply))
	final := withoutProof + ",p=" + proof
	if tamper != nil {
		final = tamper(final)
	}
	reply, done, err = s.Step([]byte(final))
	if err != nil {
		return s, 1, err
	}
	if !done || string(reply) != "v="+serverSig {
		t.Fatalf("server-final %q (done %v), want v=%s", reply, done, serverSig)
	}
	return s, 1, nil
}

func TestScramHandClient(t *testing.T) {
	mech := MechanismScramSHA256
	store := scramStore{}
	store.add(t, mech, "alice", "alice-secret")
	m := newTestScram(t, mech, store)
	flip := func(s string) string { // changes the last base64 character of the proof
		last := s[len(s)-2]
		repl := byte('A')
		if last == 'A' {
			repl = 'B'
		}
		return s[:len(s)-2] + string(repl) + s[len(s)-1:]
	}
	for _, tc := range []struct {
		name    string
		client  testScramClient
		tamper  func(string) string
		wantErr string
	}{
		{name: "hand client works", client: testScramClient{}},
		{name: "gs2 flag y: client could bind, server offers no PLUS", client: testScramClient{gs2: "y,,"}},
		{name: "unknown extension ignored", client: testScramClient{ext: ",foo=bar"}},
		{name: "tokenauth=false is a password login", client: testScramClient{ext: ",tokenauth=false"}},
		{name: "tampered proof", tamper: flip, wantErr: scramGeneric(mech)},
		{name: "tampered nonce", tamper: func(s string) string { return strings.Replace(s, ",r=fyko", ",r=fykO", 1) }, wantErr: scramGeneric(mech)},
		{name: "channel binding differs from gs2 header", tamper: func(s string) string { return strings.Replace(s, "c=biws", "c=eSws", 1) }, wantErr: scramGeneric(mech)},
		{name: "proof of the wrong length", tamper: func(s string) string { return s[:strings.LastIndex(s, "p=")] + "p=AAAA" }, wantErr: scramGeneric(mech)},
		{name: "tokenauth without delegation tokens", client: testScramClient{ext: ",tokenauth=true"}, wantErr: msgTokensDisabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.client
			c.mechanism, c.user, c.password = mech, "alice", "alice-secret"
			s, _, err := c.run(t, m, tc.tamper)
			if tc.wantErr == "" {
				if err != nil || s.Principal() != User("alice") {
					t.Fatalf("err %v, principal %v", err, s.Principal())
				}
				return
			}
			if !IsAuthError(err) || err.Error() != tc.wantErr {
				t.Fatalf("err %v, want *Error %q", err, tc.wantErr)
			}
			assertNoSecret(t, err, "alice-secret")
		})
	}
}

func TestScramDelegationToken(t *testing.T) {
	mech := MechanismScramSHA512
	expiry := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	cred, err := NewScramCredential(mech, "token-hmac", []byte("token-salt"), MinScramIterations)
	if err != nil {
		t.Fatal(err)
	}
	tokens := tokenStore{mech + "/tok1": {Credential: cred, Owner: User("alice"), Expiry: expiry}}
	store := scramStore{}
	store.add(t, mech, "tok1", "user-password") // a user named like the token is not the token
	m := newTestScram(t, mech, store, WithDelegationTokens(tokens))

	c := testScramClient{mechanism: mech, user: "tok1", password: "token-hmac", ext: ",tokenauth=true"}
	s, _, err := c.run(t, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Principal() != User("alice") || !s.Expiry().Equal(expiry) || !s.(TokenSession).TokenAuthenticated() {
		t.Errorf("principal %v, expiry %v, token %v", s.Principal(), s.Expiry(), s.(TokenSession).TokenAuthenticated())
	}

	for _, bad := range []testScramClient{
		{user: "tok1", password: "user-password", ext: ",tokenauth=TRUE"},
		{user: "tok2", password: "token-hmac", ext: ",tokenauth=true"},
	} {
		bad.mechanism = mech
		s, step, err := bad.run(t, m, nil)
		if step != 1 || !IsAuthError(err) || err.Error() != scramGeneric(mech) || s.(TokenSession).TokenAuthenticated() {
			t.Errorf("%s: step %d, err %v", bad.user, step, err)
		}
		assertNoSecret(t, err, bad.password)
	}
}

// An unknown user is answered like a known one: a salt of the same shape,
// the same one each time, and Kafka's default iterations.
func TestScramUnknownUserDecoy(t *testing.T) {
	mech := MechanismScramSHA256
	m := newTestScram(t, mech, scramStore{})
	serverFirst := func(user string) map[string]string {
		c := testScramClient{mechanism: mech, user: user}
		reply, done, err := m.NewSession().Step([]byte(c.first()))
		if err != nil || done {
			t.Fatalf("client-first of unknown %q: done %v, err %v", user, done, err)
		}
		attrs := map[string]string{}
		for _, f := range strings.Split(string(reply), ",") {
			k, v, _ := strings.Cut(f, "=")
			attrs[k] = v
		}
		return attrs
	}
	a1, a2, b := serverFirst("carol"), serverFirst("carol"), serverFirst("dave")
	if a1["s"] != a2["s"] || a1["s"] == b["s"] {
		t.Errorf("decoy salts: carol %q then %q, dave %q; want stable per user, distinct across users", a1["s"], a2["s"], b["s"])
	}
	if a1["i"] != "4096" {
		t.Errorf("decoy iterations %q, want 4096", a1["i"])
	}
	salt, _ := base64.StdEncoding.DecodeString(a1["s"])
	if len(salt) < 20 || strings.Trim(string(salt), "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
		t.Errorf("decoy salt %q does not look like Kafka's base-36 salts", salt)
	}
	other := newTestScram(t, mech, scramStore{})
	c := testScramClient{mechanism: mech, user: "carol"}
	if reply, _, _ := other.NewSession().Step([]byte(c.first())); strings.Contains(string(reply), a1["s"]) {
		t.Errorf("two mechanisms gave carol the same decoy salt: the decoy key is not random")
	}
}

func TestScramLowIterations(t *testing.T) {
	mech := MechanismScramSHA256
	c, err := NewScramCredential(mech, "pw", []byte("salt"), MinScramIterations)
	if err != nil {
		t.Fatal(err)
	}
	c.Iterations = MinScramIterations - 1
	m := newTestScram(t, mech, scramStore{mech + "/alice": c})
	client := testScramClient{mechanism: mech, user: "alice", password: "pw"}
	_, step, err := client.run(t, m, nil)
	if step != 0 || !IsAuthError(err) || err.Error() != scramGeneric(mech) {
		t.Fatalf("step %d, err %v", step, err)
	}
}

func TestScramMalformedClientFirst(t *testing.T) {
	mech := MechanismScramSHA256
	store := scramStore{}
	store.add(t, mech, "user", "pw")
	m := newTestScram(t, mech, store)
	for _, msg := range []string{
		"",
		"n,,n=user",
		"n,,n=user,r=",
		"n,n=user,r=abc",
		"x,,n=user,r=abc",
		"p=tls-unique,,n=user,r=abc",
		"n,b=x,n=user,r=abc",
		"n,a=,n=user,r=abc",
		"n,,m=ext,n=user,r=abc",
		"n,,n=,r=abc",
		"n,,n=us=er,r=abc",
		"n,,n=us=2,r=abc",
		"n,,n=user\x00,r=abc",
		"n,,n=user,r=a b",
		"n,,n=user,r=abc,1x=y",
		"n,,n=user,r=abc,ext=",
		"n,,n=user,r=abc,",
		"n,,r=abc,n=user",
		"n,,n=us\xffer,r=abc",
	} {
		reply, done, err := m.NewSession().Step([]byte(msg))
		if !done || reply != nil || !IsAuthError(err) || err.Error() != scramGeneric(mech) {
			t.Errorf("client-first %q: reply %q, done %v, err %v", msg, reply, done, err)
		}
	}
}

func TestScramMalformedClientFinal(t *testing.T) {
	mech := MechanismScramSHA256
	store := scramStore{}
	store.add(t, mech, "alice", "pw")
	m := newTestScram(t, mech, store)
	for _, final := range []func(withoutProof, proof string) string{
		func(w, p string) string { return "" },
		func(w, p string) string { return w },
		func(w, p string) string { return w + ",p=" },
		func(w, p string) string { return w + ",p=" + p + "!" },
		func(w, p string) string { return "c=***," + w[len("c=biws,"):] + ",p=" + p },
		func(w, p string) string { return "p=" + p + "," + w },
		func(w, p string) string { return w + ",1=2,p=" + p },
		func(w, p string) string { return w + ",p=" + p + "," },
		func(w, p string) string { return w[:len(w)-1] + "\xff,p=" + p },
	} {
		c := testScramClient{mechanism: mech, user: "alice", password: "pw"}
		s := m.NewSession()
		reply, _, err := s.Step([]byte(c.first()))
		if err != nil {
			t.Fatal(err)
		}
		w, p, _ := c.final(t, string(reply))
		msg := final(w, p)
		reply, done, err := s.Step([]byte(msg))
		if !done || reply != nil || !IsAuthError(err) || err.Error() != scramGeneric(mech) {
			t.Errorf("client-final %q: reply %q, done %v, err %v", msg, reply, done, err)
		}
	}
}

func TestScramStepAfterEnd(t *testing.T) {
	store := scramStore{}
	store.add(t, MechanismScramSHA256, "alice", "pw")
	m := newTestScram(t, MechanismScramSHA256, store)
	c := testScramClient{mechanism: MechanismScramSHA256, user: "alice", password: "pw"}
	s, _, err := c.run(t, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, done, err := s.Step([]byte("c=biws")); !done || !IsAuthError(err) {
		t.Fatalf("Step after the end: done %v, err %v", done, err)
	}
}

func TestNewScramErrors(t *testing.T) {
	if _, err := NewScram("SCRAM-SHA-1", scramStore{}); err == nil {
		t.Error("NewScram accepted SCRAM-SHA-1")
	}
	if _, err := NewScram(MechanismScramSHA256, nil); err == nil {
		t.Error("NewScram accepted no credential store")
	}
}
