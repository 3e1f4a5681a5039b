package schemaregistry

import (
	"net/http"
)

// The /subjects resources: a subject's versions, registration, lookup
// and deletion. Writes go to the primary (forwarding).
func (r *Registry) routeSubjects(mux *http.ServeMux) {
	mux.HandleFunc("GET /subjects", r.listSubjects)
	mux.HandleFunc("GET /subjects/{subject}/versions", r.listVersions)
	mux.HandleFunc("POST /subjects/{subject}/versions", r.forwarding(r.register))
	mux.HandleFunc("GET /subjects/{subject}/versions/{version}", r.getVersion)
	mux.HandleFunc("GET /subjects/{subject}/versions/{version}/schema", r.getVersionSchema)
	mux.HandleFunc("GET /subjects/{subject}/versions/{version}/referencedby", r.getReferencedBy)
	mux.HandleFunc("DELETE /subjects/{subject}/versions/{version}", r.forwarding(r.deleteVersion))
	mux.HandleFunc("POST /subjects/{subject}", r.lookup)
	mux.HandleFunc("DELETE /subjects/{subject}", r.forwarding(r.deleteSubject))
}

func (r *Registry) listSubjects(w http.ResponseWriter, req *http.Request) {
	deleted, e := boolParam(req, "deleted")
	if e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, r.Subjects(req.URL.Query().Get("subjectPrefix"), deleted))
}

func (r *Registry) listVersions(w http.ResponseWriter, req *http.Request) {
	deleted, e := boolParam(req, "deleted")
	if e != nil {
		writeError(w, e)
		return
	}
	vs, err := r.Versions(req.PathValue("subject"), deleted)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, vs)
}

func (r *Registry) register(w http.ResponseWriter, req *http.Request) {
	normalize, e := boolParam(req, "normalize")
	if e != nil {
		writeError(w, e)
		return
	}
	var body SchemaRequest
	if e := readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	id, err := r.Register(req.Context(), req.PathValue("subject"), &body, normalize)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"id": id})
}

// versionParams reads a path's {version} and the deleted parameter.
func versionParams(req *http.Request) (int, bool, *Error) {
	deleted, e := boolParam(req, "deleted")
	if e != nil {
		return 0, false, e
	}
	v, e := parseVersion(req.PathValue("version"))
	return v, deleted, e
}

func (r *Registry) getVersion(w http.ResponseWriter, req *http.Request) {
	v, deleted, e := versionParams(req)
	if e != nil {
		writeError(w, e)
		return
	}
	s, err := r.Version(req.PathValue("subject"), v, deleted)
	if err == nil {
		s, err = r.withFormat(req, s)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

func (r *Registry) getVersionSchema(w http.ResponseWriter, req *http.Request) {
	v, deleted, e := versionParams(req)
	if e != nil {
		writeError(w, e)
		return
	}
	s, err := r.Version(req.PathValue("subject"), v, deleted)
	if err == nil {
		s, err = r.withFormat(req, s)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeRaw(w, s.Schema)
}

func (r *Registry) getReferencedBy(w http.ResponseWriter, req *http.Request) {
	v, e := parseVersion(req.PathValue("version"))
	if e != nil {
		writeError(w, e)
		return
	}
	ids, err := r.ReferencedBy(req.PathValue("subject"), v)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ids)
}

func (r *Registry) deleteVersion(w http.ResponseWriter, req *http.Request) {
	permanent, e := boolParam(req, "permanent")
	if e != nil {
		writeError(w, e)
		return
	}
	v, e := parseVersion(req.PathValue("version"))
	if e != nil {
		writeError(w, e)
		return
	}
	deleted, err := r.DeleteVersion(req.Context(), req.PathValue("subject"), v, permanent)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, deleted)
}

func (r *Registry) lookup(w http.ResponseWriter, req *http.Request) {
	flags, e := boolParams(req, "normalize", "deleted")
	if e != nil {
		writeError(w, e)
		return
	}
	var body SchemaRequest
	if e := readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	s, err := r.Lookup(req.PathValue("subject"), &body, flags[0], flags[1])
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

func (r *Registry) deleteSubject(w http.ResponseWriter, req *http.Request) {
	permanent, e := boolParam(req, "permanent")
	if e != nil {
		writeError(w, e)
		return
	}
	vs, err := r.DeleteSubject(req.Context(), req.PathValue("subject"), permanent)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, vs)
}
