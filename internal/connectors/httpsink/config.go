package httpsink

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// The configs, with Confluent's names.
const (
	URLConfig                = "http.api.url"
	MethodConfig             = "request.method"
	HeadersConfig            = "headers"
	HeaderSeparatorConfig    = "header.separator"
	AuthTypeConfig           = "auth.type"
	UserConfig               = "connection.user"
	PasswordConfig           = "connection.password"
	BatchMaxSizeConfig       = "batch.max.size"
	BatchPrefixConfig        = "batch.prefix"
	BatchSuffixConfig        = "batch.suffix"
	BatchSeparatorConfig     = "batch.separator"
	BatchJSONAsArrayConfig   = "batch.json.as.array"
	BodyFormatConfig         = "request.body.format"
	MaxRetriesConfig         = "max.retries"
	RetryBackoffConfig       = "retry.backoff.ms"
	RetryBackoffPolicyConfig = "retry.backoff.policy"
	RetryCodesConfig         = "retry.on.status.codes"
	ConnectTimeoutConfig     = "http.connect.timeout.ms"
	RequestTimeoutConfig     = "http.request.timeout.ms"
	NullValuesConfig         = "behavior.on.null.values"
	OnErrorConfig            = "behavior.on.error"
)

// unsupported are Confluent's configs this sink does not implement, with
// what to do instead: set, each is refused rather than ignored.
var unsupported = map[string]string{
	"batch.key.pattern":  "batches are split by the URL each record resolves to",
	"regex.patterns":     "",
	"regex.replacements": "",
	"regex.separator":    "",
	"sensitive.headers":  "",
	"ssl.enabled":        "an https URL is verified against the system's trusted roots",
	"report.errors.as":   "failed records go to the errant record reporter (errors.deadletterqueue.topic.name)",
}

// unsupportedPrefixes are families of Confluent's configs refused alike.
var unsupportedPrefixes = map[string]string{
	"oauth2.":     "send a bearer token with headers=Authorization:Bearer <token>",
	"https.ssl.":  "an https URL is verified against the system's trusted roots",
	"reporter.":   "failed records go to the errant record reporter (errors.deadletterqueue.topic.name)",
	"http.proxy.": "",
}

// configError is an error about one config, so that config/validate
// shows it against that config.
type configError struct {
	name string
	msg  string
}

func (e *configError) Error() string { return e.msg }

func cfgErr(name, format string, args ...any) error {
	return &configError{name: name, msg: fmt.Sprintf(format, args...)}
}

const (
	authNone   = "NONE"
	authBasic  = "BASIC"
	authOAuth2 = "OAUTH2"

	formatString = "string"
	formatJSON   = "json"

	policyConstant    = "CONSTANT_VALUE"
	policyExponential = "EXPONENTIAL_WITH_JITTER"

	onNullIgnore = "ignore"
	onNullDelete = "delete"
	onNullLog    = "log"
	onNullFail   = "fail"

	onErrorFail   = "fail"
	onErrorLog    = "log"
	onErrorIgnore = "ignore"
)

func configDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	def := func(name string, t connect.ConfigType, dflt any, v connect.Validator, imp connect.Importance, doc string, rec ...string) {
		d.Define(connect.ConfigKey{Name: name, Type: t, Default: dflt, Validator: v, Importance: imp,
			Documentation: doc, Recommended: rec, Group: "HTTP"})
	}
	def(URLConfig, connect.TypeString, connect.NoDefault, connect.ValidatorFunc(validURL), connect.High,
		"The HTTP API URL; ${topic} and ${key} are replaced by each record's topic and key")
	def(MethodConfig, connect.TypeString, "POST", connect.OneOf{Values: []string{"POST", "PUT", "PATCH"}, CaseInsensitive: true},
		connect.High, "The HTTP request method", "POST", "PUT", "PATCH")
	def(HeadersConfig, connect.TypeString, "", nil, connect.High,
		"HTTP headers to send with every request, name:value, separated by header.separator")
	def(HeaderSeparatorConfig, connect.TypeString, "|", connect.NonEmptyString{}, connect.High,
		"The separator of the entries in headers")
	def(AuthTypeConfig, connect.TypeString, authNone, connect.OneOf{Values: []string{authNone, authBasic, authOAuth2}, CaseInsensitive: true},
		connect.High, "Authentication: NONE or BASIC (OAUTH2 is refused: send a bearer token in headers)", authNone, authBasic)
	def(UserConfig, connect.TypeString, "", nil, connect.High, "The user name of BASIC authentication")
	def(PasswordConfig, connect.TypePassword, "", nil, connect.High, "The password of BASIC authentication")
	def(BatchMaxSizeConfig, connect.TypeInt, int32(1), connect.Between(1, 1_000_000), connect.High,
		"The number of records a batch holds before it is sent")
	def(BatchPrefixConfig, connect.TypeString, "", nil, connect.High, "Text before a batch's records")
	def(BatchSuffixConfig, connect.TypeString, "", nil, connect.High, "Text after a batch's records")
	def(BatchSeparatorConfig, connect.TypeString, ",", nil, connect.High, "Text between a batch's records")
	def(BatchJSONAsArrayConfig, connect.TypeBoolean, false, nil, connect.High,
		"Send a batch as a JSON array of its records (request.body.format=json; prefix, suffix and separator unset)")
	def(BodyFormatConfig, connect.TypeString, formatString, connect.OneOf{Values: []string{formatString, formatJSON}, CaseInsensitive: true},
		connect.Medium, "How a record's value is written: string (its text) or json", formatString, formatJSON)
	def(MaxRetriesConfig, connect.TypeInt, int32(10), connect.AtLeast(0), connect.Medium,
		"How many times a failed request is sent again before the failure is handled by behavior.on.error")
	def(RetryBackoffConfig, connect.TypeInt, int32(3000), connect.AtLeast(0), connect.Medium,
		"The wait before a retry (ms); with EXPONENTIAL_WITH_JITTER the base that doubles with each retry")
	def(RetryBackoffPolicyConfig, connect.TypeString, policyExponential,
		connect.OneOf{Values: []string{policyConstant, policyExponential}, CaseInsensitive: true}, connect.Medium,
		"CONSTANT_VALUE or EXPONENTIAL_WITH_JITTER", policyConstant, policyExponential)
	def(RetryCodesConfig, connect.TypeString, "400-", connect.ValidatorFunc(validCodes), connect.Medium,
		"The status codes to retry: codes and ranges, as 404,408,500- (408 and 429 and network failures are always retried)")
	def(ConnectTimeoutConfig, connect.TypeInt, int32(30000), connect.AtLeast(1), connect.Low,
		"How long a connection may take to open (ms)")
	def(RequestTimeoutConfig, connect.TypeInt, int32(30000), connect.AtLeast(1), connect.Low,
		"How long a request may take, answer included (ms)")
	def(NullValuesConfig, connect.TypeString, onNullIgnore,
		connect.OneOf{Values: []string{onNullIgnore, onNullDelete, onNullLog, onNullFail}, CaseInsensitive: true}, connect.Low,
		"What a record with a null value does: ignore, delete (a DELETE request), log, or fail (an error, handled by behavior.on.error)",
		onNullIgnore, onNullDelete, onNullLog, onNullFail)
	def(OnErrorConfig, connect.TypeString, onErrorFail,
		connect.OneOf{Values: []string{onErrorFail, onErrorLog, onErrorIgnore}, CaseInsensitive: true}, connect.Low,
		"What a failed request does: fail the task, log it and report its records to the errant record reporter, or ignore it",
		onErrorFail, onErrorLog, onErrorIgnore)
	return d
}

func validURL(name string, v any) error {
	s, _ := v.(string)
	probe := strings.NewReplacer("${topic}", "t", "${key}", "k").Replace(s)
	u, err := url.Parse(probe)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	return nil
}

func validCodes(name string, v any) error {
	raw, _ := v.(string)
	_, err := parseCodes(raw)
	return err
}

// codeRange is an inclusive range of status codes; an open end is 999.
type codeRange struct{ lo, hi int }

// parseCodes reads Confluent's list: codes and ranges ("404,408,500-",
// "400-500"), comma-separated.
func parseCodes(s string) ([]codeRange, error) {
	var out []codeRange
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		r := codeRange{}
		var err error
		if r.lo, err = statusCode(lo); err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		r.hi = r.lo
		if isRange {
			r.hi = 999
			if strings.TrimSpace(hi) != "" {
				if r.hi, err = statusCode(hi); err != nil {
					return nil, fmt.Errorf("%q: %w", part, err)
				}
			}
		}
		if r.hi < r.lo {
			return nil, fmt.Errorf("%q: the range ends before it starts", part)
		}
		out = append(out, r)
	}
	return out, nil
}

func statusCode(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 100 || n > 999 {
		return 0, errors.New("status codes are numbers from 100 to 999")
	}
	return n, nil
}

// settings is a checked config.
type settings struct {
	url            string
	method         string
	headers        [][2]string
	basicUser      string
	basicPassword  string
	basic          bool
	batchMax       int
	prefix         string
	suffix         string
	separator      string
	jsonArray      bool
	format         string
	maxRetries     int
	backoff        time.Duration
	exponential    bool
	retryCodes     []codeRange
	connectTimeout time.Duration
	requestTimeout time.Duration
	onNull         string
	onError        string
}

