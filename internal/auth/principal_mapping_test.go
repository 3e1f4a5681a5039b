package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestPrincipalMappingRules(t *testing.T) {
	const serviceDN = "CN=kafka1,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown"
	const fullDN = "CN=Duke,OU=JavaSoft,O=Sun Microsystems,L=Santa Clara,ST=CA,C=US"
	tests := []struct {
		name, rules, dn, want string
		noMatch               bool
	}{
		{"default keeps the name", "DEFAULT", fullDN, fullDN, false},
		{"first matching rule", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", serviceDN, "kafka1", false},
		{"falls through to default", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", fullDN, fullDN, false},
		{"lower case", "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L", fullDN, "duke@javasoft", false},
		{"upper case", "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U", "OU=x,cn=duke,O=y", "DUKE", false},
		{"no rule matches", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", fullDN, "", true},
		{"the pattern must match the whole name", "RULE:CN=Duke/x/", fullDN, "", true},
		{"an unanchored pattern covering the name", "RULE:CN=([^,]*),.*/$1/", fullDN, "Duke", false},
		{"a group past the last is literal", "RULE:^CN=(.*?),OU=(.*?),.*$/$1@$4/", fullDN, "Duke@$4", false},
		{"longest existing group number", "RULE:^CN=(.*?),OU=(.*?),.*$/$12/", fullDN, "Duke2", false},
		{"whole match", "RULE:^CN=[^,]*,.*$/[$0]/", "CN=a,O=b", "[CN=a,O=b]", false},
		{"named group", "RULE:^CN=(?<user>[^,]*),.*$/${user}/", fullDN, "Duke", false},
		{"escaped dollar", `RULE:^CN=([^,]*),.*$/\$$1/`, fullDN, "$Duke", false},
		{"escaped slash", `RULE:^CN=([^,]*)\/x,O=(.*)$/$2\/$1/`, "CN=a/x,O=b", "b/a", false},
		{"commas and spaces between rules", " RULE:^CN=([^,]*),O=a$/$1/L , RULE:^CN=([^,]*),O=b$/$1/U,DEFAULT ", "CN=Duke,O=b", "DUKE", false},
		{"empty entries are ignored", ",DEFAULT,,", fullDN, fullDN, false},
		{"comma in the replacement", "RULE:^CN=([^,]*),O=(.*)$/$2,$1/", "CN=a,O=b", "b,a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParsePrincipalMappingRules(tt.rules)
			if err != nil {
				t.Fatalf("ParsePrincipalMappingRules(%q): %v", tt.rules, err)
			}
			got, err := m.Map(tt.dn)
			if tt.noMatch {
				if err == nil || !IsAuthError(err) {
					t.Fatalf("Map(%q) = %q, %v; want an authentication error", tt.dn, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Map(%q) = %q, %v; want %q", tt.dn, got, err, tt.want)
			}
		})
	}
}

func TestZeroPrincipalMapperIsDefault(t *testing.T) {
	var m PrincipalMapper
	if got, err := m.Map("CN=a"); got != "CN=a" || err != nil {
		t.Fatalf("zero mapper: Map = %q, %v", got, err)
	}
	if m.String() != "DEFAULT" {
		t.Fatalf("zero mapper: String = %q", m.String())
	}
}

func TestPrincipalMappingRulesString(t *testing.T) {
	m, err := ParsePrincipalMappingRules(" RULE:^CN=(.*)$/$1/L , DEFAULT ")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.String(), "RULE:^CN=(.*)$/$1/L,DEFAULT"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
}

func TestParsePrincipalMappingRulesErrors(t *testing.T) {
	tests := []struct{ rules, want string }{
		{"", "has no rule"},
		{" , ", "has no rule"},
		{"FOO", "invalid rule `FOO`: want DEFAULT or RULE:pattern/replacement/"},
		{"DEFAULTX", "unexpected `X`"},
		{"RULE:abc", "no / after the pattern"},
		{"RULE:a/b", "no / after the replacement"},
		{"RULE:a/b/X,DEFAULT", "invalid rule `RULE:a/b/X`: unexpected `X`"},
		{"RULE:a/b/LU", "unexpected `U`"},
		{`RULE:(a)\1/x/`, `a backreference (\1)`},
		{`RULE:(?<u>a)\k<u>/x/`, "a named backreference"},
		{"RULE:(?=a)a/x/", "a lookahead"},
		{"RULE:(?!a)b/x/", "a negative lookahead"},
		{"RULE:(?<=a)b/x/", "a lookbehind"},
		{"RULE:(?<!a)b/x/", "a negative lookbehind"},
		{"RULE:(?>a)/x/", "an atomic group"},
		{"RULE:a*+/x/", "a possessive quantifier (*+)"},
		{"RULE:a{2}+/x/", "a possessive quantifier (}+)"},
		{"RULE:[a-z&&[^e]]/x/", "a character class intersection"},
		{"RULE:[a[b]]/x/", "a [ inside a character class"},
		{"RULE:[[:alpha:]]/x/", "a [ inside a character class"},
		{"RULE:a(/x/", "not a regular expression Go's RE2 accepts"},
		{`RULE:\p{Lower}/x/`, "not a regular expression Go's RE2 accepts"},
		{"RULE:^CN=(.*)$/$x/", "$ must be followed by a group number"},
		{"RULE:^CN=(.*)$/${u}/", `no group named "u"`},
		{"RULE:^CN=(.*)$/${u/", "${ without a closing }"},
		{"RULE:^CN=.*$/$1/", "$1 refers to a group and the pattern has none"},
	}
	for _, tt := range tests {
		t.Run(tt.rules, func(t *testing.T) {
			_, err := ParsePrincipalMappingRules(tt.rules)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParsePrincipalMappingRules(%q) = %v, want an error containing %q", tt.rules, err, tt.want)
			}
		})
	}
}

func TestJavaOnlyConstructAllowsRE2Syntax(t *testing.T) {
	for _, p := range []string{
		`^CN=(.*?),OU=ServiceUsers.*$`, `[]a]`, `[^]a]`, `[](?=]`, `[^](?=]`, `\[x\]`, `[\[]`, `a+?`, `(?:a)+`, `(?i)cn=x`,
		`\Qa[b(?=\E`, `(?P<u>a)`, `a{2,3}`, `\d+`, `(?<u>a)`,
	} {
		if what := javaOnlyConstruct(p); what != "" {
			t.Errorf("javaOnlyConstruct(%q) = %q, want none", p, what)
		}
	}
}

// rdn builds one relative distinguished name of a subject with values of
// exact ASN.1 types.
func rdn(avas ...nameAttribute) nameRDNSET { return nameRDNSET(avas) }

func ava(oid asn1.ObjectIdentifier, tag int, value []byte) nameAttribute {
	return nameAttribute{Type: oid, Value: asn1.RawValue{Class: asn1.ClassUniversal, Tag: tag, Bytes: value}}
}

func utf8Value(oid asn1.ObjectIdentifier, s string) nameAttribute {
	return ava(oid, asn1.TagUTF8String, []byte(s))
}

var (
	oidCN     = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidSerial = asn1.ObjectIdentifier{2, 5, 4, 5}
	oidC      = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidO      = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU     = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidDC     = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidUID    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidEmail  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

func bmp(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return b
}

func TestSubjectDN(t *testing.T) {
	tests := []struct {
		name string
		rdns []nameRDNSET
		want string
	}{
		{"last RDN first", []nameRDNSET{
			rdn(ava(oidC, asn1.TagPrintableString, []byte("US"))), rdn(utf8Value(oidO, "Acme")),
			rdn(utf8Value(oidOU, "eng")), rdn(utf8Value(oidCN, "alice")),
		}, "CN=alice,OU=eng,O=Acme,C=US"},
		{"escapes", []nameRDNSET{rdn(utf8Value(oidCN, `a,b+c=d<e>f;g"h\i#j`))}, `CN=a\,b\+c\=d\<e\>f\;g\"h\\i\#j`},
		{"leading and trailing spaces", []nameRDNSET{rdn(utf8Value(oidCN, "  a b "))}, `CN=\ \ a b\ `},
		{"leading hash", []nameRDNSET{rdn(utf8Value(oidCN, "#1"))}, `CN=\#1`},
		{"NUL", []nameRDNSET{rdn(utf8Value(oidCN, "a\x00b"))}, `CN=a\00b`},
		{"multi-valued RDN", []nameRDNSET{rdn(utf8Value(oidCN, "a"), utf8Value(oidOU, "b"))}, "CN=a+OU=b"},
		{"DC and UID keywords", []nameRDNSET{
			rdn(ava(oidDC, asn1.TagIA5String, []byte("com"))), rdn(ava(oidDC, asn1.TagIA5String, []byte("example"))),
			rdn(utf8Value(oidUID, "u1")),
		}, "UID=u1,DC=example,DC=com"},
		{"email is an OID with a hex value", []nameRDNSET{
			rdn(utf8Value(oidCN, "a")), rdn(ava(oidEmail, asn1.TagIA5String, []byte("a@b.c"))),
		}, "1.2.840.113549.1.9.1=#16056140622e63,CN=a"},
		{"serial number is an OID", []nameRDNSET{rdn(ava(oidSerial, asn1.TagPrintableString, []byte("123")))}, "2.5.4.5=#1303313233"},
		{"a keyword with a value that is no string", []nameRDNSET{rdn(ava(oidCN, asn1.TagInteger, []byte{5}))}, "CN=#020105"},
		{"BMPString", []nameRDNSET{rdn(ava(oidCN, asn1.TagBMPString, bmp("été")))}, "CN=été"},
		{"empty subject", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := asn1.Marshal(tt.rdns)
			if err != nil {
				t.Fatal(err)
			}
			got, err := subjectDN(&x509.Certificate{RawSubject: raw})
			if err != nil || got != tt.want {
				t.Fatalf("subjectDN = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestSubjectDNOfAGoSubject(t *testing.T) {
	name := pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Acme"}, Country: []string{"US"}}
	raw, err := asn1.Marshal(name.ToRDNSequence())
	if err != nil {
		t.Fatal(err)
	}
	got, err := subjectDN(&x509.Certificate{RawSubject: raw})
	if want := "CN=alice,OU=eng,O=Acme,C=US"; got != want || err != nil {
		t.Fatalf("subjectDN = %q, %v; want %q", got, err, want)
	}
	if _, err := subjectDN(&x509.Certificate{RawSubject: []byte{0x30, 0x05}}); err == nil {
		t.Fatal("subjectDN of a truncated subject: no error")
	}
}
