package connect

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseValue(t *testing.T) {
	cases := []struct {
		typ  ConfigType
		raw  string
		want any
		err  string
	}{
		{TypeBoolean, "true", true, ""},
		{TypeBoolean, " FALSE ", false, ""},
		{TypeBoolean, "True", true, ""},
		{TypeBoolean, "yes", nil, "Expected value to be either true or false"},
		{TypeBoolean, "", nil, "Expected value to be either true or false"},
		{TypeInt, "42", int32(42), ""},
		{TypeInt, " -7 ", int32(-7), ""},
		{TypeInt, "+5", int32(5), ""},
		{TypeInt, "2147483647", int32(math.MaxInt32), ""},
		{TypeInt, "2147483648", nil, "Not a number of type INT"},
		{TypeInt, "1.5", nil, "Not a number of type INT"},
		{TypeInt, "0x10", nil, "Not a number of type INT"},
		{TypeInt, "1_000", nil, "Not a number of type INT"},
		{TypeInt, "", nil, "Not a number of type INT"},
		{TypeShort, "32767", int16(32767), ""},
		{TypeShort, "32768", nil, "Not a number of type SHORT"},
		{TypeLong, "9223372036854775807", int64(math.MaxInt64), ""},
		{TypeLong, "-9223372036854775809", nil, "Not a number of type LONG"},
		{TypeDouble, "1.5", 1.5, ""},
		{TypeDouble, " 1e3 ", 1000.0, ""},
		{TypeDouble, "-0.25", -0.25, ""},
		{TypeDouble, "NaN", nil, "Not a number of type DOUBLE"},
		{TypeDouble, "x", nil, "Not a number of type DOUBLE"},
		{TypeList, "a,b", []string{"a", "b"}, ""},
		{TypeList, " a , b ,c ", []string{"a", "b", "c"}, ""},
		{TypeList, "a,,b", []string{"a", "", "b"}, ""},
		{TypeList, "a,", []string{"a", ""}, ""},
		{TypeList, "", []string{}, ""},
		{TypeList, "   ", []string{}, ""},
		{TypeString, "  padded  ", "padded", ""},
		{TypeString, "", "", ""},
		{TypeClass, " com.example.X ", "com.example.X", ""},
		{TypePassword, " secret ", Password(" secret "), ""},
		{ConfigType("MAP"), "x", nil, "unknown config type MAP"},
	}
	for _, tc := range cases {
		got, err := ParseValue(tc.typ, tc.raw)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseValue(%s, %q) error = %v, want %q", tc.typ, tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseValue(%s, %q) = %#v, %v; want %#v", tc.typ, tc.raw, got, err, tc.want)
		}
	}
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"", "1", "-1", "true", "a,b", " 1e308 ", "NaN", "9223372036854775808", "\x00", ",,,"} {
		f.Add(s)
	}
	types := []ConfigType{TypeBoolean, TypeString, TypeInt, TypeShort, TypeLong, TypeDouble, TypeList, TypeClass, TypePassword}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, typ := range types {
			v, err := ParseValue(typ, raw)
			if err != nil {
				if v != nil {
					t.Fatalf("ParseValue(%s, %q) = %v with error %v", typ, raw, v, err)
				}
				continue
			}
			// A parsed value formats to text that parses to the same value
			// (passwords excepted: they format hidden).
			if typ == TypePassword {
				if FormatValue(typ, v) != "[hidden]" || v.(Password).Value() != raw {
					t.Fatalf("password %q formats as %q", raw, FormatValue(typ, v))
				}
				continue
			}
			again, err := ParseValue(typ, FormatValue(typ, v))
			if err != nil {
				t.Fatalf("ParseValue(%s, %q) = %#v, whose text %q does not parse: %v", typ, raw, v, FormatValue(typ, v), err)
			}
			if typ == TypeList && len(v.([]string)) == 1 && v.([]string)[0] == "" {
				continue // [""] formats as "", which is the empty list
			}
			if !reflect.DeepEqual(again, v) {
				t.Fatalf("ParseValue(%s, %q) = %#v, but its text %q parses to %#v", typ, raw, v, FormatValue(typ, v), again)
			}
		}
	})
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		typ  ConfigType
		v    any
		want string
	}{
		{TypeInt, int32(5), "5"},
		{TypeLong, int64(-5), "-5"},
		{TypeBoolean, true, "true"},
		{TypeString, "s", "s"},
		{TypeList, []string{"a", "b"}, "a,b"},
		{TypeList, []string{}, ""},
		{TypePassword, Password("secret"), "[hidden]"},
		{TypeString, nil, ""},
		// DOUBLE as Java's Double.toString, as Kafka shows defaults.
		{TypeDouble, 1.0, "1.0"},
		{TypeDouble, 0.5, "0.5"},
		{TypeDouble, 0.0, "0.0"},
		{TypeDouble, -2.0, "-2.0"},
		{TypeDouble, 1234567.0, "1234567.0"},
		{TypeDouble, 1e7, "1.0E7"},
		{TypeDouble, 1.5e20, "1.5E20"},
		{TypeDouble, 0.001, "0.001"},
		{TypeDouble, 0.0001, "1.0E-4"},
		{TypeDouble, math.Inf(1), "Infinity"},
	}
	for _, tc := range cases {
		if got := FormatValue(tc.typ, tc.v); got != tc.want {
			t.Errorf("FormatValue(%s, %#v) = %q, want %q", tc.typ, tc.v, got, tc.want)
		}
	}
	p := Password("secret")
	if fmt.Sprint(p) != "[hidden]" || fmt.Sprintf("%v %s", p, p) != "[hidden] [hidden]" || p.Value() != "secret" {
		t.Error("a password shows itself")
	}
}

