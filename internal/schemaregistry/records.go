package schemaregistry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The _schemas topic holds Confluent's records, so that a Samsa registry
// and Confluent's can read each other's store. A key is a small JSON object
// naming what the record is about; compaction keeps the last value per key,
// so a key must be written byte for byte the same way every time (field
// order included, as Confluent's Jackson writes it).

// Key types, as Confluent's SchemaRegistryKeyType names them.
const (
	keySchema        = "SCHEMA"
	keyConfig        = "CONFIG"
	keyMode          = "MODE"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyClearSubject  = "CLEAR_SUBJECT"
	keyNoop          = "NOOP"
	keyContext       = "CONTEXT"
)

// defaultTenant is the tenant Confluent's registry writes in CONTEXT
// records outside its multi-tenant cloud.
const defaultTenant = "default"

// storeKey is one record's key. Global is set for the registry-wide CONFIG
// and MODE, whose subject Confluent writes as null. Context is a CONTEXT
// key's context (".ctx"), which has no subject.
type storeKey struct {
	Type    string
	Subject string
	Global  bool
	Version int
	Context string
}

// MarshalJSON writes the key as Confluent does: SCHEMA keys carry magic 1,
// the others magic 0.
func (k storeKey) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"keytype":`)
	b.WriteString(strconv.Quote(k.Type))
	switch k.Type {
	case keySchema:
		b.WriteString(`,"subject":`)
		writeJSONString(&b, k.Subject)
		fmt.Fprintf(&b, `,"version":%d,"magic":1}`, k.Version)
		return b.Bytes(), nil
	case keyNoop:
		b.WriteString(`,"magic":0}`)
		return b.Bytes(), nil
	case keyContext:
		b.WriteString(`,"tenant":"` + defaultTenant + `","context":`)
		writeJSONString(&b, k.Context)
		b.WriteString(`,"magic":0}`)
		return b.Bytes(), nil
	}
	b.WriteString(`,"subject":`)
	if k.Global {
		b.WriteString("null")
	} else {
		writeJSONString(&b, k.Subject)
	}
	b.WriteString(`,"magic":0}`)
	return b.Bytes(), nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	raw, _ := json.Marshal(s) // a string always marshals
	b.Write(raw)
}

// parseKey reads a record's key; unknown key types are not an error (a
// newer registry may write kinds this one does not know, and Confluent's
// reader skips them too) but come back with their type for the caller to
// skip.
func parseKey(raw []byte) (storeKey, error) {
	var k struct {
		KeyType string  `json:"keytype"`
		Subject *string `json:"subject"`
		Version int     `json:"version"`
		Context string  `json:"context"`
	}
	if err := json.Unmarshal(raw, &k); err != nil {
		return storeKey{}, fmt.Errorf("schemaregistry: key %q: %w", raw, err)
	}
	out := storeKey{Type: k.KeyType, Version: k.Version, Context: k.Context}
	if k.Subject == nil {
		out.Global = true
	} else {
		out.Subject = *k.Subject
	}
	if k.KeyType == keySchema && (out.Global || k.Version < 1) {
		return storeKey{}, fmt.Errorf("schemaregistry: key %q: a schema key needs a subject and a version", raw)
	}
	return out, nil
}

// Reference is a schema reference as the API and the store spell it.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// schemaValue is Confluent's SchemaValue: one version of a subject.
// Metadata and RuleSet are kept as the client sent them: this registry
// does not act on them (data contracts) but returns them unchanged.
type schemaValue struct {
	Subject    string          `json:"subject"`
	Version    int             `json:"version"`
	ID         int             `json:"id"`
	SchemaType string          `json:"schemaType,omitempty"`
	References []Reference     `json:"references,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	RuleSet    json.RawMessage `json:"ruleSet,omitempty"`
	Schema     string          `json:"schema"`
	Deleted    bool            `json:"deleted"`
}

// schemaTypeOrAvro is the value's type with Confluent's default: a missing
// schemaType is Avro.
func (v *schemaValue) schemaTypeOrAvro() string {
	if v.SchemaType == "" {
		return "AVRO"
	}
	return v.SchemaType
}

// configValue is Confluent's ConfigValue, of which this registry acts on
// the compatibility level only; the other fields Confluent has (normalize,
// alias, validateFields, default and override metadata and rule sets) are
// refused by the API rather than stored and ignored.
type configValue struct {
	Subject            *string `json:"subject,omitempty"`
	CompatibilityLevel string  `json:"compatibilityLevel,omitempty"`
}

// modeValue is Confluent's ModeValue.
type modeValue struct {
	Subject *string `json:"subject,omitempty"`
	Mode    string  `json:"mode"`
}

// contextValue is Confluent's ContextValue: the context exists.
type contextValue struct {
	Tenant  string `json:"tenant"`
	Context string `json:"context"`
}

// deleteSubjectValue soft-deletes every version of Subject up to Version.
type deleteSubjectValue struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// clearSubjectValue forgets the subjects whose name starts with Subject
// (written when IMPORT mode is set, after the versions' tombstones).
type clearSubjectValue struct {
	Subject string `json:"subject"`
}
