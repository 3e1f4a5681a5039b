package console

import "net/http"

// routesOps registers the ops page (to be built).
func (c *Console) routesOps(mux *http.ServeMux) {
	_ = mux
}
