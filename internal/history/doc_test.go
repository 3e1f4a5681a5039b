package history

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// allKinds is every anomaly Check reports.
var allKinds = []Kind{LostWrite, AckBeyondHighWatermark, Duplicate, AtLeastOnceDuplicate, DivergentOffset,
	AbortedRead, UncommittedRead, ConsumerBackwards, ConsumerSkip}

// TestDocDefinesEverything keeps docs/HISTORY-CHECK.md in step with the
// code: it defines every anomaly kind and names every field of every
// event, since clients in other languages write events from it alone.
func TestDocDefinesEverything(t *testing.T) {
	data, err := os.ReadFile("../../docs/HISTORY-CHECK.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, k := range allKinds {
		if !strings.Contains(doc, "**`"+string(k)+"`**") {
			t.Errorf("docs/HISTORY-CHECK.md does not define **`%s`**", k)
		}
	}
	for _, e := range []Event{Produce{}, Txn{}, Consume{}, Final{}, FinalEnd{}} {
		if !strings.Contains(doc, "`"+e.eventType()+"`") {
			t.Errorf("docs/HISTORY-CHECK.md does not name the event `%s`", e.eventType())
		}
		typ := reflect.TypeOf(e)
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name != "-" && !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/HISTORY-CHECK.md does not name %s's field `%s`", e.eventType(), name)
			}
		}
	}
}
