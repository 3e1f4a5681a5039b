package auth

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
)

// DefaultPrincipalMappingRules is Kafka's default ssl.principal.mapping.rules:
// the principal name is the certificate's whole distinguished name.
const DefaultPrincipalMappingRules = "DEFAULT"

// PrincipalMapper turns a client certificate's distinguished name into a
// principal name, as Kafka's ssl.principal.mapping.rules (KIP-371) does. The
// zero PrincipalMapper keeps the whole name, as DEFAULT does.
//
// The rules are Java regular expressions and Samsa runs them on Go's RE2, so
// ParsePrincipalMappingRules refuses what RE2 lacks (backreferences,
// lookaround, atomic groups, possessive quantifiers, nested or intersected
// character classes) rather than letting a rule silently mean something
// else. Two corner cases differ from Java: '.' matches '\r' and the Unicode
// line separators (a subject name holds none), and where Java's replaceAll
// finds a second, empty match right after a match that ends the name (a
// pattern such as (.*) that is not anchored with $), Samsa does not, so
// RULE:(.*)/x$1/ gives xCN=... where Kafka gives xCN=...x.
type PrincipalMapper struct {
	rules []mappingRule
}

// mappingRule is one entry of ssl.principal.mapping.rules.
type mappingRule struct {
	text        string         // as written, for messages
	whole       *regexp.Regexp // the pattern anchored at both ends: Java's Matcher.matches
	pattern     *regexp.Regexp // the pattern as written: Java's String.replaceAll
	replacement []replacementPart
	isDefault   bool
	lower       bool
	upper       bool
}

// replacementPart is a literal, or a group of the match when group >= 0.
type replacementPart struct {
	literal string
	group   int
}

// ParsePrincipalMappingRules reads Kafka's grammar: rules separated by
// commas, each DEFAULT or RULE:pattern/replacement/ with an optional L or U
// after the last slash to lower- or upper-case the result. A slash inside a
// pattern or replacement is written \/. In the replacement $n is group n,
// ${name} a named group, \c the character c; $n past the pattern's last
// group stays literal text, as in Kafka.
func ParsePrincipalMappingRules(s string) (PrincipalMapper, error) {
	p := ruleScanner{s: s}
	var m PrincipalMapper
	for !p.done() {
		r, ok, err := p.next()
		if err != nil {
			return PrincipalMapper{}, fmt.Errorf("ssl.principal.mapping.rules: %w", err)
		}
		if ok {
			m.rules = append(m.rules, r)
		}
	}
	if len(m.rules) == 0 {
		return PrincipalMapper{}, fmt.Errorf("ssl.principal.mapping.rules %q has no rule: no certificate could map to a principal; use %s to keep the whole name", s, DefaultPrincipalMappingRules)
	}
	return m, nil
}

// Map returns the principal name of a distinguished name: the result of the
// first rule whose pattern matches the whole name. A name that no rule
// matches is a failed authentication, as in Kafka.
func (m PrincipalMapper) Map(dn string) (string, error) {
	if len(m.rules) == 0 {
		return dn, nil
	}
	for _, r := range m.rules {
		if name, ok := r.apply(dn); ok {
			return name, nil
		}
	}
	return "", Failed("no ssl.principal.mapping.rules rule matches the certificate's distinguished name %s", dn)
}

// String is the rules as written.
func (m PrincipalMapper) String() string {
	if len(m.rules) == 0 {
		return DefaultPrincipalMappingRules
	}
	texts := make([]string, len(m.rules))
	for i, r := range m.rules {
		texts[i] = r.text
	}
	return strings.Join(texts, ",")
}

func (r mappingRule) apply(dn string) (string, bool) {
	if r.isDefault {
		return dn, true
	}
	if !r.whole.MatchString(dn) {
		return "", false
	}
	var b strings.Builder
	last := 0
	for _, loc := range r.pattern.FindAllStringSubmatchIndex(dn, -1) {
		b.WriteString(dn[last:loc[0]])
		r.expand(&b, dn, loc)
		last = loc[1]
	}
	b.WriteString(dn[last:])
	switch {
	case r.lower:
		return strings.ToLower(b.String()), true
	case r.upper:
		return strings.ToUpper(b.String()), true
	}
	return b.String(), true
}

