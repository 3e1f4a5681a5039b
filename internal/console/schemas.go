package console

import "net/http"

// routesSchemas registers the schemas page (to be built).
func (c *Console) routesSchemas(mux *http.ServeMux) {
	_ = mux
}
