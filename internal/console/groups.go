package console

import "net/http"

// routesGroups registers the groups page (to be built).
func (c *Console) routesGroups(mux *http.ServeMux) {
	_ = mux
}
