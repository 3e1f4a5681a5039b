package schemaregistry

import (
	"net/http"
)

// The /config, /mode and /compatibility resources. Writes go to the
// primary (forwarding).
func (r *Registry) routeConfig(mux *http.ServeMux) {
	mux.HandleFunc("GET /config", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"compatibilityLevel": r.GlobalLevel()})
	})
	mux.HandleFunc("PUT /config", r.forwarding(func(w http.ResponseWriter, req *http.Request) { r.putConfig(w, req, true) }))
	mux.HandleFunc("DELETE /config", r.forwarding(func(w http.ResponseWriter, req *http.Request) { r.deleteConfig(w, req, true) }))
	mux.HandleFunc("GET /config/{subject}", r.getSubjectConfig)
	mux.HandleFunc("PUT /config/{subject}", r.forwarding(func(w http.ResponseWriter, req *http.Request) { r.putConfig(w, req, false) }))
	mux.HandleFunc("DELETE /config/{subject}", r.forwarding(func(w http.ResponseWriter, req *http.Request) { r.deleteConfig(w, req, false) }))

	mux.HandleFunc("GET /mode", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"mode": r.GlobalMode()})
	})
	mux.HandleFunc("PUT /mode", r.forwarding(func(w http.ResponseWriter, req *http.Request) { r.putMode(w, req, true) }))
	mux.HandleFunc("DELETE /mode", r.forwarding(func(w http.ResponseWriter, req *http.Request) { r.deleteMode(w, req, true) }))
	mux.HandleFunc("GET /mode/{subject}", r.getSubjectMode)
	mux.HandleFunc("PUT /mode/{subject}", r.forwarding(func(w http.ResponseWriter, req *http.Request) { r.putMode(w, req, false) }))
	mux.HandleFunc("DELETE /mode/{subject}", r.forwarding(func(w http.ResponseWriter, req *http.Request) {
		// The default context named as a subject (":.:") is the global mode.
		r.deleteMode(w, req, subjectParam(req) == "")
	}))

	mux.HandleFunc("POST /compatibility/subjects/{subject}/versions/{version}", r.checkCompatibility)
	mux.HandleFunc("POST /compatibility/subjects/{subject}/versions", r.checkCompatibility)
}

func (r *Registry) putConfig(w http.ResponseWriter, req *http.Request, global bool) {
	var body struct {
		Compatibility string `json:"compatibility"`
	}
	if e := readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	level, ok := parseLevel(body.Compatibility)
	if !ok {
		writeError(w, errInvalidCompatibility())
		return
	}
	if err := r.SetLevel(req.Context(), subjectParam(req), global, level); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"compatibility": level})
}

func (r *Registry) deleteConfig(w http.ResponseWriter, req *http.Request, global bool) {
	old, err := r.DeleteLevel(req.Context(), subjectParam(req), global)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"compatibilityLevel": old})
}

func (r *Registry) getSubjectConfig(w http.ResponseWriter, req *http.Request) {
	toGlobal, e := boolParam(req, "defaultToGlobal")
	if e != nil {
		writeError(w, e)
		return
	}
	level, err := r.SubjectLevel(subjectParam(req), toGlobal)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"compatibilityLevel": level})
}

func (r *Registry) putMode(w http.ResponseWriter, req *http.Request, global bool) {
	force, e := boolParam(req, "force")
	if e != nil {
		writeError(w, e)
		return
	}
	var body struct {
		Mode string `json:"mode"`
	}
	if e := readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	mode, ok := parseMode(body.Mode)
	if !ok {
		writeError(w, errInvalidMode())
		return
	}
	if err := r.SetMode(req.Context(), subjectParam(req), global, mode, force); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"mode": mode})
}

func (r *Registry) getSubjectMode(w http.ResponseWriter, req *http.Request) {
	toGlobal, e := boolParam(req, "defaultToGlobal")
	if e != nil {
		writeError(w, e)
		return
	}
	mode, err := r.SubjectMode(subjectParam(req), toGlobal)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"mode": mode})
}

func (r *Registry) deleteMode(w http.ResponseWriter, req *http.Request, global bool) {
	recursive, e := boolParam(req, "recursive")
	if e != nil {
		writeError(w, e)
		return
	}
	old, err := r.DeleteMode(req.Context(), subjectParam(req), global, recursive)
	if err != nil {
		writeError(w, err)
		return
	}
	var mode *string // null when a recursive delete found no mode of the subject's own
	if old != "" {
		mode = &old
	}
	writeJSON(w, http.StatusOK, map[string]*string{"mode": mode})
}

func (r *Registry) checkCompatibility(w http.ResponseWriter, req *http.Request) {
	flags, e := boolParams(req, "verbose", "normalize")
	if e != nil {
		writeError(w, e)
		return
	}
	version := 0 // no version in the path: the versions the level names
	if s := req.PathValue("version"); s != "" {
		if version, e = parseVersion(s); e != nil {
			writeError(w, e)
			return
		}
	}
	var body SchemaRequest
	if e := readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	msgs, err := r.CheckCompatibility(subjectParam(req), version, &body, flags[1])
	if err != nil {
		writeError(w, err)
		return
	}
	out := struct {
		IsCompatible bool      `json:"is_compatible"`
		Messages     *[]string `json:"messages,omitempty"` // verbose only, and then even when empty
	}{IsCompatible: len(msgs) == 0}
	if flags[0] {
		if msgs == nil {
			msgs = []string{}
		}
		out.Messages = &msgs
	}
	writeJSON(w, http.StatusOK, out)
}
