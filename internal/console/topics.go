package console

import "net/http"

// routesTopics registers the topics page (to be built).
func (c *Console) routesTopics(mux *http.ServeMux) {
	_ = mux
}
