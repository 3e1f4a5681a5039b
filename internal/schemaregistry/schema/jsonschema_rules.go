package schema

import (
	"fmt"
	"strings"
)

// canReadJSON is Confluent's JSON Schema check at its default (STRICT)
// policy: the writer is Confluent's "original", the reader its "update";
// every difference outside the compatible set is an incompatibility.
func canReadJSON(reader, writer Schema) []Incompatibility {
	r, w := reader.(*jsonSchema), writer.(*jsonSchema)
	var out []Incompatibility
	for _, d := range jsonDiff(w, r) {
		if jsonCompatibleChanges[d.Kind] {
			continue
		}
		out = append(out, Incompatibility{Kind: d.Kind, Path: pointerOf(d.Path), Message: jsonDiffMessage(d)})
	}
	return out
}

// pointerOf turns Confluent's "#/a/b" into the JSON pointer "/a/b"; the
// root is "/", as elsewhere in this package.
func pointerOf(p string) string {
	p = strings.TrimPrefix(p, "#")
	if p == "" {
		return "/"
	}
	return p
}

// jsonCompatibleChanges is Confluent's COMPATIBLE_CHANGES_STRICT: the
// difference types a reader can take in its stride.
var jsonCompatibleChanges = setOf(
	"ID_CHANGED", "DESCRIPTION_CHANGED", "TITLE_CHANGED", "DEFAULT_CHANGED", "SCHEMA_REMOVED", "TYPE_EXTENDED",
	"MAX_LENGTH_INCREASED", "MAX_LENGTH_REMOVED", "MIN_LENGTH_DECREASED", "MIN_LENGTH_REMOVED", "PATTERN_REMOVED",
	"MAXIMUM_INCREASED", "MAXIMUM_REMOVED", "MINIMUM_DECREASED", "MINIMUM_REMOVED",
	"EXCLUSIVE_MAXIMUM_INCREASED", "EXCLUSIVE_MAXIMUM_REMOVED", "EXCLUSIVE_MINIMUM_DECREASED", "EXCLUSIVE_MINIMUM_REMOVED",
	"MULTIPLE_OF_REDUCED", "MULTIPLE_OF_REMOVED",
	"REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED", "REQUIRED_ATTRIBUTE_REMOVED",
	"DEPENDENCY_ARRAY_NARROWED", "DEPENDENCY_ARRAY_REMOVED", "DEPENDENCY_SCHEMA_REMOVED",
	"MAX_PROPERTIES_INCREASED", "MAX_PROPERTIES_REMOVED", "MIN_PROPERTIES_DECREASED", "MIN_PROPERTIES_REMOVED",
	"ADDITIONAL_PROPERTIES_ADDED", "ADDITIONAL_PROPERTIES_EXTENDED",
	"UNEVALUATED_PROPERTIES_ADDED", "UNEVALUATED_PROPERTIES_EXTENDED",
	"PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
	"REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL", "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
	"PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL",
	"PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
	"MAX_ITEMS_INCREASED", "MAX_ITEMS_REMOVED", "MIN_ITEMS_DECREASED", "MIN_ITEMS_REMOVED",
	"MAX_CONTAINS_INCREASED", "MAX_CONTAINS_REMOVED", "MIN_CONTAINS_DECREASED", "MIN_CONTAINS_REMOVED",
	"UNIQUE_ITEMS_REMOVED", "ADDITIONAL_ITEMS_ADDED", "ADDITIONAL_ITEMS_EXTENDED",
	"UNEVALUATED_ITEMS_ADDED", "UNEVALUATED_ITEMS_EXTENDED",
	"ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL",
	"ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL",
	"ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
	"ENUM_ARRAY_EXTENDED",
	"COMBINED_TYPE_EXTENDED", "PRODUCT_TYPE_NARROWED", "SUM_TYPE_EXTENDED", "NOT_TYPE_NARROWED",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// The groups Confluent's Difference words its description by.
var (
	jsonKeywordAddedOrRemoved = setOf("MAXIMUM_ADDED", "MINIMUM_ADDED", "EXCLUSIVE_MAXIMUM_ADDED", "EXCLUSIVE_MINIMUM_ADDED",
		"MULTIPLE_OF_ADDED", "MAX_LENGTH_ADDED", "MIN_LENGTH_ADDED", "PATTERN_ADDED", "REQUIRED_ATTRIBUTE_ADDED",
		"MAX_PROPERTIES_ADDED", "MIN_PROPERTIES_ADDED", "DEPENDENCY_ARRAY_ADDED", "DEPENDENCY_SCHEMA_ADDED",
		"MAX_ITEMS_ADDED", "MIN_ITEMS_ADDED", "MAX_CONTAINS_ADDED", "MIN_CONTAINS_ADDED", "UNIQUE_ITEMS_ADDED",
		"ADDITIONAL_ITEMS_REMOVED", "ADDITIONAL_PROPERTIES_REMOVED", "UNEVALUATED_PROPERTIES_REMOVED", "UNEVALUATED_ITEMS_REMOVED")
	jsonValueIncreased = setOf("MIN_LENGTH_INCREASED", "MINIMUM_INCREASED", "EXCLUSIVE_MINIMUM_INCREASED",
		"MIN_PROPERTIES_INCREASED", "MULTIPLE_OF_EXPANDED", "MIN_ITEMS_INCREASED", "MIN_CONTAINS_INCREASED")
	jsonValueDecreased = setOf("MAX_LENGTH_DECREASED", "MAXIMUM_DECREASED", "MAX_ITEMS_DECREASED",
		"MAX_CONTAINS_DECREASED", "EXCLUSIVE_MAXIMUM_DECREASED", "MAX_PROPERTIES_DECREASED")
	jsonValueChanged = setOf("PATTERN_CHANGED", "MULTIPLE_OF_CHANGED", "DEPENDENCY_ARRAY_CHANGED")
	jsonTypeNarrowed = setOf("ADDITIONAL_ITEMS_NARROWED", "ENUM_ARRAY_NARROWED", "SUM_TYPE_NARROWED",
		"ADDITIONAL_PROPERTIES_NARROWED", "UNEVALUATED_PROPERTIES_NARROWED", "UNEVALUATED_ITEMS_NARROWED")
	jsonTypeExtended = setOf("DEPENDENCY_ARRAY_EXTENDED", "PRODUCT_TYPE_EXTENDED", "SUM_TYPE_EXTENDED", "NOT_TYPE_EXTENDED")
	jsonTypeChanged  = setOf("TYPE_CHANGED", "TYPE_NARROWED", "COMBINED_TYPE_CHANGED", "COMBINED_TYPE_SUBSCHEMAS_CHANGED", "ENUM_ARRAY_CHANGED")
	jsonAddedToOpen  = setOf("REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL",
		"OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", "ITEM_ADDED_TO_OPEN_CONTENT_MODEL")
)

// jsonDiffMessage is Confluent's description of a difference. Confluent
// leaves two %s in its text for the two schemas, the update's first; here
// they name the reader (Confluent's update) and the writer (its original),
// which stays right whichever way the compatibility level runs the check.
func jsonDiffMessage(d jdiff) string {
	p, k := d.Path, d.Kind
	var f string
	switch {
	case jsonKeywordAddedOrRemoved[k]:
		f = "The keyword at path '" + p + "' in the %s schema is not present in the %s schema"
	case jsonValueIncreased[k]:
		f = "The value at path '" + p + "' in the %s schema is more than its value in the %s schema"
	case jsonValueDecreased[k]:
		f = "The value at path '" + p + "' in the %s schema is less than its value in the %s schema"
	case jsonValueChanged[k]:
		f = "The value at path '" + p + "' is different between the %s and %s schema"
	case jsonTypeNarrowed[k]:
		f = "An array or combined type at path '" + p + "' has fewer elements in the %s schema than the %s schema"
	case jsonTypeExtended[k]:
		f = "An array or combined type at path '" + p + "' has more elements in the %s schema than the %s schema"
	case jsonTypeChanged[k]:
		f = "A type at path '" + p + "' is different between the %s schema and the %s schema"
	case jsonAddedToOpen[k]:
		f = "The %s schema has an open content model and has a property or item at path '" + p + "' which is missing in the %s schema"
	case k == "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL":
		f = "The %s schema has an unopen content model and has a required property at path '" + p + "' which is missing in the %s schema"
	case k == "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL" || k == "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL":
		f = "The %s has a closed content model and is missing a property or item present at path '" + p + "' in the %s schema"
	case k == "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL" || k == "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL":
		f = "A property or item is missing in the %s schema but present at path '" + p + "' in the %s schema and is not covered by its partially open content model"
	case k == "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL" || k == "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL":
		f = "The %s schema has a property or item at path '" + p + "' which is missing in the %s schema and is not covered by its partially open content model"
	default:
		// SCHEMA_ADDED, ITEM_ADDED_TO_OPEN... and the other kinds Confluent
		// gives no text: say what and where.
		return fmt.Sprintf("%s at path '%s'", k, p)
	}
	return fmt.Sprintf(f, "reader", "writer")
}
