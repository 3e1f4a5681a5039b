package console

import "net/http"

// routesOverview registers the overview page (to be built).
func (c *Console) routesOverview(mux *http.ServeMux) {
	_ = mux
}
