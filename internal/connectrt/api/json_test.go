package api

import (
	"encoding/json"
	"testing"
)

// TestEntitiesHaveNoNullLists: entities built with nil slices and maps
// encode them as Kafka does, [] and {}.
func TestEntitiesHaveNoNullLists(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{ConnectorInfo{Name: "c", Type: TypeSource}, `{"name":"c","config":{},"tasks":[],"type":"source"}`},
		{TaskInfo{ID: TaskID{"c", 0}}, `{"id":{"connector":"c","task":0},"config":{}}`},
		{ConnectorStateInfo{Name: "c", Connector: ConnectorState{State: StateStopped, WorkerID: "w"}, Type: TypeSink},
			`{"name":"c","connector":{"state":"STOPPED","worker_id":"w"},"tasks":[],"type":"sink"}`},
		{ConnectorOffsets{}, `{"offsets":[]}`},
		{ConfigKeyInfo{Name: "k"}, `{"name":"k","type":"","required":false,"default_value":null,"importance":"","documentation":"","group":null,"order_in_group":0,"width":"","display_name":"","dependents":[]}`},
		{ConfigValueInfo{Name: "k"}, `{"name":"k","value":null,"recommended_values":[],"errors":[],"visible":false}`},
		{ConfigInfos{Name: "p"}, `{"name":"p","error_count":0,"groups":[],"configs":[]}`},
		{[]ConnectorInfo{{Name: "c"}}, `[{"name":"c","config":{},"tasks":[],"type":""}]`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%T: %s (%v); want %s", tc.v, b, err, tc.want)
		}
	}
}