func (r mappingRule) expand(b *strings.Builder, dn string, loc []int) {
	for _, part := range r.replacement {
		if part.group < 0 {
			b.WriteString(part.literal)
			continue
		}
		if start := loc[2*part.group]; start >= 0 {
			b.WriteString(dn[start:loc[2*part.group+1]])
		}
	}
}

// ruleScanner walks the rules text. Kafka splits it with a regular
// expression whose rule alternatives may themselves hold commas (inside a
// pattern or replacement), so it is scanned, not split.
type ruleScanner struct {
	s   string
	pos int
}

func (p *ruleScanner) done() bool {
	p.skipSpace()
	return p.pos >= len(p.s)
}

func (p *ruleScanner) skipSpace() {
	for p.pos < len(p.s) && isJavaSpace(p.s[p.pos]) {
		p.pos++
	}
}

// isJavaSpace is Java's \s: the characters Kafka's splitter trims.
func isJavaSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// next reads one rule and the comma after it; ok is false for an empty
// entry, which Kafka ignores.
func (p *ruleScanner) next() (r mappingRule, ok bool, err error) {
	start := p.pos
	switch rest := p.s[p.pos:]; {
	case strings.HasPrefix(rest, "RULE:"):
		p.pos += len("RULE:")
		r, err = p.rule()
		ok = true
	case strings.HasPrefix(rest, DefaultPrincipalMappingRules):
		p.pos += len(DefaultPrincipalMappingRules)
		r, ok = mappingRule{isDefault: true}, true
	case rest[0] != ',':
		err = fmt.Errorf("want %s or RULE:pattern/replacement/", DefaultPrincipalMappingRules)
	}
	r.text = p.s[start:p.pos]
	if err == nil {
		err = p.endOfRule()
	}
	if err != nil {
		return mappingRule{}, false, fmt.Errorf("invalid rule `%s`: %w", p.entry(start), err)
	}
	return r, ok, nil
}

// endOfRule expects optional space, then a comma or the end.
func (p *ruleScanner) endOfRule() error {
	p.skipSpace()
	if p.pos == len(p.s) {
		return nil
	}
	if p.s[p.pos] != ',' {
		rest := p.s[p.pos:]
		if i := strings.IndexByte(rest, ','); i >= 0 {
			rest = rest[:i]
		}
		return fmt.Errorf("unexpected `%s` after the rule", strings.TrimSpace(rest))
	}
	p.pos++
	return nil
}

// entry is the text of the entry that starts at start, up to the first
// comma at or after the scan position, for messages.
func (p *ruleScanner) entry(start int) string {
	end := len(p.s)
	if i := strings.IndexByte(p.s[p.pos:], ','); i >= 0 {
		end = p.pos + i
	}
	return strings.TrimSpace(p.s[start:end])
}

// rule reads pattern/replacement/[LU] after RULE:.
func (p *ruleScanner) rule() (mappingRule, error) {
	pattern, ok := p.part()
	if !ok {
		return mappingRule{}, fmt.Errorf("want RULE:pattern/replacement/ and found no / after the pattern")
	}
	replacement, ok := p.part()
	if !ok {
		return mappingRule{}, fmt.Errorf("want RULE:pattern/replacement/ and found no / after the replacement")
	}
	r, err := compileRule(pattern, replacement)
	if err != nil {
		return mappingRule{}, err
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'L' || p.s[p.pos] == 'U') {
		r.lower, r.upper = p.s[p.pos] == 'L', p.s[p.pos] == 'U'
		p.pos++
	}
	return r, nil
}

// part reads up to an unescaped slash and consumes it. A backslash keeps the
// character after it: the escape belongs to the regular expression or the
// replacement, not to the rules' syntax.
func (p *ruleScanner) part() (string, bool) {
	start := p.pos
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case '\\':
			p.pos += 2
		case '/':
			p.pos++
			return p.s[start : p.pos-1], true
		default:
			p.pos++
		}
	}
	p.pos = len(p.s)
	return "", false
}