func TestDefineNormalizesDefaults(t *testing.T) {
	cases := []struct {
		typ  ConfigType
		def  any
		want any
	}{
		{TypeInt, 5, int32(5)},
		{TypeInt, int64(5), int32(5)},
		{TypeInt, "5", int32(5)},
		{TypeShort, 5, int16(5)},
		{TypeLong, 5, int64(5)},
		{TypeLong, int32(5), int64(5)},
		{TypeDouble, 1, 1.0},
		{TypeDouble, float32(0.5), 0.5},
		{TypeDouble, "0.5", 0.5},
		{TypeBoolean, "true", true},
		{TypeList, "a, b", []string{"a", "b"}},
		{TypeList, []string{"a"}, []string{"a"}},
		{TypePassword, "p", Password("p")},
		{TypeString, " kept as written ", " kept as written "},
		{TypeString, nil, nil},
	}
	for _, tc := range cases {
		d := NewConfigDef().Define(ConfigKey{Name: "k", Type: tc.typ, Default: tc.def})
		k, _ := d.Key("k")
		if !reflect.DeepEqual(k.Default, tc.want) {
			t.Errorf("%s default %#v stored as %#v, want %#v", tc.typ, tc.def, k.Default, tc.want)
		}
		cfg, err := d.Parse(nil)
		if err != nil || !reflect.DeepEqual(cfg.Get("k"), tc.want) {
			t.Errorf("%s default %#v parses to %#v, %v", tc.typ, tc.def, cfg.Get("k"), err)
		}
	}
	// The bug normalizing prevents: a DOUBLE default written as an int
	// read as 0.
	cfg, _ := NewConfigDef().Define(ConfigKey{Name: "ratio", Type: TypeDouble, Default: 2}).Parse(nil)
	if cfg.Float("ratio") != 2 {
		t.Errorf("Float(ratio) = %v", cfg.Float("ratio"))
	}
}

func TestDefinePanics(t *testing.T) {
	cases := []struct {
		name string
		keys []ConfigKey
		want string
	}{
		{"duplicate", []ConfigKey{{Name: "a", Type: TypeString}, {Name: "a", Type: TypeInt}}, "connect: config a is defined twice"},
		{"default out of range", []ConfigKey{{Name: "n", Type: TypeInt, Default: 0, Validator: AtLeast(1)}},
			"connect: invalid default for n: Value must be at least 1"},
		{"default not one of", []ConfigKey{{Name: "s", Type: TypeString, Default: "x", Validator: OneOf{Values: []string{"a"}}}},
			"connect: invalid default for s: String must be one of: a"},
		{"default of another type", []ConfigKey{{Name: "n", Type: TypeInt, Default: true}},
			"connect: invalid default for n: Invalid value true for configuration n: Expected value to be a 32-bit integer, but it was a bool"},
		{"default that does not parse", []ConfigKey{{Name: "n", Type: TypeLong, Default: "many"}},
			"connect: invalid default for n: Invalid value many for configuration n: Not a number of type LONG"},
		{"default too big", []ConfigKey{{Name: "n", Type: TypeShort, Default: 1 << 20}},
			"connect: invalid default for n: Invalid value 1048576 for configuration n: Not a number of type SHORT"},
		{"string default not a string", []ConfigKey{{Name: "s", Type: TypeString, Default: 1}},
			"connect: invalid default for s: Invalid value 1 for configuration s: Expected value to be a string, but it was a int"},
		{"list default not a list", []ConfigKey{{Name: "l", Type: TypeList, Default: 1}},
			"connect: invalid default for l: Invalid value 1 for configuration l: Expected a comma separated list."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("Define did not panic")
				}
				if got := fmt.Sprint(r); got != tc.want {
					t.Fatalf("panic %q\nwant  %q", got, tc.want)
				}
			}()
			d := NewConfigDef()
			for _, k := range tc.keys {
				d.Define(k)
			}
		})
	}
}

