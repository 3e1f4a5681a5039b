package schema

// protobufDiffCases are the schema pairs of Confluent's protobuf
// SchemaDiffTest (protobuf-provider/src/test/resources/
// diff-schema-examples.json and diff-schema-examples-with-meta.json),
// with the differences it expects, written out as our own table. A
// reference whose text Confluent's test leaves to its built-ins
// (confluent/meta.proto ...) is no reference here: Samsa resolves those
// imports itself. Confluent lists the differences of messages and enums
// in HashMap order; the test compares them as sorted lists.

type protobufDiffRef struct {
	name, subject string
	version       int
	schema        string
}

type protobufDiffCase struct {
	name             string
	original, update string
	originalRefs     []protobufDiffRef
	updateRefs       []protobufDiffRef
	changes          []string
	compatible       bool
}

var protobufDiffCases = []protobufDiffCase{
	{
		name: `Allow addition of un-reserved property`,
		original: `syntax = "proto3";
package foo;
message TestMessage {
    string test_string = 1;
    .foo.TestMessage.Status test_int = 2;
    message Status {
    string test_string = 1;
    }
}`,
		update: `syntax = "proto3";
package foo;

message TestMessage {
  string test_string = 1;
  .foo.TestMessage.Status test_int = 2;
  float test_float = 3;

  message Status {
    string test_string = 1;
  }
}
`,
		changes:    []string{`FIELD_ADDED #/TestMessage/3`},
		compatible: true,
	},
	{
		name: `Detect package change`,
		original: `syntax = "proto3";
package foo;
message TestMessage {
    string test_string = 1;
    .foo.TestMessage.Status test_int = 2;
    message Status {
    string test_string = 1;
    }
}`,
		update: `syntax = "proto3";
package bar;
message TestMessage {
    string test_string = 1;
    .bar.TestMessage.Status test_int = 2;
    message Status {
    string test_string = 1;
    }
}`,
		changes:    []string{`PACKAGE_CHANGED #/`},
		compatible: false,
	},
	{
		name: `Detect change to name qualification`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    Status test_int = 2;
    message Status {
    string test_string = 1;
    }
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    .TestMessage.Status test_int = 2;
    message Status {
    string test_string = 1;
    }
}`,
		changes:    []string{},
		compatible: true,
	},
	{
		name: `Detect change to name qualification with package`,
		original: `syntax = "proto3";
package foo;
message TestMessage {
    string test_string = 1;
    Status test_int = 2;
    message Status {
    string test_string = 1;
    }
}`,
		update: `syntax = "proto3";
package foo;
message TestMessage {
    string test_string = 1;
    .foo.TestMessage.Status test_int = 2;
    message Status {
    string test_string = 1;
    }
}`,
		changes:    []string{},
		compatible: true,
	},
	{
		name: `Detect added field`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    string test_string2 = 2;
}`,
		changes:    []string{`FIELD_ADDED #/TestMessage/2`},
		compatible: true,
	},
	{
		name: `Detect added required field`,
		original: `syntax = "proto2";
message TestMessage {
    optional string test_string = 1;
}`,
		update: `syntax = "proto2";
message TestMessage {
    optional string test_string = 1;
    required string test_string2 = 2;
}`,
		changes:    []string{`REQUIRED_FIELD_ADDED #/TestMessage/2`},
		compatible: false,
	},
	{
		name: `Detect added field to nested type`,
		original: `syntax = "proto3";
message Wrapper {
    int32 wrapperInt = 1;
    message TestMessage {
    string test_string = 1;
}
}`,
		update: `syntax = "proto3";
message Wrapper {
    int32 wrapperInt = 1;
    message TestMessage {
    string test_string = 1;
    string test_string2 = 2;
}
}`,
		changes:    []string{`FIELD_ADDED #/Wrapper/TestMessage/2`},
		compatible: true,
	},
	{
		name: `Detect removed field`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    string test_string2 = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
}
`,
		changes:    []string{`FIELD_REMOVED #/TestMessage/2`},
		compatible: true,
	},
	{
		name: `Detect removed required field`,
		original: `syntax = "proto2";
message TestMessage {
    optional string test_string = 1;
    required string test_string2 = 2;
}`,
		update: `syntax = "proto2";
message TestMessage {
    optional string test_string = 1;
}
`,
		changes:    []string{`REQUIRED_FIELD_REMOVED #/TestMessage/2`},
		compatible: false,
	},
	{
		name: `Detect changed field number`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 2;
}`,
		changes:    []string{`FIELD_REMOVED #/TestMessage/1`, `FIELD_ADDED #/TestMessage/2`},
		compatible: true,
	},
	{
		name: `Detect compatible field number type change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    int32 test_int = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    int64 test_int = 2;
}`,
		changes:    []string{},
		compatible: true,
	},
	{
		name: `Detect compatible field string type change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    string test_string2 = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    bytes test_string2 = 2;
}`,
		changes:    []string{},
		compatible: true,
	},
	{
		name: `Detect field number type to enum change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    int32 test_int = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    Status test_int = 2;
}
enum Status {
    ACTIVE = 0;
    INACTIVE = 1;
}`,
		changes:    []string{`ENUM_ADDED #/Status`},
		compatible: true,
	},
	{
		name: `Detect enum type to field number change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    Status test_int = 2;
}
enum Status {
    ACTIVE = 0;
    INACTIVE = 1;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    int32 test_int = 2;
}`,
		changes:    []string{`ENUM_REMOVED #/Status`},
		compatible: true,
	},
	{
		name: `Detect field number type to message with same name as enum`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    int32 test_int = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    .TestMessage.Status test_int = 2;
    message Status {
    string test_string = 1;
    }
}
enum Status {
    ACTIVE = 0;
    INACTIVE = 1;
}`,
		changes:    []string{`FIELD_KIND_CHANGED #/TestMessage/2`, `MESSAGE_ADDED #/TestMessage/Status`, `ENUM_ADDED #/Status`},
		compatible: false,
	},
	{
		name: `Detect message with same name as enum to field number change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    .TestMessage.Status test_int = 2;
    message Status {
    string test_string = 1;
    }
}
enum Status {
    ACTIVE = 0;
    INACTIVE = 1;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    int32 test_int = 2;
}`,
		changes:    []string{`FIELD_KIND_CHANGED #/TestMessage/2`, `MESSAGE_REMOVED #/TestMessage/Status`, `ENUM_REMOVED #/Status`},
		compatible: false,
	},
	{
		name: `Detect enum const change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    Status test_int = 2;
}
enum Status {
    ACTIVE = 0;
    INACTIVE = 1;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    Status test_int = 2;
}
enum Status {
    ACTIVE = 0;
    NOT_ACTIVE = 1;
}`,
		changes:    []string{`ENUM_CONST_CHANGED #/Status/1`},
		compatible: true,
	},
	{
		name: `Detect compatible field to oneof change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    string test_string2 = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    oneof new_oneof {
        string test_string2 = 2;
        int32 other_id = 3;
}
}`,
		changes:    []string{`ONEOF_ADDED #/TestMessage/new_oneof`, `ONEOF_FIELD_ADDED #/TestMessage/new_oneof/3`},
		compatible: true,
	},
	{
		name: `Detect incompatible field to oneof change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    string test_string2 = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    oneof new_oneof {
    string test_string = 1;
    string test_string2 = 2;
        int32 other_id = 3;
}
}`,
		changes:    []string{`MULTIPLE_FIELDS_MOVED_TO_ONEOF #/TestMessage/new_oneof`, `ONEOF_ADDED #/TestMessage/new_oneof`, `ONEOF_FIELD_ADDED #/TestMessage/new_oneof/3`},
		compatible: false,
	},
	{
		name: `Detect compatible add field to oneof`,
		original: `syntax = "proto3";
message TestMessage {
    oneof new_oneof {
    string test_string = 1;
    string test_string2 = 2;
}
}`,
		update: `syntax = "proto3";
message TestMessage {
    oneof new_oneof {
    string test_string = 1;
    string test_string2 = 2;
        int32 other_id = 3;
}
}`,
		changes:    []string{`ONEOF_FIELD_ADDED #/TestMessage/new_oneof/3`},
		compatible: true,
	},
	{
		name: `Detect incompatible remove field from oneof`,
		original: `syntax = "proto3";
message TestMessage {
    oneof new_oneof {
    string test_string = 1;
    string test_string2 = 2;
        int32 other_id = 3;
}
}`,
		update: `syntax = "proto3";
message TestMessage {
    oneof new_oneof {
    string test_string = 1;
    string test_string2 = 2;
}
}`,
		changes:    []string{`ONEOF_FIELD_REMOVED #/TestMessage/new_oneof/3`},
		compatible: false,
	},
	{
		name: `Detect compatible move field to oneof`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    string test_string2 = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    oneof new_oneof {
    string test_string2 = 2;
}
}`,
		changes:    []string{`ONEOF_ADDED #/TestMessage/new_oneof`},
		compatible: true,
	},
	{
		name: `Detect incompatible move field to oneof`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    oneof new_oneof {
    string test_string2 = 2;
    string test_string3 = 3;
}
}`,
		update: `syntax = "proto3";
