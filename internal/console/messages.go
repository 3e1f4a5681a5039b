package console

import "net/http"

// routesMessages registers the messages page (to be built).
func (c *Console) routesMessages(mux *http.ServeMux) {
	_ = mux
}