func compileRule(pattern, replacement string) (mappingRule, error) {
	if what := javaOnlyConstruct(pattern); what != "" {
		return mappingRule{}, fmt.Errorf("pattern %q uses %s, which Java's regular expressions have and Go's RE2 does not", pattern, what)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return mappingRule{}, fmt.Errorf("pattern %q is not a regular expression Go's RE2 accepts: %w", pattern, err)
	}
	whole := regexp.MustCompile(`\A(?:` + pattern + `)\z`)
	parts, err := parseReplacement(replacement, re)
	if err != nil {
		return mappingRule{}, fmt.Errorf("replacement %q: %w", replacement, err)
	}
	return mappingRule{whole: whole, pattern: re, replacement: parts}, nil
}

// javaOnlyConstruct names a construct of Java's regular expressions that RE2
// either refuses with a cryptic message or, worse, accepts with another
// meaning (a nested class [a-z[0-9]] is a union in Java, a class followed by
// a literal ] in RE2). It returns "" when there is none.
func javaOnlyConstruct(p string) string {
	inClass, classStart := false, 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			if what := javaEscape(p[i+1:], inClass); what != "" {
				return what
			}
			if p[i+1] == 'Q' {
				i = skipQuoted(p, i)
				continue
			}
			i++
		case inClass:
			if what := javaClassConstruct(p, i); what != "" {
				return what
			}
			// A ] first in a class is a member, in Java and RE2 alike.
			inClass = c != ']' || i == classStart
		case c == '[':
			inClass, classStart = true, i+1
			if i+1 < len(p) && p[i+1] == '^' {
				i, classStart = i+1, i+2
			}
		case c == '(':
			if what := javaGroup(p[i+1:]); what != "" {
				return what
			}
		case strings.IndexByte("*+?}", c) >= 0 && i+1 < len(p) && p[i+1] == '+' && (i == 0 || p[i-1] != '('):
			return "a possessive quantifier (" + p[i:i+2] + ")"
		}
	}
	return ""
}

func javaEscape(rest string, inClass bool) string {
	switch {
	case !inClass && rest[0] >= '1' && rest[0] <= '9':
		return "a backreference (\\" + rest[:1] + ")"
	case !inClass && strings.HasPrefix(rest, "k<"):
		return "a named backreference (\\k<...>)"
	}
	return ""
}

// skipQuoted returns the index of the E of the \E that ends the \Q at i, or
// the last index.
func skipQuoted(p string, i int) int {
	if end := strings.Index(p[i+2:], `\E`); end >= 0 {
		return i + 2 + end + 1
	}
	return len(p) - 1
}

func javaClassConstruct(p string, i int) string {
	switch {
	case p[i] == '&' && i+1 < len(p) && p[i+1] == '&':
		return "a character class intersection (&&)"
	case p[i] == '[':
		return "a [ inside a character class (a nested class in Java, a POSIX class such as [:alpha:] in RE2); escape it as \\["
	}
	return ""
}

func javaGroup(rest string) string {
	for _, g := range []struct{ prefix, what string }{
		{"?=", "a lookahead (?=...)"},
		{"?!", "a negative lookahead (?!...)"},
		{"?<=", "a lookbehind (?<=...)"},
		{"?<!", "a negative lookbehind (?<!...)"},
		{"?>", "an atomic group (?>...)"},
	} {
		if strings.HasPrefix(rest, g.prefix) {
			return g.what
		}
	}
	return ""
}

// parseReplacement reads a replacement with the semantics of Java's
// Matcher.appendReplacement as Kafka feeds it: \c is c; $ then digits is
// the longest group number that exists, its first digit always taken;
// ${name} is a named group. Kafka turns a $n past the last group into the
// literal text $n, so a number whose first digit is no group stays literal
// here. What Java would refuse when a rule is applied (a lone $, an unknown
// group name, $n in a pattern without groups) is refused now.
func parseReplacement(s string, re *regexp.Regexp) ([]replacementPart, error) {
	var parts []replacementPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, replacementPart{literal: lit.String(), group: -1})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("ends with a lone \\")
			}
			i++
			lit.WriteByte(s[i])
		case '$':
			group, n, literal, err := groupReference(s[i+1:], re)
			if err != nil {
				return nil, err
			}
			i += n
			if literal {
				lit.WriteString(s[i-n : i+1])
				continue
			}
			flush()
			parts = append(parts, replacementPart{group: group})
		default:
			lit.WriteByte(s[i])
		}
	}
	flush()
	return parts, nil
}