func TestDefineFillsIn(t *testing.T) {
	d := NewConfigDef().Define(ConfigKey{Name: "a", Type: TypeString, Default: NoDefault})
	k, ok := d.Key("a")
	if !ok || k.Width != WidthNone || k.DisplayName != "a" || k.Importance != Medium || !k.Required() || k.DefaultString() != nil {
		t.Errorf("key %+v", k)
	}
	if _, ok := d.Key("b"); ok {
		t.Error("Key(b) found")
	}
	d.Define(ConfigKey{Name: "b", Type: TypeList, Default: []string{"x", "y"}, Width: WidthLong, DisplayName: "B", Importance: High})
	k, _ = d.Key("b")
	if k.Width != WidthLong || k.DisplayName != "B" || k.Importance != High || k.Required() || *k.DefaultString() != "x,y" {
		t.Errorf("key %+v", k)
	}
	d.Define(ConfigKey{Name: "c", Type: TypeString})
	if k, _ := d.Key("c"); k.DefaultString() != nil || k.Required() {
		t.Errorf("null default: %+v", k)
	}
	keys := d.Keys()
	keys[0].Name = "changed"
	if names(d.Keys()) != "a,b,c" {
		t.Errorf("Keys() = %s, or shares the definition's slice", names(d.Keys()))
	}
}

func names(keys []ConfigKey) string {
	var out []string
	for _, k := range keys {
		out = append(out, k.Name)
	}
	return strings.Join(out, ",")
}

func TestMerge(t *testing.T) {
	a := NewConfigDef().Define(ConfigKey{Name: "x", Type: TypeString, Documentation: "a's"}).Define(ConfigKey{Name: "y", Type: TypeInt, Default: 1})
	b := NewConfigDef().Define(ConfigKey{Name: "y", Type: TypeString, Documentation: "b's"}).Define(ConfigKey{Name: "z", Type: TypeBoolean, Default: false})
	m := a.Merge(b)
	if names(m.Keys()) != "x,y,z" {
		t.Fatalf("Merge keys %s", names(m.Keys()))
	}
	if k, _ := m.Key("y"); k.Type != TypeInt {
		t.Errorf("Merge kept b's y: %+v", k)
	}
	if names(a.Keys()) != "x,y" || names(b.Keys()) != "y,z" {
		t.Error("Merge changed its inputs")
	}
}

// testDef has a key of every type, with validators.
func testDef() *ConfigDef {
	return NewConfigDef().
		Define(ConfigKey{Name: "topic", Type: TypeString, Default: NoDefault, Validator: NonEmptyString{}}).
		Define(ConfigKey{Name: "tasks", Type: TypeInt, Default: 1, Validator: AtLeast(1)}).
		Define(ConfigKey{Name: "port", Type: TypeShort, Default: 80, Validator: Between(1, 1000)}).
		Define(ConfigKey{Name: "bytes", Type: TypeLong, Default: NoDefault, Validator: AtLeast(0)}).
		Define(ConfigKey{Name: "ratio", Type: TypeDouble, Default: 0.5, Validator: Between(0, 1)}).
		Define(ConfigKey{Name: "enabled", Type: TypeBoolean, Default: true}).
		Define(ConfigKey{Name: "mode", Type: TypeString, Default: "a", Validator: OneOf{Values: []string{"a", "b"}}}).
		Define(ConfigKey{Name: "fields", Type: TypeList, Default: []string{}}).
		Define(ConfigKey{Name: "class", Type: TypeClass, Default: "com.example.X"}).
		Define(ConfigKey{Name: "secret", Type: TypePassword, Default: nil, Validator: ValidatorFunc(func(_ string, v any) error {
			if p, ok := v.(Password); ok && len(p.Value()) < 4 {
				return fmt.Errorf("Password must have at least 4 characters")
			}
			return nil
		})}).
		Define(ConfigKey{Name: "pattern", Type: TypeString, Default: ".*", Validator: ValidRegexp{}})
}

