package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The Connect page speaks Kafka Connect's REST API (Samsa's own worker
// or Apache Kafka's) through c.doJSON as the session's user.

// connectPageSize is how many connectors one page of the list shows.
const connectPageSize = 100

// routesConnect registers the connect page. The create form is
// /connect/new?plugin=... rather than /connect/new/{plugin}: a second
// wildcard segment there would clash with /connect/{name}/pause and
// its siblings in the mux.
func (c *Console) routesConnect(mux *http.ServeMux) {
	mux.HandleFunc("GET /connect", c.connectList)
	mux.HandleFunc("GET /connect/new", c.connectNew)
	mux.HandleFunc("POST /connect/new", c.connectCreate)
	mux.HandleFunc("GET /connect/{name}", c.connectDetail)
	mux.HandleFunc("GET /connect/{name}/edit", c.connectEditForm)
	mux.HandleFunc("POST /connect/{name}/edit", c.connectEdit)
	mux.HandleFunc("POST /connect/{name}/pause", c.connectState("pause"))
	mux.HandleFunc("POST /connect/{name}/resume", c.connectState("resume"))
	mux.HandleFunc("POST /connect/{name}/restart", c.connectRestart)
	mux.HandleFunc("POST /connect/{name}/tasks/{task}/restart", c.connectRestartTask)
	mux.HandleFunc("POST /connect/{name}/delete", c.connectDelete)
}

// connectCall is a Connect REST request; a worker that does not answer
// is a 502 naming it.
func (c *Console) connectCall(r *http.Request, method, path string, in, out any) error {
	return c.sharedService(r, "Connect", c.cfg.ConnectURL, "no Connect cluster is configured for the console", method, path, in, out)
}

func connectPath(name string) string { return "/connectors/" + url.PathEscape(name) }

// connectState is a connector's or a task's state, as the status
// endpoint answers it.
type connectState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	Trace    string `json:"trace"`
	WorkerID string `json:"worker_id"`
}

// Badge is the base.css badge class of a state.
func (s connectState) Badge() string {
	switch s.State {
	case "RUNNING":
		return "ok"
	case "FAILED":
		return "bad"
	default:
		return "warn"
	}
}

type connectStatus struct {
	Name      string         `json:"name"`
	Connector connectState   `json:"connector"`
	Tasks     []connectState `json:"tasks"`
	Type      string         `json:"type"`
}

// Count is how many tasks are in state.
func (s connectStatus) Count(state string) int {
	n := 0
	for _, t := range s.Tasks {
		if t.State == state {
			n++
		}
	}
	return n
}

type connectInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Type   string            `json:"type"`
}

type connectRow struct {
	Name   string
	Class  string
	Type   string
	Status connectStatus
	Err    string
}

type connectListView struct {
	Query string
	Rows  []connectRow
	Pager sharedPager
	Done  string
}

func (c *Console) connectList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := connectListView{Query: strings.TrimSpace(q.Get("q")), Done: q.Get("done")}
	// One request for every connector's status and info (KIP-465's
	// expand); a worker without it answers the bare names, and the
	// page then asks for its own connectors' statuses only.
	var raw json.RawMessage
	if err := c.connectCall(r, http.MethodGet, "/connectors?expand=status&expand=info", nil, &raw); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	expanded := map[string]struct {
		Status *connectStatus `json:"status"`
		Info   *connectInfo   `json:"info"`
	}{}
	var names []string
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		if err := json.Unmarshal(raw, &names); err != nil {
			c.fail(w, r, nil, statusErr(http.StatusBadGateway, fmt.Errorf("Connect's connector list: %w", err)))
			return
		}
	} else {
		if err := json.Unmarshal(raw, &expanded); err != nil {
			c.fail(w, r, nil, statusErr(http.StatusBadGateway, fmt.Errorf("Connect's connector list: %w", err)))
			return
		}
		for n := range expanded {
			names = append(names, n)
		}
	}
	var page []string
	v.Pager, page = sharedSearchPage(r.URL, names, v.Query, connectPageSize)
	v.Rows = make([]connectRow, len(page))
	schemasEach(len(page), func(i int) {
		row := connectRow{Name: page[i]}
		e, ok := expanded[page[i]]
		if !ok || e.Status == nil {
			e.Status = &connectStatus{}
			if err := c.connectCall(r, http.MethodGet, connectPath(page[i])+"/status", nil, e.Status); err != nil {
				row.Err = err.Error()
			}
		}
		row.Status, row.Type = *e.Status, e.Status.Type
		if e.Info != nil {
			row.Class = e.Info.Config["connector.class"]
			if row.Type == "" {
				row.Type = e.Info.Type
			}
		}
		v.Rows[i] = row
	})
	c.render(w, r, "connect", v)
}

// connectDef is a plugin's config definition (Kafka's ConfigKeyInfo).
type connectDef struct {
	Name          string  `json:"name"`
	Type          string  `json:"type"`
	Required      bool    `json:"required"`
	Default       *string `json:"default_value"`
	Importance    string  `json:"importance"`
	Documentation string  `json:"documentation"`
	Group         *string `json:"group"`
	OrderInGroup  int     `json:"order_in_group"`
	DisplayName   string  `json:"display_name"`
}

