package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// defaultRegistryURL is Confluent's schema.registry.url default port on
// loopback.
const defaultRegistryURL = "http://127.0.0.1:8081"

// registryFlags reach a Schema Registry: samsa schema's, and produce's
// and consume's when they use schemas.
type registryFlags struct {
	url      string
	user     string
	password string
}

func (r *registryFlags) register(f *pflag.FlagSet) {
	f.StringVar(&r.url, "registry-url", defaultRegistryURL,
		"Schema Registry URL, or a comma-separated list of them (Confluent's schema.registry.url)")
	f.StringVar(&r.user, "registry-user", "", "user name for the registry's HTTP basic auth (Confluent's basic.auth.user.info)")
	f.StringVar(&r.password, "registry-password", "",
		"password for --registry-user (env SAMSA_REGISTRY_PASSWORD when the flag is not given)")
}

// client builds franz-go's registry client; timeout bounds each request.
func (r *registryFlags) client(timeout time.Duration) (*sr.Client, error) {
	var urls []string
	for _, u := range strings.Split(r.url, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		parsed, err := url.Parse(u)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return nil, fmt.Errorf("invalid --registry-url %q: want http://host:port or https://host:port", u)
		}
		urls = append(urls, u)
	}
	if len(urls) == 0 {
		return nil, errors.New("--registry-url is empty")
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("--timeout must be positive, got %s", timeout)
	}
	password := r.password
	if password == "" {
		password = os.Getenv("SAMSA_REGISTRY_PASSWORD")
	}
	if r.user == "" && r.password != "" {
		return nil, errors.New("--registry-password needs --registry-user")
	}
	opts := []sr.ClientOpt{sr.URLs(urls...), sr.HTTPClient(&http.Client{Timeout: timeout}), sr.UserAgent("samsa-cli")}
	if r.user != "" {
		opts = append(opts, sr.BasicAuth(r.user, password))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("registry client: %w", err)
	}
	return cl, nil
}

// registryErr renders a registry failure on one line: Confluent's message
// and code, or why the registry could not be reached.
func (r *registryFlags) err(err error) error {
	if err == nil {
		return nil
	}
	var re *sr.ResponseError
	var op *net.OpError
	switch {
	case errors.As(err, &re):
		msg := re.Message
		if msg == "" {
			msg = strings.TrimSpace(string(re.Raw))
		}
		if re.ErrorCode == 0 {
			return fmt.Errorf("schema registry: HTTP %d: %s", re.StatusCode, oneLineText(msg))
		}
		return fmt.Errorf("schema registry: %s (error code %d)", oneLineText(msg), re.ErrorCode)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("cannot reach the schema registry at %s: %s", r.url, dialReason(err))
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer from the schema registry at %s within the timeout", r.url)
	}
	return fmt.Errorf("schema registry at %s: %s", r.url, oneLineText(err.Error()))
}

func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// parseSchemaType reads --type; empty guesses from the file's extension
// (.avsc Avro, .json JSON Schema, .proto Protobuf), else Avro.
func parseSchemaType(flag, file string) (schema.Type, error) {
	switch strings.ToUpper(flag) {
	case "AVRO":
		return schema.Avro, nil
	case "JSON", "JSONSCHEMA", "JSON_SCHEMA":
		return schema.JSON, nil
	case "PROTOBUF", "PROTO":
		return schema.Protobuf, nil
	case "":
		switch {
		case strings.HasSuffix(file, ".json"):
			return schema.JSON, nil
		case strings.HasSuffix(file, ".proto"):
			return schema.Protobuf, nil
		}
		return schema.Avro, nil
	}
	return "", fmt.Errorf("invalid schema type %q: want AVRO, JSON or PROTOBUF", flag)
}

// parseReferences reads --reference name=subject:version flags.
func parseReferences(flags []string) ([]sr.SchemaReference, error) {
	var refs []sr.SchemaReference
	for _, f := range flags {
		name, target, ok := strings.Cut(f, "=")
		subject, version, ok2 := cutLast(target, ":")
		v, err := parsePositive(version)
		if !ok || !ok2 || name == "" || subject == "" || err != nil {
			return nil, fmt.Errorf("invalid --reference %q: want name=subject:version (version a positive number)", f)
		}
		refs = append(refs, sr.SchemaReference{Name: name, Subject: subject, Version: v})
	}
	return refs, nil
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func parsePositive(s string) (int, error) {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != s {
		return 0, fmt.Errorf("%q is not a positive number", s)
	}
	return n, nil
}

// parseVersion reads a version argument: N (positive) or latest (-1).
func parseVersion(s string) (int, error) {
	if strings.EqualFold(s, "latest") || s == "-1" {
		return -1, nil
	}
	v, err := parsePositive(s)
	if err != nil {
		return 0, fmt.Errorf("invalid version %q: want a positive number or latest", s)
	}
	return v, nil
}

// readSchemaFile reads --schema-file.
func readSchemaFile(path string) (string, error) {
	if path == "" {
		return "", errors.New("--schema-file is required")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read --schema-file: %w", err)
	}
	return string(b), nil
}
