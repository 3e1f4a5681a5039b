package schemaregistry

import (
	"net/http"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// The /schemas resources: schemas by global ID, the list, the types.
func (r *Registry) routeSchemas(mux *http.ServeMux) {
	mux.HandleFunc("GET /schemas", r.listSchemas)
	mux.HandleFunc("GET /schemas/types", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, schema.Types)
	})
	mux.HandleFunc("GET /schemas/ids/{id}", r.getSchemaByID)
	mux.HandleFunc("GET /schemas/ids/{id}/schema", r.getSchemaTextByID)
	mux.HandleFunc("GET /schemas/ids/{id}/subjects", r.getSubjectsByID)
	mux.HandleFunc("GET /schemas/ids/{id}/versions", r.getVersionsByID)
}

func (r *Registry) listSchemas(w http.ResponseWriter, req *http.Request) {
	flags, e := boolParams(req, "deleted", "latestOnly")
	if e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, r.Schemas(req.URL.Query().Get("subjectPrefix"), flags[0], flags[1]))
}

func (r *Registry) schemaByIDParams(req *http.Request) (Schema, error) {
	id, e := idParam(req)
	if e != nil {
		return Schema{}, e
	}
	if _, e := formatParam(req); e != nil {
		return Schema{}, e // refused before the lookup, as a bad request
	}
	s, err := r.SchemaByID(id, req.URL.Query().Get("subject"))
	if err != nil {
		return Schema{}, err
	}
	return r.withFormat(req, s)
}

func (r *Registry) getSchemaByID(w http.ResponseWriter, req *http.Request) {
	s, err := r.schemaByIDParams(req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		SchemaType string      `json:"schemaType,omitempty"`
		References []Reference `json:"references,omitempty"`
		Schema     string      `json:"schema"`
	}{s.SchemaType, s.References, s.Schema})
}

func (r *Registry) getSchemaTextByID(w http.ResponseWriter, req *http.Request) {
	s, err := r.schemaByIDParams(req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeRaw(w, s.Schema)
}

func (r *Registry) getSubjectsByID(w http.ResponseWriter, req *http.Request) {
	id, e := idParam(req)
	if e != nil {
		writeError(w, e)
		return
	}
	deleted, e := boolParam(req, "deleted")
	if e != nil {
		writeError(w, e)
		return
	}
	subjects, err := r.SubjectsByID(id, deleted)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, subjects)
}

func (r *Registry) getVersionsByID(w http.ResponseWriter, req *http.Request) {
	id, e := idParam(req)
	if e != nil {
		writeError(w, e)
		return
	}
	deleted, e := boolParam(req, "deleted")
	if e != nil {
		writeError(w, e)
		return
	}
	vs, err := r.VersionsByID(id, deleted)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, vs)
}