func TestParse(t *testing.T) {
	props := map[string]string{"topic": "t", "bytes": "10", "ratio": "0.25", "enabled": "false", "fields": "a, b", "secret": "hunter2", "unknown.key": "kept"}
	cfg, err := testDef().Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"topic", cfg.String("topic"), "t"},
		{"tasks default", cfg.Int("tasks"), int64(1)},
		{"tasks default type", cfg.Get("tasks"), int32(1)},
		{"port default", cfg.Int("port"), int64(80)},
		{"bytes", cfg.Int("bytes"), int64(10)},
		{"ratio", cfg.Float("ratio"), 0.25},
		{"enabled", cfg.Bool("enabled"), false},
		{"mode default", cfg.String("mode"), "a"},
		{"fields", cfg.List("fields"), []string{"a", "b"}},
		{"class", cfg.String("class"), "com.example.X"},
		{"secret", cfg.Password("secret"), "hunter2"},
		{"undefined", cfg.Get("unknown.key"), nil},
		{"raw", cfg.Raw()["unknown.key"], "kept"},
		{"wrong accessor", cfg.Int("topic"), int64(0)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	base := map[string]string{"topic": "t", "bytes": "10"}
	cases := []struct {
		name string
		set  map[string]string
		drop string
		want string
	}{
		{"missing required", nil, "topic", `Missing required configuration "topic" which has no default value.`},
		{"empty string", map[string]string{"topic": ""}, "", "Invalid value  for configuration topic: String must be non-empty"},
		{"not an int", map[string]string{"tasks": "two"}, "", "Invalid value two for configuration tasks: Not a number of type INT"},
		{"below the range", map[string]string{"tasks": "0"}, "", "Invalid value 0 for configuration tasks: Value must be at least 1"},
		{"value shown parsed", map[string]string{"tasks": " 0 "}, "", "Invalid value 0 for configuration tasks: Value must be at least 1"},
		{"above the range", map[string]string{"port": "1001"}, "", "Invalid value 1001 for configuration port: Value must be no more than 1000"},
		{"short overflow", map[string]string{"port": "70000"}, "", "Invalid value 70000 for configuration port: Not a number of type SHORT"},
		{"negative long", map[string]string{"bytes": "-1"}, "", "Invalid value -1 for configuration bytes: Value must be at least 0"},
		{"double range", map[string]string{"ratio": "1.5"}, "", "Invalid value 1.5 for configuration ratio: Value must be no more than 1"},
		{"double shown as Java", map[string]string{"ratio": "2"}, "", "Invalid value 2.0 for configuration ratio: Value must be no more than 1"},
		{"not a double", map[string]string{"ratio": "half"}, "", "Invalid value half for configuration ratio: Not a number of type DOUBLE"},
		{"not a boolean", map[string]string{"enabled": "yes"}, "", "Invalid value yes for configuration enabled: Expected value to be either true or false"},
		{"not one of", map[string]string{"mode": "c"}, "", "Invalid value c for configuration mode: String must be one of: a, b"},
		{"one of is case sensitive", map[string]string{"mode": "A"}, "", "Invalid value A for configuration mode: String must be one of: a, b"},
		{"bad regexp", map[string]string{"pattern": "("}, "", "Invalid value ( for configuration pattern: not a valid regular expression: error parsing regexp: missing closing ): `(`"},
		{"password hidden", map[string]string{"secret": "abc"}, "", "Invalid value [hidden] for configuration secret: Password must have at least 4 characters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			props := map[string]string{}
			for k, v := range base {
				props[k] = v
			}
			for k, v := range tc.set {
				props[k] = v
			}
			delete(props, tc.drop)
			_, err := testDef().Parse(props)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Parse error = %v\nwant %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "abc") {
				t.Fatalf("the error shows the password: %v", err)
			}
		})
	}
}