// connectSensitive reports whether a config's value must not be shown:
// a PASSWORD in the plugin's definitions, or a key that names a secret.
func connectSensitive(key string, defs map[string]connectDef) bool {
	if d, ok := defs[key]; ok && d.Type == "PASSWORD" {
		return true
	}
	k := strings.ToLower(key)
	for _, word := range []string{"password", "secret", "token", "jaas", "credential", "private.key", "api.key", "apikey"} {
		if strings.Contains(k, word) {
			return true
		}
	}
	return false
}

// connectPluginDefs are the plugin's config definitions by name; a
// plugin the worker does not know has none (the page still shows the
// connector, hiding by key names only).
func (c *Console) connectPluginDefs(r *http.Request, plugin string) ([]connectDef, error) {
	var defs []connectDef
	err := c.connectCall(r, http.MethodGet, "/connector-plugins/"+url.PathEscape(plugin)+"/config", nil, &defs)
	return defs, err
}

func connectDefsByName(defs []connectDef) map[string]connectDef {
	m := make(map[string]connectDef, len(defs))
	for _, d := range defs {
		m[d.Name] = d
	}
	return m
}

type connectConfigRow struct {
	Key, Value string
	Hidden     bool
}

type connectDetailView struct {
	Name   string
	Class  string
	Type   string
	Status connectStatus
	Config []connectConfigRow
	Done   string
}

func (c *Console) connectDetail(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	v := connectDetailView{Name: name, Done: r.URL.Query().Get("done")}
	var info connectInfo
	if err := c.connectCall(r, http.MethodGet, connectPath(name), nil, &info); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if err := c.connectCall(r, http.MethodGet, connectPath(name)+"/status", nil, &v.Status); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	v.Class, v.Type = info.Config["connector.class"], info.Type
	defs, _ := c.connectPluginDefs(r, v.Class) // without them, key names alone hide values
	byName := connectDefsByName(defs)
	for k, val := range info.Config {
		row := connectConfigRow{Key: k, Value: val, Hidden: connectSensitive(k, byName)}
		if row.Hidden {
			row.Value = ""
		}
		v.Config = append(v.Config, row)
	}
	slices.SortFunc(v.Config, func(a, b connectConfigRow) int { return strings.Compare(a.Key, b.Key) })
	c.renderSection(w, r, "connect_detail", "connect", v)
}

func (c *Console) connectDone(w http.ResponseWriter, r *http.Request, name, done string) {
	http.Redirect(w, r, "/connect/"+url.PathEscape(name)+"?done="+url.QueryEscape(done), http.StatusSeeOther)
}

func (c *Console) connectState(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if err := c.connectCall(r, http.MethodPut, connectPath(name)+"/"+action, nil, nil); err != nil {
			c.fail(w, r, nil, err)
			return
		}
		c.connectDone(w, r, name, action+" requested")
	}
}

func (c *Console) connectRestart(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	tasks, failed := r.FormValue("includeTasks") != "", r.FormValue("onlyFailed") != ""
	path := fmt.Sprintf("%s/restart?includeTasks=%t&onlyFailed=%t", connectPath(name), tasks, failed)
	if err := c.connectCall(r, http.MethodPost, path, nil, nil); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	what := "connector restart requested"
	switch {
	case tasks && failed:
		what = "restart of the connector and its failed tasks requested"
	case tasks:
		what = "restart of the connector and all its tasks requested"
	case failed:
		what = "restart requested (only if the connector failed)"
	}
	c.connectDone(w, r, name, what)
}

func (c *Console) connectRestartTask(w http.ResponseWriter, r *http.Request) {
	name, task := r.PathValue("name"), r.PathValue("task")
	if n, err := strconv.Atoi(task); err != nil || n < 0 {
		c.fail(w, r, nil, badRequest("task %q is not a task number", task))
		return
	}
	if err := c.connectCall(r, http.MethodPost, connectPath(name)+"/tasks/"+task+"/restart", nil, nil); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.connectDone(w, r, name, "restart of task "+task+" requested")
}

func (c *Console) connectDelete(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	err := sharedTypedConfirm(r, "connector", name)
	if err == nil {
		err = c.connectCall(r, http.MethodDelete, connectPath(name), nil, nil)
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/connect?done="+url.QueryEscape("connector "+name+" deleted"), http.StatusSeeOther)
}

type connectPlugin struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

type connectPluginsView struct {
	Plugins []connectPlugin
}

// connectNew is the plugin list, or with ?plugin= that plugin's form.
func (c *Console) connectNew(w http.ResponseWriter, r *http.Request) {
	if plugin := r.URL.Query().Get("plugin"); plugin != "" {
		f, err := c.connectFormFor(r, plugin, "", nil)
		if err != nil {
			c.fail(w, r, nil, err)
			return
		}
		c.renderSection(w, r, "connect_form", "connect", f)
		return
	}
	var v connectPluginsView
	if err := c.connectCall(r, http.MethodGet, "/connector-plugins", nil, &v.Plugins); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	slices.SortFunc(v.Plugins, func(a, b connectPlugin) int { return strings.Compare(a.Class, b.Class) })
	c.renderSection(w, r, "connect_plugins", "connect", v)
}