message TestMessage {
    oneof new_oneof {
    string test_string = 1;
    string test_string2 = 2;
    string test_string3 = 3;
}
}`,
		changes:    []string{`FIELD_MOVED_TO_EXISTING_ONEOF #/TestMessage/new_oneof`},
		compatible: false,
	},
	{
		name: `Detect incompatible move field to renamed oneof`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    oneof new_oneof {
    string test_string2 = 2;
    string test_string3 = 3;
}
}`,
		update: `syntax = "proto3";
message TestMessage {
    oneof new_oneof_2 {
    string test_string = 1;
    string test_string2 = 2;
    string test_string3 = 3;
}
}`,
		changes:    []string{`FIELD_MOVED_TO_EXISTING_ONEOF #/TestMessage/new_oneof_2`, `ONEOF_REMOVED #/TestMessage/new_oneof`, `ONEOF_ADDED #/TestMessage/new_oneof_2`},
		compatible: false,
	},
	{
		name: `Detect incompatible field type change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    int32 test_int = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    TestMessage2 test_int = 2;
}
message TestMessage2 {
    string s1 = 1;
}`,
		changes:    []string{`MESSAGE_ADDED #/TestMessage2`, `FIELD_KIND_CHANGED #/TestMessage/2`},
		compatible: false,
	},
	{
		name: `Detect incompatible field type change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    int32 test_int = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    string test_string2 = 2;
}`,
		changes:    []string{`FIELD_NAME_CHANGED #/TestMessage/2`, `FIELD_SCALAR_KIND_CHANGED #/TestMessage/2`},
		compatible: false,
	},
	{
		name: `Detect incompatible field type change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    TestMessage2 test_int = 2;
}
message TestMessage2 {
    string s1 = 1;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    TestMessage3 test_int = 2;
}
message TestMessage3 {
    string s1 = 1;
}`,
		changes:    []string{`MESSAGE_REMOVED #/TestMessage2`, `MESSAGE_ADDED #/TestMessage3`, `FIELD_NAMED_TYPE_CHANGED #/TestMessage/2`},
		compatible: false,
	},
	{
		name: `Detect incompatible field type change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    map<string, int32> test_map_int = 2;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    map<string, string> test_map_string = 2;
}`,
		changes:    []string{`FIELD_NAME_CHANGED #/TestMessage/2`, `FIELD_SCALAR_KIND_CHANGED #/TestMessage/2`},
		compatible: false,
	},
	{
		name: `Detect compatible name qualification in map`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    map<string, Status> test_map = 2;
    message Status {
    string test_string = 1;
    }
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    map<string, TestMessage.Status> test_map = 2;
    message Status {
    string test_string = 1;
    }
}`,
		changes:    []string{},
		compatible: true,
	},
	{
		name: `Detect compatible field label change for message`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    optional Status test_status = 2;
    message Status {
    string test_string = 1;
    }
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
    repeated Status test_status = 2;
    message Status {
    string test_string = 1;
    }
}`,
		changes:    []string{},
		compatible: true,
	},
	{
		name: `Detect compatible field label change for string`,
		original: `syntax = "proto3";
message TestMessage {
    optional string test_string = 1;
    Status test_status = 2;
    message Status {
    string test_string = 1;
    }
}`,
		update: `syntax = "proto3";
message TestMessage {
    repeated string test_string = 1;
    Status test_status = 2;
    message Status {
    string test_string = 1;
    }
}`,
		changes:    []string{`FIELD_STRING_OR_BYTES_LABEL_CHANGED #/TestMessage/1`},
		compatible: true,
	},
	{
		name: `Detect compatible field label change for bytes`,
		original: `syntax = "proto3";
message TestMessage {
    optional bytes test_bytes = 1;
    Status test_status = 2;
    message Status {
    string test_string = 1;
    }
}`,
		update: `syntax = "proto3";
message TestMessage {
    repeated bytes test_bytes = 1;
    Status test_status = 2;
    message Status {
    string test_string = 1;
    }
}`,
		changes:    []string{`FIELD_STRING_OR_BYTES_LABEL_CHANGED #/TestMessage/1`},
		compatible: true,
	},
	{
		name: `Detect incompatible field label change for number`,
		original: `syntax = "proto3";
message TestMessage {
    optional int32 test_int = 1;
    Status test_status = 2;
    message Status {
    string test_string = 1;
    }
}`,
		update: `syntax = "proto3";
message TestMessage {
    repeated int32 test_int = 1;
    Status test_status = 2;
    message Status {
    string test_string = 1;
    }
}`,
		changes:    []string{`FIELD_NUMERIC_LABEL_CHANGED #/TestMessage/1`},
		compatible: false,
	},
	{
		name: `Detect compatible message addition`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
}`,
		update: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
}
message TestMessage2 {
    string test_string = 1;
}`,
		changes:    []string{`MESSAGE_ADDED #/TestMessage2`},
		compatible: true,
	},
	{
		name: `Detect compatible message index change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
}`,
		update: `syntax = "proto3";
message TestMessage2 {
    string test_string = 1;
}
message TestMessage {
    string test_string = 1;
}`,
		changes:    []string{`MESSAGE_ADDED #/TestMessage2`, `MESSAGE_MOVED #/TestMessage`},
		compatible: true,
	},
	{
		name: `Detect compatible message index change`,
		original: `syntax = "proto3";
message TestMessage {
    string test_string = 1;
}
message TestMessage2 {
    string test_string = 1;
}`,
		update: `syntax = "proto3";
message TestMessage2 {
    string test_string = 1;
}
message TestMessage {
    string test_string = 1;
}`,
		changes:    []string{`MESSAGE_MOVED #/TestMessage2`, `MESSAGE_MOVED #/TestMessage`},
		compatible: true,
	},
	{
		name: `Detect incompatible import change`,
		original: `syntax = "proto3";
import "google.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain.GoogleHome test_string = 1;
    }`,
		update: `syntax = "proto3";
import "google2.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain.GoogleHome test_string = 1;
    }`,
		originalRefs: []protobufDiffRef{
			{name: `google.proto`, subject: `google.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain;

option java_outer_classname = "GoogleImpl";

message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}`},
		},
		updateRefs: []protobufDiffRef{
			{name: `google2.proto`, subject: `google2.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain;

option java_outer_classname = "GoogleImpl2";

message GoogleHome {
  string deviceID = 1;
  bool enabled = 2;
}`},
		},
		changes:    []string{`FIELD_SCALAR_KIND_CHANGED #/GoogleHome/1`, `FIELD_NAMED_TYPE_CHANGED #/TestMessage/1`},
		compatible: false,
	},
	{
		name: `Detect moving to import`,
		original: `syntax = "proto3";
message TestMessage {
    GoogleHome test_string = 1;
    }
message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}`,
		update: `syntax = "proto3";
import "google.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain.GoogleHome test_string = 1;
    }`,
		updateRefs: []protobufDiffRef{
			{name: `google.proto`, subject: `google.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain;

option java_outer_classname = "GoogleImpl";

message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}`},
		},
		changes:    []string{`MESSAGE_REMOVED #/GoogleHome`},
		compatible: false,
	},
	{
		name: `Detect moving from import`,
		original: `syntax = "proto3";
import "google.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain.GoogleHome test_string = 1;
    }`,
		update: `syntax = "proto3";
message TestMessage {
    GoogleHome test_string = 1;
    }
message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}`,
		originalRefs: []protobufDiffRef{
			{name: `google.proto`, subject: `google.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain;

option java_outer_classname = "GoogleImpl";

message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}`},
		},
		changes:    []string{`MESSAGE_ADDED #/GoogleHome`},
		compatible: true,
	},
	{
		name: `Detect import change with different remote package name`,
		original: `syntax = "proto3";
import "google.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain.GoogleHome test_string = 1;
    }`,
		update: `syntax = "proto3";
import "google2.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain2.GoogleHome test_string = 1;
    }`,
		originalRefs: []protobufDiffRef{
			{name: `google.proto`, subject: `google.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain;

option java_outer_classname = "GoogleImpl";

message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}`},
		},
		updateRefs: []protobufDiffRef{
			{name: `google2.proto`, subject: `google2.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain2;

option java_outer_classname = "GoogleImpl2";

message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}`},
		},
		changes:    []string{},
		compatible: true,
	},
	{
		name: `Detect import change with different remote package nested name`,
		original: `syntax = "proto3";
import "google.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain.outer.GoogleHome test_string = 1;
    }`,
		update: `syntax = "proto3";
import "google2.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain2.outer.GoogleHome test_string = 1;
    }`,
		originalRefs: []protobufDiffRef{
			{name: `google.proto`, subject: `google.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain;

option java_outer_classname = "GoogleImpl";

message outer {
  message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}
}`},
		},
		updateRefs: []protobufDiffRef{
			{name: `google2.proto`, subject: `google2.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain2;

option java_outer_classname = "GoogleImpl2";

message outer {
  message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}
}`},
		},
		changes:    []string{},
		compatible: true,
	},
	{
		name: `Detect incompatible import change with different remote package nested name`,
		original: `syntax = "proto3";
import "google.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain.outer.GoogleHome test_string = 1;
    }`,
		update: `syntax = "proto3";
import "google2.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain2.outer.GoogleHome test_string = 1;
    }`,
		originalRefs: []protobufDiffRef{
			{name: `google.proto`, subject: `google.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain;

option java_outer_classname = "GoogleImpl";

message outer {
  message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}
}`},
		},
		updateRefs: []protobufDiffRef{
			{name: `google2.proto`, subject: `google2.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain2;

option java_outer_classname = "GoogleImpl2";

message outer {
  message GoogleHome {
  string deviceID = 1;
  bool enabled = 2;
}
}`},
		},
		changes:    []string{`FIELD_SCALAR_KIND_CHANGED #/outer/GoogleHome/1`, `FIELD_NAMED_TYPE_CHANGED #/TestMessage/1`},
		compatible: false,
	},
	{
		name: `Detect incompatible import change with same subject, different version`,
		original: `syntax = "proto3";
import "google.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain.outer.GoogleHome test_string = 1;
    }`,
		update: `syntax = "proto3";
import "google.proto";
message TestMessage {
    .io.confluent.cloud.demo.domain2.outer.GoogleHome test_string = 1;
    }`,
		originalRefs: []protobufDiffRef{
			{name: `google.proto`, subject: `google.proto`, version: 1, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain;

option java_outer_classname = "GoogleImpl";

message outer {
  message GoogleHome {
  int32 deviceID = 1;
  bool enabled = 2;
}
}`},
		},
		updateRefs: []protobufDiffRef{
			{name: `google.proto`, subject: `google.proto`, version: 3, schema: `syntax = "proto3";

package io.confluent.cloud.demo.domain2;

option java_outer_classname = "GoogleImpl2";

message outer {
  message GoogleHome {
  string deviceID = 1;
  bool enabled = 2;
}
}`},
		},
		changes:    []string{`FIELD_SCALAR_KIND_CHANGED #/outer/GoogleHome/1`, `FIELD_NAMED_TYPE_CHANGED #/TestMessage/1`},
		compatible: false,
	},
	{
		name: `Detect incompatible field type change when enclosing oneof is renamed`,
		original: `syntax = "proto3";
message Message {
  oneof oldOneOf {
    float field_float = 1;
    int32 field_with_incompatible_type_change = 2;
  }
}
`,
		update: `syntax = "proto3";
message Message {
  oneof renamedOneOf {
    float field_float = 1;
    string field_with_incompatible_type_change = 2;
  }
}
`,
		changes:    []string{`ONEOF_REMOVED #/Message/oldOneOf`, `ONEOF_ADDED #/Message/renamedOneOf`, `FIELD_SCALAR_KIND_CHANGED #/Message/renamedOneOf/2`},
		compatible: false,
	},
	{
		name: `Detect incompatible field type change when field is moved out of a removed oneof`,
		original: `syntax = "proto3";
message Message {
  oneof oldOneOf {
    float field_float = 1;
    int32 field_with_incompatible_type_change = 2;
  }
}
`,
		update: `syntax = "proto3";
message Message {
  float field_float = 1;
  sint64 field_with_incompatible_type_change = 2;
}
`,
		changes:    []string{`ONEOF_REMOVED #/Message/oldOneOf`, `ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/Message/1`, `ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/Message/2`, `FIELD_SCALAR_KIND_CHANGED #/Message/2`},
		compatible: false,
	},
	{
		name: `Detect incompatible field type change when field is moved into a new oneof`,
		original: `syntax = "proto3";
message Message {
  float field_float = 1;
  int32 field_with_incompatible_type_change = 2;
}
`,
		update: `syntax = "proto3";
message Message {
  float field_float = 1;
  oneof newOneOf {
    sint64 field_with_incompatible_type_change = 2;
  }
}
`,
		changes:    []string{`ONEOF_ADDED #/Message/newOneOf`, `FIELD_SCALAR_KIND_CHANGED #/Message/newOneOf/2`},
		compatible: false,
	},
	{
		name: `Detect compatible oneof rename with identical fields`,
		original: `syntax = "proto3";
message Message {
  oneof oldOneOf {
    float field_float = 1;
    int32 field_int = 2;
  }
}
`,
		update: `syntax = "proto3";
message Message {
  oneof renamedOneOf {
    float field_float = 1;
    int32 field_int = 2;
  }
}
`,
		changes:    []string{`ONEOF_REMOVED #/Message/oldOneOf`, `ONEOF_ADDED #/Message/renamedOneOf`},
		compatible: true,
	},
	{
		name: `Detect incompatible field move between two differently-named oneofs`,
		original: `syntax = "proto3";
message Message {
  oneof oneof_a {
    int32 field_1 = 1;
    int32 field_2 = 2;
  }
  oneof oneof_b {
    int32 field_3 = 3;
  }
}
`,
		update: `syntax = "proto3";
message Message {
  oneof oneof_a {
    int32 field_1 = 1;
  }
  oneof oneof_b {
    int32 field_3 = 3;
    int32 field_2 = 2;
  }
}
`,
		changes:    []string{`FIELD_MOVED_TO_EXISTING_ONEOF #/Message/oneof_b`},
		compatible: false,
	},
	{
		name: `Detect incompatible move of a field from a deleted oneof into an existing oneof`,
		original: `syntax = "proto3";
message Message {
  oneof oneof_a { int32 field_a = 1; }
  oneof oneof_b { int32 field_b = 3; }
}
`,
		update: `syntax = "proto3";
message Message {
  oneof oneof_b { int32 field_b = 3; int32 field_a = 1; }
}
`,
		changes:    []string{`FIELD_MOVED_TO_EXISTING_ONEOF #/Message/oneof_b`, `ONEOF_REMOVED #/Message/oneof_a`},
		compatible: false,
	},
	{
		name: `Detect incompatible merge of two oneofs into a new oneof`,
		original: `syntax = "proto3";
message Message {
  oneof oneof_a { int32 field_a = 1; }
  oneof oneof_b { int32 field_b = 2; }
}
`,
		update: `syntax = "proto3";
message Message {
  oneof oneof_c { int32 field_a = 1; int32 field_b = 2; }
}
`,
		changes:    []string{`FIELD_MOVED_TO_EXISTING_ONEOF #/Message/oneof_c`, `ONEOF_REMOVED #/Message/oneof_a`, `ONEOF_REMOVED #/Message/oneof_b`, `ONEOF_ADDED #/Message/oneof_c`},
		compatible: false,
	},
	{
		name: `Detect compatible move of a single field into a new singleton oneof from a surviving oneof`,
		original: `syntax = "proto3";
message Message {
  oneof oneof_a { int32 field_a = 1; int32 field_b = 2; }
}
`,
		update: `syntax = "proto3";
message Message {
  oneof oneof_a { int32 field_b = 2; }
  oneof oneof_b { int32 field_a = 1; }
}
`,
		changes:    []string{`ONEOF_ADDED #/Message/oneof_b`},
		compatible: true,
	},
	{
		name: `Detect incompatible drop of a oneof member while renaming the oneof`,
		original: `syntax = "proto3";
message Message {
  oneof g { int32 a = 1; int32 b = 2; }
}
`,
		update: `syntax = "proto3";
message Message {
  oneof g2 { int32 a = 1; }
}
`,
		changes:    []string{`ONEOF_REMOVED #/Message/g`, `ONEOF_ADDED #/Message/g2`, `ONEOF_FIELD_REMOVED #/Message/g/2`},
		compatible: false,
	},
	{
		name: `Detect compatible move field out of a oneof to top level`,
		original: `syntax = "proto3";
message Message {
  oneof oneof_x {
    int32 field_a = 1;
    int32 field_b = 2;
  }
}
`,
		update: `syntax = "proto3";
message Message {
  oneof oneof_x {
    int32 field_a = 1;
  }
  int32 field_b = 2;
}
`,
		changes:    []string{`ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/Message/2`},
		compatible: true,
	},
	{
		name: `Detect incompatible type change when field moved out of a oneof to top level`,
		original: `syntax = "proto3";
message Message {
  oneof oneof_x {
    int32 field_a = 1;
    int32 field_b = 2;
  }
}
`,
		update: `syntax = "proto3";
message Message {
  oneof oneof_x {
    int32 field_a = 1;
  }
  string field_b = 2;
}
`,
		changes:    []string{`ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/Message/2`, `FIELD_SCALAR_KIND_CHANGED #/Message/2`},
		compatible: false,
	},
	{
		name:     `Ignore changes to custom imports`,
		original: "syntax = \"proto3\";\n\nimport \"confluent/meta.proto\";\nimport \"confluent/type/decimal.proto\";\n\noption java_package = \"io.confluent.kafka.serializers.protobuf.test\";\n\n// Wrapper message for `Decimal`.\nmessage DecimalValue {\n  option (confluent.message_meta).doc = \"message\";\n\n  // The bytes value.\n  confluent.type.Decimal value = 1 [(confluent.field_meta) = { params: [\n    { key: \"precision\", value: \"8\" },\n    { key: \"scale\", value: \"3\" }\n  ]}];\n}\n",
		update: `syntax = "proto3";

import "confluent/meta.proto";
import "confluent/type/decimal.proto";

option java_package = "io.confluent.kafka.serializers.protobuf.test";
option (confluent.file_meta) = {
  doc: "file"
};

message DecimalValue {
  option (confluent.message_meta) = {
    doc: "message"
  };

  confluent.type.Decimal value = 1 [(confluent.field_meta) = {
    doc: "field",
    params: [
      {
        value: "8",
        key: "precision"
      },
      {
        value: "3",
        key: "scale"
      }
    ]
  }];
}
enum Status {
  option (confluent.enum_meta) = {
    doc: "enum"
  };
  ACTIVE = 0 [(confluent.enum_value_meta) = {
    doc: "enum_value",
    params: [
      {
        key: "type",
        value: "enum"
      }
    ]
  }];
  INACTIVE = 1;
}

`,
		changes:    []string{`ENUM_ADDED #/Status`},
		compatible: true,
	},
}
