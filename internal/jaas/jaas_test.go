package jaas

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// secretValue is put where a password goes in failing configs: no error may
// repeat it.
const secretValue = "s3cr3t-Value"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want Config
	}{{
		name: "kafka's PLAIN example",
		in:   `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`,
		want: Config{LoginModule: PlainLoginModule, ControlFlag: "required", Options: map[string]string{
			"username": "admin", "password": "admin-secret", "user_admin": "admin-secret", "user_alice": "alice-secret"}},
	}, {
		name: "unquoted values, flag in any case, lines and tabs",
		in:   "m.Login  REQUISITE\n\tkey=value\r\n  n=42 ;",
		want: Config{LoginModule: "m.Login", ControlFlag: "requisite", Options: map[string]string{"key": "value", "n": "42"}},
	}, {
		name: "single quotes and the other quote inside",
		in:   `m.L sufficient a='say "hi"' b="it's";`,
		want: Config{LoginModule: "m.L", ControlFlag: "sufficient", Options: map[string]string{"a": `say "hi"`, "b": "it's"}},
	}, {
		name: "java escapes",
		in:   `m.L optional a="q\"b\\s\n\t\101\60\4011" b="\x\;";`,
		want: Config{LoginModule: "m.L", ControlFlag: "optional", Options: map[string]string{"a": "q\"b\\s\n\tA0 11", "b": "x;"}},
	}, {
		name: "semicolon, equals and spaces inside quotes",
		in:   `m.L required a="x=y; z";`,
		want: Config{LoginModule: "m.L", ControlFlag: "required", Options: map[string]string{"a": "x=y; z"}},
	}, {
		name: "comments",
		in:   "/* head */ m.L required // to the end\n a=b /* mid */ c=\"d\"; // tail",
		want: Config{LoginModule: "m.L", ControlFlag: "required", Options: map[string]string{"a": "b", "c": "d"}},
	}, {
		name: "a lone slash comments out the rest of the line",
		in:   "m.L required q=\"/etc/y\" p=x/etc\n ;",
		want: Config{LoginModule: "m.L", ControlFlag: "required", Options: map[string]string{"q": "/etc/y", "p": "x"}},
	}, {
		name: "no options, last of a repeated key wins, empty quoted value",
		in:   `m.L required a=1 a=2 e="";`,
		want: Config{LoginModule: "m.L", ControlFlag: "required", Options: map[string]string{"a": "2", "e": ""}},
	}, {
		name: "unicode",
		in:   `m.L required user_jürgen="pässwörd";`,
		want: Config{LoginModule: "m.L", ControlFlag: "required", Options: map[string]string{"user_jürgen": "pässwörd"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	s := secretValue
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "  // nothing\n", "login module not specified"},
		{"no control flag", "m.L", "control flag not specified"},
		{"bad control flag", `m.L requird password="` + s + `";`, `invalid login module control flag "requird"`},
		{"option where the flag goes", `m.L password="` + s + `";`, "invalid login module control flag"},
		{"quoted flag", `m.L "` + s + `";`, "expected a login module control flag, got a quoted string"},
		{"no semicolon", `m.L required password="` + s + `"`, "not terminated by a semicolon"},
		{"no value", `m.L required password=;`, `value not specified for key "password"`},
		{"no equals", `m.L required password "` + s + `";`, `value not specified for key "password"`},
		{"equals for a name", `m.L required ="` + s + `";`, "expected an option name"},
		{"unterminated quote", `m.L required password="` + s + `;`, "quoted string not closed"},
		{"quote across lines", "m.L required password=\"" + s + "\n\";", "before the end of the line"},
		{"module is punctuation", `; m.L required;`, "expected a login module class"},
		{"two modules", `a.L required; b.L optional password="` + s + `";`, "contains 2 login modules"},
		{"trailing backslash", `m.L required password="` + s + `\`, "quoted string not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tc.in)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), s) {
				t.Errorf("error %q repeats the secret", err)
			}
		})
	}
}

func TestConfigHidesValues(t *testing.T) {
	j, err := Parse(`m.L required username="admin" password="` + secretValue + `";`)
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, j)
		if strings.Contains(out, secretValue) || strings.Contains(out, "admin\"") {
			t.Errorf("%s printed a value: %s", verb, out)
		}
	}
	if got, want := j.String(), "m.L required password=[hidden] username=[hidden];"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
