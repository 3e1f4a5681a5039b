package convert

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/connect"
)

func TestLookup(t *testing.T) {
	for name, want := range map[string]any{
		"org.apache.kafka.connect.json.JsonConverter": &JSONConverter{}, "JsonConverter": &JSONConverter{}, "Json": &JSONConverter{},
		"StringConverter": &StringConverter{}, "ByteArray": ByteArrayConverter{}, "io.confluent.connect.avro.AvroConverter": &RegistryConverter{},
		"LongConverter": &NumberConverter{},
	} {
		c, err := New(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, w := typeName(c), typeName(want); got != w {
			t.Errorf("%s: %s, want %s", name, got, w)
		}
	}
	for name, want := range map[string]any{
		SimpleHeaderConverterClass: SimpleHeaderConverter{}, "SimpleHeaderConverter": SimpleHeaderConverter{}, "Simple": SimpleHeaderConverter{},
		"JsonConverter": &JSONHeaderConverter{}, "StringConverter": &StringHeaderConverter{}, "IntegerConverter": &NumberHeaderConverter{},
	} {
		h, err := NewHeader(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, w := typeName(h), typeName(want); got != w {
			t.Errorf("%s: %s, want %s", name, got, w)
		}
	}
	if _, err := New("com.example.Nope"); err == nil || !strings.Contains(err.Error(), `unknown converter class "com.example.Nope"`) || !errors.Is(err, ErrConfig) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := NewHeader(AvroConverterClass); err == nil || !strings.Contains(err.Error(), "unknown header converter class") {
		t.Fatalf("Avro as a header converter: %v", err)
	}
	// Each New is a fresh converter: configuring one leaves another alone.
	a, _ := New("LongConverter")
	b, _ := New("LongConverter")
	if a == b {
		t.Fatal("New returned one converter twice")
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func TestPlugins(t *testing.T) {
	byKey := map[string]Plugin{}
	for _, p := range Plugins() {
		byKey[string(p.Type)+" "+p.Class] = p
		if p.Version == "" || p.ConfigDef == nil {
			t.Errorf("%s: no version or config", p.Class)
		}
	}
	for _, want := range []string{
		"converter " + JSONConverterClass, "header_converter " + JSONConverterClass, "header_converter " + SimpleHeaderConverterClass,
		"converter " + AvroConverterClass, "converter " + ProtobufConverterClass, "converter " + JSONSchemaConverterClass,
		"converter " + DoubleConverterClass, "header_converter " + ByteArrayConverterClass,
	} {
		if _, ok := byKey[want]; !ok {
			t.Errorf("Plugins lacks %s", want)
		}
	}
	if _, ok := byKey["header_converter "+AvroConverterClass]; ok {
		t.Error("AvroConverter is not a header converter")
	}
	if p := byKey["header_converter "+SimpleHeaderConverterClass]; strings.Join(p.Aliases, ",") != "SimpleHeaderConverter,Simple" {
		t.Errorf("aliases %v", p.Aliases)
	}
	def, err := ConfigDef("JsonConverter")
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := def.Key(ReplaceNullWithDefaultConfig); !ok || k.Type != connect.TypeBoolean {
		t.Fatalf("JsonConverter config: %v", def.Keys())
	}
	// Every converter is made by New, and every header converter by NewHeader.
	for _, p := range Plugins() {
		var err error
		if p.Type == connect.PluginConverter {
			_, err = New(p.Class)
		} else {
			_, err = NewHeader(p.Class)
		}
		if err != nil {
			t.Errorf("%s %s: %v", p.Type, p.Class, err)
		}
	}
}

// TestUnconfigured: a converter used before Configure errs or works
// without caches; it does not panic.
func TestUnconfigured(t *testing.T) {
	for _, p := range Plugins() {
		if p.Type == connect.PluginConverter {
			c, _ := New(p.Class)
			_, _ = c.FromConnectData("t", nil, connect.Int32Schema, int32(1))
			_, _, _ = c.ToConnectData("t", nil, []byte("1"))
		} else {
			h, _ := NewHeader(p.Class)
			_, _ = h.FromConnectHeader("t", "k", connect.Int32Schema, int32(1))
			_, _, _ = h.ToConnectHeader("t", "k", []byte("1"))
		}
	}
}