// groupReference reads what follows a $: the group and how many bytes it
// took, or literal when Kafka would have escaped it.
func groupReference(rest string, re *regexp.Regexp) (group, n int, literal bool, err error) {
	if strings.HasPrefix(rest, "{") {
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return 0, 0, false, fmt.Errorf("${ without a closing }")
		}
		name := rest[1:end]
		if i := re.SubexpIndex(name); i > 0 {
			return i, end + 1, false, nil
		}
		return 0, 0, false, fmt.Errorf("no group named %q in the pattern", name)
	}
	if rest == "" || rest[0] < '0' || rest[0] > '9' {
		return 0, 0, false, fmt.Errorf("$ must be followed by a group number or {name}; write \\$ for a dollar sign")
	}
	groups := re.NumSubexp()
	group = int(rest[0] - '0')
	if group > groups {
		if groups == 0 {
			return 0, 0, false, fmt.Errorf("$%c refers to a group and the pattern has none", rest[0])
		}
		return 0, literalDigits(rest), true, nil
	}
	n = 1
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		next := group*10 + int(rest[n]-'0')
		if next > groups {
			break
		}
		group, n = next, n+1
	}
	return group, n, false, nil
}

func literalDigits(rest string) int {
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return n
}

// The attribute types Java's X500Principal.getName() prints by keyword
// (RFC 2253's list plus UID); every other type prints as its dotted OID with
// a #hex value.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.9":                    "STREET",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// nameAttribute and nameRDNSET read a subject as encoded, keeping each
// value's ASN.1 tag, which decides how Java prints it; pkix.Name loses both
// the tag and multi-valued RDNs.
type nameAttribute struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

type nameRDNSET []nameAttribute

// subjectDN is the certificate's subject as Java's X500Principal.getName()
// prints it, which is what Kafka's mapping rules and ACLs see: RFC 2253, the
// last RDN first, no spaces after the commas.
func subjectDN(cert *x509.Certificate) (string, error) {
	var rdns []nameRDNSET
	if rest, err := asn1.Unmarshal(cert.RawSubject, &rdns); err != nil || len(rest) > 0 {
		return "", fmt.Errorf("read the certificate's subject: %v", err)
	}
	out := make([]string, 0, len(rdns))
	for i := len(rdns) - 1; i >= 0; i-- {
		avas := make([]string, len(rdns[i]))
		for j, a := range rdns[i] {
			avas[j] = formatAttribute(a)
		}
		out = append(out, strings.Join(avas, "+"))
	}
	return strings.Join(out, ","), nil
}

func formatAttribute(a nameAttribute) string {
	oid := a.Type.String()
	keyword, ok := rfc2253Keywords[oid]
	value, isString := directoryString(a.Value)
	if !ok || !isString {
		k := keyword
		if !ok {
			k = oid
		}
		return k + "=#" + hex.EncodeToString(a.Value.FullBytes)
	}
	return keyword + "=" + escapeRFC2253(value)
}

// directoryString is the value as text when Java prints it as text: the
// string types of its AVA.isDerString. Java reads a BMPString's UTF-16 bytes
// as UTF-8 and prints mojibake (CN=\00a\00b); Samsa decodes it, so such a
// name maps to the principal its subject means.
func directoryString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagPrintableString, asn1.TagT61String, asn1.TagIA5String, asn1.TagUTF8String, 27: // 27: GeneralString
		return string(v.Bytes), true
	case asn1.TagBMPString:
		return decodeBMP(v.Bytes), true
	}
	return "", false
}

func decodeBMP(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	return string(utf16.Decode(u))
}

// escapeRFC2253 escapes as Java's AVA.toRFC2253String: a backslash before
// each of ,=+<>#;"\ wherever it stands, \00 for NUL, and a backslash before
// each leading or trailing space or carriage return.
func escapeRFC2253(v string) string {
	var b strings.Builder
	lead := len(v) - len(strings.TrimLeft(v, " \r"))
	trail := len(strings.TrimRight(v, " \r"))
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case strings.IndexByte(`,=+<>#;"\`, c) >= 0 || i < lead || i >= trail:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == 0:
			b.WriteString(`\00`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
