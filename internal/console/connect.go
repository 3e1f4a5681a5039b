package console

import "net/http"

// routesConnect registers the connect page (to be built).
func (c *Console) routesConnect(mux *http.ServeMux) {
	_ = mux
}