func parseSettings(props map[string]string) (settings, error) {
	if err := refuseUnsupported(props); err != nil {
		return settings{}, err
	}
	cfg, err := configDef().Parse(props)
	if err != nil {
		return settings{}, err
	}
	ms := func(name string) time.Duration { return time.Duration(cfg.Int(name)) * time.Millisecond }
	s := settings{
		url:            cfg.String(URLConfig),
		method:         strings.ToUpper(cfg.String(MethodConfig)),
		batchMax:       int(cfg.Int(BatchMaxSizeConfig)),
		prefix:         rawString(props, BatchPrefixConfig, ""),
		suffix:         rawString(props, BatchSuffixConfig, ""),
		separator:      rawString(props, BatchSeparatorConfig, ","),
		jsonArray:      cfg.Bool(BatchJSONAsArrayConfig),
		format:         strings.ToLower(cfg.String(BodyFormatConfig)),
		maxRetries:     int(cfg.Int(MaxRetriesConfig)),
		backoff:        ms(RetryBackoffConfig),
		exponential:    strings.EqualFold(cfg.String(RetryBackoffPolicyConfig), policyExponential),
		connectTimeout: ms(ConnectTimeoutConfig),
		requestTimeout: ms(RequestTimeoutConfig),
		onNull:         strings.ToLower(cfg.String(NullValuesConfig)),
		onError:        strings.ToLower(cfg.String(OnErrorConfig)),
	}
	s.retryCodes, _ = parseCodes(cfg.String(RetryCodesConfig))
	if s.headers, err = parseHeaders(rawString(props, HeadersConfig, ""), rawString(props, HeaderSeparatorConfig, "|")); err != nil {
		return settings{}, err
	}
	if err := s.auth(cfg); err != nil {
		return settings{}, err
	}
	if err := s.checkBatch(props); err != nil {
		return settings{}, err
	}
	return s, nil
}

// rawString is a string config as given, untrimmed: a separator or a
// prefix may be whitespace (a newline between records).
func rawString(props map[string]string, name, dflt string) string {
	if v, ok := props[name]; ok {
		return v
	}
	return dflt
}

// refuseUnsupported names the first (in name order) of Confluent's configs
// that is set and that this sink refuses (with what to use instead).
func refuseUnsupported(props map[string]string) error {
	var names []string
	for name := range props {
		if _, ok := whyUnsupported(name); ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	why, _ := whyUnsupported(names[0])
	msg := fmt.Sprintf("%s is a Confluent HTTP Sink config that Samsa's HTTP sink does not support", names[0])
	if why != "" {
		msg += ": " + why
	}
	return cfgErr(names[0], "%s", msg)
}

func whyUnsupported(name string) (string, bool) {
	if why, ok := unsupported[name]; ok {
		return why, true
	}
	for prefix, why := range unsupportedPrefixes {
		if strings.HasPrefix(name, prefix) {
			return why, true
		}
	}
	return "", false
}

func (s *settings) auth(cfg connect.Config) error {
	user, password := cfg.String(UserConfig), cfg.Password(PasswordConfig)
	switch strings.ToUpper(cfg.String(AuthTypeConfig)) {
	case authOAuth2:
		return cfgErr(AuthTypeConfig, "%s=OAUTH2 is not supported by Samsa's HTTP sink: send a bearer token with %s=Authorization:Bearer <token>", AuthTypeConfig, HeadersConfig)
	case authBasic:
		if user == "" {
			return cfgErr(UserConfig, "%s=BASIC needs %s", AuthTypeConfig, UserConfig)
		}
		s.basic, s.basicUser, s.basicPassword = true, user, password
	default:
		if user != "" || password != "" {
			return cfgErr(AuthTypeConfig, "%s and %s are used only with %s=BASIC, and %s is NONE", UserConfig, PasswordConfig, AuthTypeConfig, AuthTypeConfig)
		}
	}
	return nil
}

func (s *settings) checkBatch(props map[string]string) error {
	if !s.jsonArray {
		return nil
	}
	if s.format != formatJSON {
		return cfgErr(BatchJSONAsArrayConfig, "%s=true needs %s=json", BatchJSONAsArrayConfig, BodyFormatConfig)
	}
	for _, name := range []string{BatchPrefixConfig, BatchSuffixConfig, BatchSeparatorConfig} {
		if _, set := props[name]; set {
			return cfgErr(name, "%s cannot be set with %s=true: the array has its own brackets and commas", name, BatchJSONAsArrayConfig)
		}
	}
	return nil
}

// parseHeaders reads "name:value|name:value"; a value may hold colons.
func parseHeaders(raw, sep string) ([][2]string, error) {
	var out [][2]string
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	for _, entry := range strings.Split(raw, sep) {
		name, value, ok := strings.Cut(entry, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			return nil, cfgErr(HeadersConfig, "Invalid value %s for configuration %s: the entry %q is not name:value (entries are separated by %q)", raw, HeadersConfig, entry, sep)
		}
		out = append(out, [2]string{name, strings.TrimSpace(value)})
	}
	return out, nil
}
