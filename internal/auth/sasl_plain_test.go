package auth

import (
	"errors"
	"testing"
)

func TestPlain(t *testing.T) {
	mech := NewPlain(PlainUsers{"admin": "admin-secret", "alice": "alice-secret"})
	if mech.Name() != MechanismPlain {
		t.Fatalf("Name() = %q", mech.Name())
	}
	generic := "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN"
	for _, tc := range []struct {
		name    string
		msg     string
		wantErr string // empty for success
		want    Principal
	}{
		{name: "no authzid", msg: "\x00admin\x00admin-secret", want: User("admin")},
		{name: "authzid is the user", msg: "alice\x00alice\x00alice-secret", want: User("alice")},
		{name: "authzid of another user", msg: "admin\x00alice\x00alice-secret", wantErr: msgAuthzidDiffers},
		{name: "wrong password", msg: "\x00alice\x00admin-secret", wantErr: msgInvalidUserPassword},
		{name: "unknown user", msg: "\x00carol\x00alice-secret", wantErr: msgInvalidUserPassword},
		{name: "password checked before authzid", msg: "admin\x00alice\x00wrong", wantErr: msgInvalidUserPassword},
		{name: "one NUL", msg: "alice\x00alice-secret", wantErr: generic},
		{name: "three NULs", msg: "\x00alice\x00alice-secret\x00x", wantErr: generic},
		{name: "no NUL", msg: "alice-secret", wantErr: generic},
		{name: "empty message", msg: "", wantErr: generic},
		{name: "empty user", msg: "\x00\x00alice-secret", wantErr: generic},
		{name: "empty password", msg: "\x00alice\x00", wantErr: generic},
		{name: "not UTF-8", msg: "\x00alice\x00alice-secret\xff", wantErr: generic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mech.NewSession()
			reply, done, err := s.Step([]byte(tc.msg))
			if !done || len(reply) != 0 {
				t.Fatalf("Step: reply %q, done %v; want an empty reply and done", reply, done)
			}
			if !s.Expiry().IsZero() {
				t.Errorf("Expiry() = %v, want zero", s.Expiry())
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Step: %v", err)
				}
				if s.Principal() != tc.want {
					t.Errorf("Principal() = %v, want %v", s.Principal(), tc.want)
				}
				return
			}
			if !IsAuthError(err) || err.Error() != tc.wantErr {
				t.Fatalf("Step: %v, want *Error %q", err, tc.wantErr)
			}
			if s.Principal() != (Principal{}) {
				t.Errorf("Principal() after a failure = %v", s.Principal())
			}
			assertNoSecret(t, err, "alice-secret", "admin-secret", "wrong")
		})
	}
}

func TestPlainStepAfterEnd(t *testing.T) {
	s := NewPlain(PlainUsers{"a": "b"}).NewSession()
	if _, _, err := s.Step([]byte("\x00a\x00b")); err != nil {
		t.Fatal(err)
	}
	_, done, err := s.Step([]byte("\x00a\x00b"))
	if !done || !IsAuthError(err) {
		t.Fatalf("second Step: done %v, err %v; want an *Error", done, err)
	}
}

type faultyChecker struct{ err error }

func (f faultyChecker) CheckPlain(string, string) error { return f.err }

func TestPlainCheckerFault(t *testing.T) {
	fault := errors.New("ldap: connection refused")
	s := NewPlain(faultyChecker{fault}).NewSession()
	_, done, err := s.Step([]byte("\x00a\x00b"))
	if !done || !errors.Is(err, fault) || IsAuthError(err) {
		t.Fatalf("Step: done %v, err %v; want the fault wrapped, not an *Error", done, err)
	}
}

// A checker's own *Error reaches the client as it is.
func TestPlainCheckerAuthError(t *testing.T) {
	s := NewPlain(faultyChecker{Failed("Authentication failed: account locked")}).NewSession()
	_, _, err := s.Step([]byte("\x00a\x00b"))
	if !IsAuthError(err) || err.Error() != "Authentication failed: account locked" {
		t.Fatalf("Step: %v", err)
	}
}
