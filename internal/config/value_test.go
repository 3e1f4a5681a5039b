package config

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseValueTypes(t *testing.T) {
	tests := []struct {
		name    string
		typ     Type
		raw     string
		want    any
		wantErr string
	}{
		{"bool true", TypeBoolean, "true", true, ""},
		{"bool case and blanks", TypeBoolean, "  FALSE ", false, ""},
		{"bool garbage", TypeBoolean, "yes", nil, "either true or false"},
		{"bool empty", TypeBoolean, "", nil, "either true or false"},
		{"int", TypeInt, "42", int32(42), ""},
		{"int negative trimmed", TypeInt, " -7\t", int32(-7), ""},
		{"int plus sign", TypeInt, "+5", int32(5), ""},
		{"int overflow", TypeInt, "2147483648", nil, "type INT"},
		{"int hex refused", TypeInt, "0x10", nil, "type INT"},
		{"int underscore refused", TypeInt, "1_000", nil, "type INT"},
		{"int float refused", TypeInt, "1.5", nil, "type INT"},
		{"short", TypeShort, "3", int16(3), ""},
		{"short overflow", TypeShort, "40000", nil, "type SHORT"},
		{"long max", TypeLong, "9223372036854775807", int64(math.MaxInt64), ""},
		{"long overflow", TypeLong, "9223372036854775808", nil, "type LONG"},
		{"long empty", TypeLong, "", nil, "type LONG"},
		{"double", TypeDouble, "0.25", 0.25, ""},
		{"double integer form", TypeDouble, "1", 1.0, ""},
		{"double exponent", TypeDouble, "1.7976931348623157E308", math.MaxFloat64, ""},
		{"double NaN refused", TypeDouble, "NaN", nil, "type DOUBLE"},
		{"double garbage", TypeDouble, "half", nil, "type DOUBLE"},
		{"string trimmed", TypeString, "  CreateTime ", "CreateTime", ""},
		{"string empty", TypeString, "", "", ""},
		{"class", TypeClass, "a.b.C", "a.b.C", ""},
		{"password", TypePassword, "s3cret", "s3cret", ""},
		{"list", TypeList, "compact, delete", []string{"compact", "delete"}, ""},
		{"list empty", TypeList, "  ", []string{}, ""},
		{"list keeps empty items", TypeList, "a,,b", []string{"a", "", "b"}, ""},
		{"list single", TypeList, "delete", []string{"delete"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Entry{Name: "x", Type: tt.typ}
			got, err := parseValue(e, "x", tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidValue) {
					t.Fatalf("parseValue(%q) error = %v, want ErrInvalidValue containing %q", tt.raw, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseValue(%q): %v", tt.raw, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseValue(%q) (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

func TestValidators(t *testing.T) {
	tests := []struct {
		name    string
		typ     Type
		v       Validator
		raw     string
		wantErr string
	}{
		{"at least ok", TypeInt, atLeast(1), "1", ""},
		{"at least low", TypeInt, atLeast(1), "0", "at least 1"},
		{"between high", TypeInt, between(1, 17), "18", "no more than 17"},
		{"between low negative", TypeInt, between(-131072, 22), "-131073", "at least -131072"},
		{"long at least -1", TypeLong, atLeast(-1), "-2", "at least -1"},
		{"short at least", TypeShort, atLeast(1), "0", "at least 1"},
		{"gzip -1", TypeInt, gzipLevel, "-1", ""},
		{"gzip 9", TypeInt, gzipLevel, "9", ""},
		{"gzip 0", TypeInt, gzipLevel, "0", "at least 1"},
		{"ratio ok", TypeDouble, ratio{}, "0.75", ""},
		{"ratio high", TypeDouble, ratio{}, "1.5", "no more than 1"},
		{"ratio low", TypeDouble, ratio{}, "-0.1", "at least 0"},
		{"one of", TypeString, timestampTypes, "LogAppendTime", ""},
		{"one of is case sensitive", TypeString, timestampTypes, "logappendtime", "must be one of"},
		{"list of", TypeList, cleanupPolicies, "compact,delete", ""},
		{"list of empty", TypeList, cleanupPolicies, "", ""},
		{"list of bad item", TypeList, cleanupPolicies, "compact,forever", "invalid value forever"},
		{"list of empty item", TypeList, cleanupPolicies, "compact,", "must be one of"},
		{"throttled star", TypeList, throttledReplicas{}, "*", ""},
		{"throttled pairs", TypeList, throttledReplicas{}, "0:1, 1:2", ""},
		{"throttled empty", TypeList, throttledReplicas{}, "", ""},
		{"throttled bad", TypeList, throttledReplicas{}, "0-1", "[partitionId]:[brokerId]"},
		{"throttled past int", TypeList, throttledReplicas{}, "2147483648:1", "[partitionId]:[brokerId]"},
		{"throttled star mixed", TypeList, throttledReplicas{}, "*,0:1", "[partitionId]:[brokerId]"},
		{"listeners", TypeString, listenerList{}, "PLAINTEXT://:9092,CONTROLLER://localhost:9093", ""},
		{"listeners ipv6", TypeString, listenerList{}, "PLAINTEXT://[::1]:9092", ""},
		{"listeners no port", TypeString, listenerList{}, "PLAINTEXT://localhost", "unable to parse"},
		{"listeners no scheme", TypeString, listenerList{}, "localhost:9092", "unable to parse"},
		{"listeners bad port", TypeString, listenerList{}, "PLAINTEXT://:99999", "unable to parse"},
		{"listeners duplicate name", TypeString, listenerList{}, "PLAINTEXT://:9092,plaintext://:9093", "different name"},
		{"protocol map", TypeString, protocolMap{}, "CONTROLLER:PLAINTEXT,EXTERNAL:SASL_SSL", ""},
		{"protocol map bad protocol", TypeString, protocolMap{}, "EXTERNAL:TLS", "LISTENER_NAME:PROTOCOL"},
		{"protocol map no colon", TypeString, protocolMap{}, "EXTERNAL", "LISTENER_NAME:PROTOCOL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Entry{Name: "x", Type: tt.typ, Validator: tt.v}
			_, err := parseValue(e, "x", tt.raw)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("parseValue(%q): %v", tt.raw, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parseValue(%q) error = %v, want one containing %q", tt.raw, err, tt.wantErr)
			}
		})
	}
}

func TestValidatorStrings(t *testing.T) {
	tests := []struct {
		v    Validator
		want string
	}{
		{atLeast(0), "[0,...]"},
		{between(1, 17), "[1,...,17]"},
		{gzipLevel, "[1,...,9] or -1"},
		{ratio{}, "[0,...,1]"},
		{timestampTypes, "[CreateTime, LogAppendTime]"},
		{cleanupPolicies, "[compact, delete]"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{true, "true"},
		{int16(3), "3"},
		{int32(-1), "-1"},
		{int64(math.MaxInt64), "9223372036854775807"},
		{[]string{"compact", "delete"}, "compact,delete"},
		{[]string{}, ""},
		{"x", "x"},
		{0.5, "0.5"},
		{1.0, "1.0"},
		{0.0, "0.0"},
		{0.001, "0.001"},
		{1e7, "1.0E7"},
		{-2.5e-4, "-2.5E-4"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.Inf(1), "Infinity"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v); got != tt.want {
			t.Errorf("formatValue(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestPasswordValueHiddenInErrors(t *testing.T) {
	e := &Entry{Name: "p", Type: TypePassword, Validator: oneOf{"a"}}
	_, err := parseValue(e, "p", "hunter2")
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "[hidden]") {
		t.Fatalf("error = %v, want the value hidden", err)
	}
}
