package restproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
)

// POST .../records:batch: a ProduceBatchRequest of up to produceBatchMax
// entries, each a ProduceRequest with an id; every entry produced
// together, the answer 207 with one delivery report per entry, in the
// entries' order, in successes or failures (a failed entry does not fail
// the batch), as Confluent's ProduceBatchAction.
//
// A batch Confluent refuses as a whole (empty, too many entries, ids not
// distinct, an id not 1-80 of [0-9a-zA-Z-_]) is refused here with its
// message and code 42208, but HTTP 400 where Confluent answers 422: the
// spec lists 400 and no 422 for this endpoint.
func (p *Proxy) routeRecordsBatch(mux *http.ServeMux) {
	mux.HandleFunc("POST /v3/clusters/{cluster_id}/topics/{topic_name}/records:batch", p.produceBatch)
}

// produceBatchMax is Confluent's api.v3.produce.batch.maximum.entries
// default.
const produceBatchMax = 10

const codeProduceBatch = 42208

var batchEntryID = regexp.MustCompile(`^[0-9a-zA-Z_-]{1,80}$`)

type produceBatchRequest struct {
	Entries []json.RawMessage `json:"entries"`
}

type produceBatchResponse struct {
	Successes []produceBatchSuccess `json:"successes"`
	Failures  []produceBatchFailure `json:"failures"`
}

// produceBatchSuccess is the spec's ProduceBatchResponseSuccessEntry: a
// ProduceResponse with the entry's id and without error_code.
type produceBatchSuccess struct {
	ID          string           `json:"id"`
	ClusterID   string           `json:"cluster_id"`
	TopicName   string           `json:"topic_name"`
	PartitionID int32            `json:"partition_id"`
	Offset      int64            `json:"offset"`
	Timestamp   string           `json:"timestamp"`
	Key         *produceDataSize `json:"key,omitempty"`
	Value       *produceDataSize `json:"value,omitempty"`
}

type produceBatchFailure struct {
	ID        string `json:"id"`
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

func errProduceBatch(msg string) *Error {
	return &Error{http.StatusBadRequest, codeProduceBatch, msg}
}

// batchEntries splits each entry into its id and the ProduceRequest
// without it, checking the batch as Confluent does.
func (b produceBatchRequest) batchEntries() ([]string, []json.RawMessage, *Error) {
	if b.Entries == nil {
		return nil, nil, errProduceBatch("Request body is empty. Data is required.")
	}
	if len(b.Entries) == 0 {
		return nil, nil, errProduceBatch("Empty batch.")
	}
	if len(b.Entries) > produceBatchMax {
		return nil, nil, errProduceBatch(fmt.Sprintf("Too many entries in batch (at most %d).", produceBatchMax))
	}
	ids := make([]string, len(b.Entries))
	records := make([]json.RawMessage, len(b.Entries))
	seen := map[string]bool{}
	for i, raw := range b.Entries {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return nil, nil, errBadRequest(fmt.Sprintf("Bad Request: entry %d is not a JSON object", i))
		}
		var id string
		if err := json.Unmarshal(fields["id"], &id); err != nil || !batchEntryID.MatchString(id) {
			return nil, nil, errProduceBatch("Batch entry identifier is not a valid string.")
		}
		if seen[id] {
			return nil, nil, errProduceBatch("Batch entry IDs are not distinct.")
		}
		seen[id] = true
		delete(fields, "id")
		rec, err := json.Marshal(fields)
		if err != nil {
			return nil, nil, errBadRequest("Bad Request: " + err.Error())
		}
		ids[i], records[i] = id, rec
	}
	return ids, records, nil
}

func (p *Proxy) produceBatch(w http.ResponseWriter, req *http.Request) {
	var body produceBatchRequest
	if e := p.readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	ids, records, e := body.batchEntries()
	if e != nil {
		writeError(w, e)
		return
	}
	pending := make([]chan produceResult, len(records))
	for i, rec := range records {
		pending[i] = p.produceOne(req, rec)
	}
	resp := produceBatchResponse{Successes: []produceBatchSuccess{}, Failures: []produceBatchFailure{}}
	for i, ch := range pending {
		r := <-ch
		if r.err != nil {
			resp.Failures = append(resp.Failures, produceBatchFailure{ID: ids[i], ErrorCode: r.err.Code, Message: r.err.Message})
			continue
		}
		ok := r.ok
		resp.Successes = append(resp.Successes, produceBatchSuccess{ID: ids[i], ClusterID: ok.ClusterID, TopicName: ok.TopicName,
			PartitionID: ok.PartitionID, Offset: ok.Offset, Timestamp: ok.Timestamp, Key: ok.Key, Value: ok.Value})
	}
	writeJSON(w, http.StatusMultiStatus, resp)
}
