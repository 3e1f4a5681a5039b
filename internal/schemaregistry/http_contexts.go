package schemaregistry

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// The /contexts resource: the contexts the store names, and deleting an
// empty one. Paths under /contexts/{context}/ are rewritten before
// routing (rewriteContextPath).
func (r *Registry) routeContexts(mux *http.ServeMux) {
	mux.HandleFunc("GET /contexts", r.listContexts)
	mux.HandleFunc("DELETE /contexts/{context}", r.forwarding(r.deleteContext))
}

func (r *Registry) listContexts(w http.ResponseWriter, req *http.Request) {
	pg, e := pageParams(req, unboundedLimit)
	if e != nil {
		writeError(w, e)
		return
	}
	prefix := req.URL.Query().Get("contextPrefix")
	out := []string{}
	for _, c := range r.Contexts() {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	writeJSON(w, http.StatusOK, paged(out, pg))
}

func (r *Registry) deleteContext(w http.ResponseWriter, req *http.Request) {
	ctx, e := normalizeContext(req.PathValue("context"))
	if e != nil {
		writeError(w, e)
		return
	}
	if err := r.DeleteContext(req.Context(), ctx); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Contexts lists the default context, then the contexts the store's
// CONTEXT records name, sorted, as Confluent's listContexts.
func (r *Registry) Contexts() []string {
	out := []string{defaultContext}
	r.read(func(st *state) { out = append(out, sortedKeys(st.contexts)...) })
	return out
}

// DeleteContext removes a context that holds no subject, soft-deleted
// ones included (42211 otherwise), as Confluent's deleteContext.
func (r *Registry) DeleteContext(ctx context.Context, name string) error {
	return r.writeOp(ctx, "Delete context", func(st *state) ([]record, error) {
		if len(st.inContext(name)) > 0 {
			return nil, errContextNotEmpty(name)
		}
		if !st.contexts[name] {
			return nil, nil // nothing to delete: Confluent answers 204 too
		}
		return []record{{storeKey{Type: keyContext, Context: name}, nil}}, nil
	})
}

func errContextNotEmpty(ctx string) *Error {
	return &Error{http.StatusUnprocessableEntity, codeContextNotEmpty, fmt.Sprintf("The specified context '%s' is not empty.", contextPrefixOf(ctx))}
}
