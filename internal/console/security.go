package console

import "net/http"

// routesSecurity registers the security page (to be built).
func (c *Console) routesSecurity(mux *http.ServeMux) {
	_ = mux
}
