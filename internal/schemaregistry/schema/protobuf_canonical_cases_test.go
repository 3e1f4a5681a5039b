package schema

// protobufCanonicalCases are schemas of Confluent's ProtobufSchemaTest
// with the canonical and normalized texts it expects, byte for byte,
// written out as our own table. canonical "" means the test pins only the
// normalized text.
var protobufCanonicalCases = []struct {
	name, schema, canonical, normalized string
	// normalizedNoExtensions is the normalized schema in the
	// ignore_extensions format, when the test pins it.
	normalizedNoExtensions string
}{
	{
		name: "testNestedCustomOptions",
		schema: `syntax = "proto3";
package acme.events;
import "google/protobuf/wrappers.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/descriptor.proto";

message ValidationSettings {
  bool is_optional = 1;
}
message EventMetadata {
  google.protobuf.StringValue owner = 1;
  google.protobuf.StringValue description = 2;
  RetentionPolicies retention_policy = 4;
}

extend google.protobuf.FieldOptions {
  ValidationSettings validation_settings = 10000;
  EventMetadata event_metadata = 10001;
}

enum RetentionPolicies {
  DEFAULT = 0; // Default value, allows enforcement to implement default strategy
  SEVEN_DAYS = 1;
  THIRTY_DAYS = 2;
  NINETY_DAYS = 3;
  ONE_YEAR = 4;
  TWO_YEARS = 5;
  SEVEN_YEARS = 6;
  ALL_TIME = 7;
}

message EventHeader {
  google.protobuf.StringValue event_source = 1;
  google.protobuf.StringValue event_id = 2;
  google.protobuf.Timestamp event_timestamp = 3;
  google.protobuf.StringValue event_name = 4;
}

message Event {
  EventHeader header = 1;
  oneof only_one_event_limiter {
    SearchEvent requested_search = 2 [
      (event_metadata).description.value = "Fires when a user submits a search request.",
      (event_metadata).owner.value = "DISCO"
    ];
  }
}
message SearchEvent {
  google.protobuf.Int32Value user_id = 1 [(validation_settings).is_optional = true];
}
`,
		canonical: `syntax = "proto3";
package acme.events;

import "google/protobuf/wrappers.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/descriptor.proto";

message ValidationSettings {
  bool is_optional = 1;
}
message EventMetadata {
  google.protobuf.StringValue owner = 1;
  google.protobuf.StringValue description = 2;
  RetentionPolicies retention_policy = 4;
}
message EventHeader {
  google.protobuf.StringValue event_source = 1;
  google.protobuf.StringValue event_id = 2;
  google.protobuf.Timestamp event_timestamp = 3;
  google.protobuf.StringValue event_name = 4;
}
message Event {
  EventHeader header = 1;

  oneof only_one_event_limiter {
    SearchEvent requested_search = 2 [
      (event_metadata).description.value = "Fires when a user submits a search request.",
      (event_metadata).owner.value = "DISCO"
    ];
  }
}
message SearchEvent {
  google.protobuf.Int32Value user_id = 1 [(validation_settings).is_optional = true];
}
enum RetentionPolicies {
  DEFAULT = 0;
  SEVEN_DAYS = 1;
  THIRTY_DAYS = 2;
  NINETY_DAYS = 3;
  ONE_YEAR = 4;
  TWO_YEARS = 5;
  SEVEN_YEARS = 6;
  ALL_TIME = 7;
}

extend google.protobuf.FieldOptions {
  ValidationSettings validation_settings = 10000;
  EventMetadata event_metadata = 10001;
}
`,
		normalized: `syntax = "proto3";
package acme.events;

import "google/protobuf/descriptor.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

message ValidationSettings {
  bool is_optional = 1;
}
message EventMetadata {
  .google.protobuf.StringValue owner = 1;
  .google.protobuf.StringValue description = 2;
  .acme.events.RetentionPolicies retention_policy = 4;
}
message EventHeader {
  .google.protobuf.StringValue event_source = 1;
  .google.protobuf.StringValue event_id = 2;
  .google.protobuf.Timestamp event_timestamp = 3;
  .google.protobuf.StringValue event_name = 4;
}
message Event {
  .acme.events.EventHeader header = 1;

  oneof only_one_event_limiter {
    .acme.events.SearchEvent requested_search = 2 [(acme.events.event_metadata) = {
      description: {
        value: "Fires when a user submits a search request."
      },
      owner: {
        value: "DISCO"
      }
    }];
  }
}
message SearchEvent {
  .google.protobuf.Int32Value user_id = 1 [(acme.events.validation_settings) = {
    is_optional: true
  }];
}
enum RetentionPolicies {
  DEFAULT = 0;
  SEVEN_DAYS = 1;
  THIRTY_DAYS = 2;
  NINETY_DAYS = 3;
  ONE_YEAR = 4;
  TWO_YEARS = 5;
  SEVEN_YEARS = 6;
  ALL_TIME = 7;
}

extend .google.protobuf.FieldOptions {
  .acme.events.ValidationSettings validation_settings = 10000;
  .acme.events.EventMetadata event_metadata = 10001;
}
`,
	},
	{
		name: "testRanges",
		schema: `
message Money {
  reserved 5000 to 6000;
  reserved 10000 to 10001;
  reserved 20000 to 20000;

  optional int64 cents = 1;

  extensions 100 to 200;
  extensions 1000 to 1001;
  extensions 2000 to 2000;

  enum MoneyEnum {
    reserved 100 to 200;
    reserved 1000 to 1001;
    reserved 2000 to 2000;
    NONE = 0;
    CENTS = 1;
    DOLLARS = 2;
  }
}
`,
		canonical: `
message Money {
  reserved 5000 to 6000;
  reserved 10000 to 10001;
  reserved 20000 to 20000;

  optional int64 cents = 1;

  extensions 100 to 200;
  extensions 1000 to 1001;
  extensions 2000 to 2000;

  enum MoneyEnum {
    reserved 100 to 200;
    reserved 1000 to 1001;
    reserved 2000 to 2000;
    NONE = 0;
    CENTS = 1;
    DOLLARS = 2;
  }
}
`,
		normalized: `
message Money {
  reserved 5000 to 6000;
  reserved 10000 to 10001;
  reserved 20000;

  optional int64 cents = 1;

  extensions 100 to 200;
  extensions 1000 to 1001;
  extensions 2000;

  enum MoneyEnum {
    reserved 100 to 200;
    reserved 1000 to 1001;
    reserved 2000;
    NONE = 0;
    CENTS = 1;
    DOLLARS = 2;
  }
}
`,
	},
	{
		name: "testNormalizationWithExtensions",
		schema: `package my.package;

message ExtendedDummy {
    // just to namespace the extensions
    extend Extended {
        optional string extension_normal2 = 101;
        optional string extension_normal = 100;
    }

    message Nested {
        // but these are to test insane but legit definitions
        extend package.Extended {
            optional string extension_identifier2 = 103;
            optional string extension_identifier = 102;
        }
        message Oh {
            extend my.package.Extended {
                optional string extension_vault_replace2 = 105;
                optional string extension_vault_replace = 104;
            }
            message My {
                extend .my.package.Extended {
                    optional string extension_fidelius_token2 = 107;
                    optional string extension_fidelius_token = 106;
                }
                message God {
                    extend Extended.NestedExtended {
                        optional string extension_nested_entity2 = 109;
                        optional string extension_nested_entity = 108;
                    }
                    extend my.package.Extended.NestedExtended {
                        optional string extension_nested_again2 = 111;
                        optional string extension_nested_again = 110;
                    }
                }
            }
        }
    }
}

message Extended {
    optional string vaulted_data = 1;
    optional string field_normal = 2;
    extensions 100 to 199;

    message NestedExtended {
        optional string vaulted_data = 1;
        optional string field_normal = 2;
        optional string field_vault_replace = 3;
        extensions 100 to 199;
        extend NestedExtended {
            optional string extension_nested_trouble2 = 113;
            optional string extension_nested_trouble = 112;
        }
    }
}
`,
		canonical: `package my.package;

message ExtendedDummy {
  extend Extended {
    optional string extension_normal2 = 101;
    optional string extension_normal = 100;
  }

  message Nested {
    extend package.Extended {
      optional string extension_identifier2 = 103;
      optional string extension_identifier = 102;
    }
  
    message Oh {
      extend my.package.Extended {
        optional string extension_vault_replace2 = 105;
        optional string extension_vault_replace = 104;
      }
    
      message My {
        extend .my.package.Extended {
          optional string extension_fidelius_token2 = 107;
          optional string extension_fidelius_token = 106;
        }
      
        message God {
          extend Extended.NestedExtended {
            optional string extension_nested_entity2 = 109;
            optional string extension_nested_entity = 108;
          }
          extend my.package.Extended.NestedExtended {
            optional string extension_nested_again2 = 111;
            optional string extension_nested_again = 110;
          }
        }
      }
    }
  }
}
message Extended {
  optional string vaulted_data = 1;
  optional string field_normal = 2;

  extensions 100 to 199;

  message NestedExtended {
    optional string vaulted_data = 1;
    optional string field_normal = 2;
    optional string field_vault_replace = 3;
  
    extensions 100 to 199;
  
    extend NestedExtended {
      optional string extension_nested_trouble2 = 113;
      optional string extension_nested_trouble = 112;
    }
  }
}
`,
		normalized: `package my.package;

message ExtendedDummy {
  extend .my.package.Extended {
    optional string extension_normal = 100;
    optional string extension_normal2 = 101;
  }

  message Nested {
    extend .my.package.Extended {
      optional string extension_identifier = 102;
      optional string extension_identifier2 = 103;
    }
  
    message Oh {
      extend .my.package.Extended {
        optional string extension_vault_replace = 104;
        optional string extension_vault_replace2 = 105;
      }
    
      message My {
        extend .my.package.Extended {
          optional string extension_fidelius_token = 106;
          optional string extension_fidelius_token2 = 107;
        }
      
        message God {
          extend .my.package.Extended.NestedExtended {
            optional string extension_nested_entity = 108;
            optional string extension_nested_entity2 = 109;
            optional string extension_nested_again = 110;
            optional string extension_nested_again2 = 111;
          }
        }
      }
    }
  }
}
message Extended {
  optional string vaulted_data = 1;
  optional string field_normal = 2;

  extensions 100 to 199;

  message NestedExtended {
    optional string vaulted_data = 1;
    optional string field_normal = 2;
    optional string field_vault_replace = 3;
  
    extensions 100 to 199;
  
    extend .my.package.Extended.NestedExtended {
      optional string extension_nested_trouble = 112;
      optional string extension_nested_trouble2 = 113;
    }
  }
}
`,
		normalizedNoExtensions: `package my.package;

message ExtendedDummy {
  message Nested {
    message Oh {
      message My {
        message God {}
      }
    }
  }
}
message Extended {
  optional string vaulted_data = 1;
  optional string field_normal = 2;

  message NestedExtended {
    optional string vaulted_data = 1;
    optional string field_normal = 2;
    optional string field_vault_replace = 3;
  }
}
`,
	},
	{
		name: "testNormalizationWithNestedComplexCustomOptions",
		schema: `package acme.common;

import "google/protobuf/descriptor.proto";

message Container {
  optional string value = 1 [
    (constraints).range.min = 1.0, (constraints).range.max = 1024.0];
}

extend google.protobuf.FieldOptions {
  optional Constraints constraints = 22302;
}

message Constraints {
  optional Range range = 1;
}

message Range {
  optional double min = 1;
  optional double max = 2;
}
`,
		normalized: `package acme.common;

import "google/protobuf/descriptor.proto";

message Container {
  optional string value = 1 [(acme.common.constraints) = {
    range: {
      max: 1024,
      min: 1
    }
  }];
}
message Constraints {
  optional .acme.common.Range range = 1;
}
message Range {
  optional double min = 1;
  optional double max = 2;
}

extend .google.protobuf.FieldOptions {
  optional .acme.common.Constraints constraints = 22302;
}
`,
	},
	{
		name: "testNormalizationWithPackagePrefix",
		schema: `syntax = "proto3";
package confluent.package;

import "confluent/type/decimal.proto";

message Nested {
  type.Decimal test_cflt_decimal = 1;
}
`,
		normalized: `syntax = "proto3";
package confluent.package;

import "confluent/type/decimal.proto";

message Nested {
  .confluent.type.Decimal test_cflt_decimal = 1;
}
`,
	},
}