func TestConfigDefValidate(t *testing.T) {
	props := map[string]string{"tasks": "x", "port": "0", "ratio": "0.75", "mode": "c", "secret": "hunter2", "extra": "ignored"}
	got := testDef().Validate(props)
	want := []ConfigValue{
		{Name: "topic", Errors: []string{`Missing required configuration "topic" which has no default value.`}},
		// A value that does not parse leaves null, which the validator sees
		// too: Kafka's ConfigDef.validate adds its message as well.
		{Name: "tasks", Value: "x", Errors: []string{
			"Invalid value x for configuration tasks: Not a number of type INT",
			"Invalid value null for configuration tasks: Value must be non-null"}},
		{Name: "port", Value: "0", Errors: []string{"Invalid value 0 for configuration port: Value must be at least 1"}},
		{Name: "bytes", Errors: []string{`Missing required configuration "bytes" which has no default value.`}},
		{Name: "ratio", Value: "0.75"},
		{Name: "enabled", Value: "true"},
		{Name: "mode", Value: "c", Errors: []string{"Invalid value c for configuration mode: String must be one of: a, b"}},
		{Name: "fields", Value: ""},
		{Name: "class", Value: "com.example.X"},
		{Name: "secret", Value: Password("hunter2")}, // formats as [hidden]
		{Name: "pattern", Value: ".*"},
	}
	for i := range want {
		want[i].Visible = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Validate:\n got %+v\nwant %+v", got, want)
	}
	// A parse failure without a validator, or with one that accepts null,
	// gives one message.
	got = NewConfigDef().
		Define(ConfigKey{Name: "n", Type: TypeInt, Default: 1}).
		Define(ConfigKey{Name: "s", Type: TypeList, Default: "", Validator: ValidatorFunc(func(string, any) error { return nil })}).
		Define(ConfigKey{Name: "b", Type: TypeBoolean, Default: false, Validator: NonEmptyString{}}).
		Validate(map[string]string{"n": "x", "b": "maybe"})
	if len(got[0].Errors) != 1 || len(got[1].Errors) != 0 || len(got[2].Errors) != 1 {
		t.Errorf("Validate: %+v", got)
	}
}

func TestValidateRecommended(t *testing.T) {
	got := NewConfigDef().Define(ConfigKey{Name: "m", Type: TypeString, Default: "a", Recommended: []string{"a", "b"}}).Validate(nil)
	if !reflect.DeepEqual(got[0].RecommendedValues, []string{"a", "b"}) {
		t.Errorf("recommended %v", got[0].RecommendedValues)
	}
}

func TestValidators(t *testing.T) {
	cases := []struct {
		name string
		v    Validator
		in   any
		want string
	}{
		{"range int16", Between(1, 3), int16(2), ""},
		{"range int32", Between(1, 3), int32(3), ""},
		{"range int64", Between(1, 3), int64(1), ""},
		{"range int", Between(1, 3), 2, ""},
		{"range float", Between(0, 1), 0.5, ""},
		{"range low", Between(1, 3), int32(0), "Value must be at least 1"},
		{"range high", Between(1, 3), int64(4), "Value must be no more than 3"},
		{"range fractional bound", AtLeast(0.5), 0.25, "Value must be at least 0.5"},
		{"range open above", AtLeast(1), int64(math.MaxInt64), ""},
		{"range open both", Range{}, -1e300, ""},
		{"range null", AtLeast(1), nil, "Value must be non-null"},
		{"range string", AtLeast(1), "2", "Value must be a number"},
		{"one of", OneOf{Values: []string{"a", "b"}}, "b", ""},
		{"one of miss", OneOf{Values: []string{"a", "b"}}, "c", "String must be one of: a, b"},
		{"one of null", OneOf{Values: []string{"a"}}, nil, "String must be one of: a"},
		{"one of case", OneOf{Values: []string{"a"}}, "A", "String must be one of: a"},
		{"one of case insensitive", OneOf{Values: []string{"a"}, CaseInsensitive: true}, "A", ""},
		{"non-empty", NonEmptyString{}, "x", ""},
		{"non-empty empty", NonEmptyString{}, "", "String must be non-empty"},
		{"non-empty null", NonEmptyString{}, nil, ""},
		{"regexp", ValidRegexp{}, "^a+$", ""},
		{"regexp bad", ValidRegexp{}, "a[", "not a valid regular expression: error parsing regexp: missing closing ]: `[`"},
		{"func", ValidatorFunc(func(name string, v any) error { return fmt.Errorf("%s=%v", name, v) }), 1, "k=1"},
	}
	for _, tc := range cases {
		err := tc.v.Validate("k", tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: Validate(%#v) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestConfigAccessors(t *testing.T) {
	var c Config
	if c.String("x") != "" || c.Int("x") != 0 || c.Bool("x") || c.Float("x") != 0 || c.List("x") != nil || c.Password("x") != "" || c.Get("x") != nil {
		t.Error("the zero Config answers")
	}
	cfg, err := NewConfigDef().
		Define(ConfigKey{Name: "s", Type: TypeShort, Default: 3}).
		Define(ConfigKey{Name: "n", Type: TypeString}).
		Parse(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Int("s") != 3 || cfg.String("n") != "" || cfg.Get("n") != nil {
		t.Errorf("cfg %+v", cfg)
	}
}
