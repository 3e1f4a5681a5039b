package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The connector form: generated from the plugin's config definitions
// (GET /connector-plugins/{plugin}/config), checked by the worker's
// validation (PUT .../config/validate) before anything is created or
// changed, so its per-field errors land next to their inputs.

// connectHiddenValue stands for a secret the edit form does not show;
// submitted as it is, the connector keeps its current value.
const connectHiddenValue = "(hidden)"

type connectField struct {
	Def    connectDef
	Value  string
	Set    bool // a secret with a value the form does not show
	Errors []string
}

// Input is the field's input kind: bool, password, number, decimal,
// list or text.
func (f connectField) Input() string {
	switch f.Def.Type {
	case "BOOLEAN":
		return "bool"
	case "PASSWORD":
		return "password"
	case "INT", "SHORT", "LONG":
		return "number"
	case "DOUBLE":
		return "decimal"
	case "LIST":
		return "list"
	}
	return "text"
}

// Default is the definition's default for a placeholder.
func (f connectField) Default() string {
	if f.Def.Default == nil {
		return ""
	}
	return *f.Def.Default
}

type connectFormGroup struct {
	Name   string
	Fields []connectField
}

type connectFormView struct {
	Plugin   string
	Edit     bool // editing the connector Name
	Name     string
	TasksMax string
	Groups   []connectFormGroup
	Other    string   // more settings, key=value a line
	Error    string   // why the form came back
	Errors   []string // the worker's errors for settings without an input
}

// connectFormFor is the form for plugin, filled with current (an
// existing connector's config, or nil for a new one).
func (c *Console) connectFormFor(r *http.Request, plugin, name string, current map[string]string) (*connectFormView, error) {
	defs, err := c.connectPluginDefs(r, plugin)
	if err != nil {
		return nil, err
	}
	f := &connectFormView{Plugin: plugin, Edit: current != nil, Name: name, TasksMax: current["tasks.max"]}
	byName := connectDefsByName(defs)
	at := map[string]int{}
	for _, d := range defs {
		g := "Settings"
		if d.Group != nil && *d.Group != "" {
			g = *d.Group
		}
		i, ok := at[g]
		if !ok {
			i = len(f.Groups)
			at[g] = i
			f.Groups = append(f.Groups, connectFormGroup{Name: g})
		}
		field := connectField{Def: d, Value: current[d.Name]}
		if connectSensitive(d.Name, byName) && field.Value != "" {
			field.Value, field.Set = "", true
		}
		f.Groups[i].Fields = append(f.Groups[i].Fields, field)
	}
	var other []string
	for k, v := range current {
		if _, ok := byName[k]; ok || k == "name" || k == "connector.class" || k == "tasks.max" {
			continue
		}
		if connectSensitive(k, byName) {
			v = connectHiddenValue
		}
		other = append(other, k+"="+v)
	}
	slices.Sort(other)
	f.Other = strings.Join(other, "\n")
	return f, nil
}

// connectReadForm reads the submitted form into f (keeping what the
// user typed) and answers the connector config it asks for; current is
// the connector's config when editing, whose secrets a blank (or
// "(hidden)") value keeps.
func connectReadForm(r *http.Request, f *connectFormView, current map[string]string) (map[string]string, error) {
	cfg := map[string]string{"connector.class": f.Plugin}
	if !f.Edit {
		f.Name = strings.TrimSpace(r.PostFormValue("name"))
	}
	if f.Name == "" {
		return nil, errors.New("the connector's name is required")
	}
	cfg["name"] = f.Name
	if f.TasksMax = strings.TrimSpace(r.PostFormValue("tasks.max")); f.TasksMax != "" {
		cfg["tasks.max"] = f.TasksMax
	}
	for gi := range f.Groups {
		for fi := range f.Groups[gi].Fields {
			field := &f.Groups[gi].Fields[fi]
			val := r.PostFormValue("cfg." + field.Def.Name)
			if field.Input() != "password" {
				val = strings.TrimSpace(val)
			}
			field.Value = val
			switch {
			case val != "":
				cfg[field.Def.Name] = val
				field.Set = false
			case field.Set && current[field.Def.Name] != "":
				cfg[field.Def.Name] = current[field.Def.Name] // a secret left blank stays
			}
			if field.Input() == "password" {
				field.Value = "" // never sent back to the browser
				field.Set = cfg[field.Def.Name] != ""
			}
		}
	}
	f.Other = r.PostFormValue("other")
	for i, line := range strings.Split(f.Other, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("more settings, line %d: want key=value, got %q", i+1, line)
		}
		if _, dup := cfg[k]; dup {
			return nil, fmt.Errorf("more settings, line %d: %s is set twice (it has its own input above)", i+1, k)
		}
		v = strings.TrimSpace(v)
		if v == connectHiddenValue {
			old, ok := current[k]
			if !ok {
				return nil, fmt.Errorf("more settings, line %d: %s has no value to keep; type its value", i+1, k)
			}
			v = old
		}
		cfg[k] = v
	}
	return cfg, nil
}

// connectValidate asks the worker to validate cfg and puts its errors
// on f's fields; it answers whether any setting was refused.
func (c *Console) connectValidate(r *http.Request, f *connectFormView, cfg map[string]string) (bool, error) {
	var res struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	if err := c.connectCall(r, http.MethodPut, "/connector-plugins/"+url.PathEscape(f.Plugin)+"/config/validate", cfg, &res); err != nil {
		return false, err
	}
	if res.ErrorCount == 0 {
		return false, nil
	}
	errs := map[string][]string{}
	for _, ci := range res.Configs {
		if len(ci.Value.Errors) > 0 {
			errs[ci.Value.Name] = append(errs[ci.Value.Name], ci.Value.Errors...)
		}
	}
	for gi := range f.Groups {
		for fi := range f.Groups[gi].Fields {
			field := &f.Groups[gi].Fields[fi]
			field.Errors = errs[field.Def.Name]
			delete(errs, field.Def.Name)
		}
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range errs {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, e := range errs[k] {
			f.Errors = append(f.Errors, k+": "+e)
		}
	}
	return true, nil
}

// connectSubmit reads, validates and applies a form: create (current
// nil) or a config change; it answers false after writing the form
// again with what was wrong.
func (c *Console) connectSubmit(w http.ResponseWriter, r *http.Request, f *connectFormView, current map[string]string) bool {
	again := func(status int, msg string) bool {
		f.Error = msg
		schemasRenderStatus(c, w, r, status, "connect_form", "connect", f)
		return false
	}
	cfg, err := connectReadForm(r, f, current)
	if err != nil {
		return again(http.StatusBadRequest, err.Error())
	}
	refused, err := c.connectValidate(r, f, cfg)
	if err != nil {
		return again(connectErrStatus(err), "Connect could not validate the config: "+err.Error())
	}
	if refused {
		return again(http.StatusBadRequest, "Connect refused the config; nothing was changed. See the errors below.")
	}
	if current == nil {
		err = c.connectCall(r, http.MethodPost, "/connectors", map[string]any{"name": f.Name, "config": cfg}, nil)
	} else {
		err = c.connectCall(r, http.MethodPut, connectPath(f.Name)+"/config", cfg, nil)
	}
	if err != nil {
		return again(connectErrStatus(err), "Connect refused: "+err.Error())
	}
	return true
}

// connectErrStatus is the status a form answers for a worker's error:
// its own 4xx, 502 otherwise.
func connectErrStatus(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	if s := schemasHTTPStatus(err); s >= 400 && s < 500 {
		return s
	}
	return http.StatusBadGateway
}

func (c *Console) connectCreate(w http.ResponseWriter, r *http.Request) {
	plugin := r.PostFormValue("plugin")
	if plugin == "" {
		c.fail(w, r, nil, badRequest("pick a connector plugin first"))
		return
	}
	f, err := c.connectFormFor(r, plugin, "", nil)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if c.connectSubmit(w, r, f, nil) {
		c.connectDone(w, r, f.Name, "connector created")
	}
}

// connectCurrent is a connector's config.
func (c *Console) connectCurrent(r *http.Request, name string) (map[string]string, error) {
	var cfg map[string]string
	err := c.connectCall(r, http.MethodGet, connectPath(name)+"/config", nil, &cfg)
	if err == nil && cfg["connector.class"] == "" {
		err = statusErr(http.StatusBadGateway, fmt.Errorf("connector %s has no connector.class", name))
	}
	return cfg, err
}

func (c *Console) connectEditForm(w http.ResponseWriter, r *http.Request) {
	if _, _, f, ok := c.connectEditing(w, r); ok {
		c.renderSection(w, r, "connect_form", "connect", f)
	}
}

func (c *Console) connectEdit(w http.ResponseWriter, r *http.Request) {
	name, current, f, ok := c.connectEditing(w, r)
	if ok && c.connectSubmit(w, r, f, current) {
		c.connectDone(w, r, name, "config updated")
	}
}

// connectEditing reads the connector the path names, its config and the
// form for its plugin; false when it has answered with the error.
func (c *Console) connectEditing(w http.ResponseWriter, r *http.Request) (string, map[string]string, *connectFormView, bool) {
	name := r.PathValue("name")
	current, err := c.connectCurrent(r, name)
	if err != nil {
		c.fail(w, r, nil, err)
		return "", nil, nil, false
	}
	f, err := c.connectFormFor(r, current["connector.class"], name, current)
	if err != nil {
		c.fail(w, r, nil, err)
		return "", nil, nil, false
	}
	return name, current, f, true
}

func init() {
	registerFuncs(map[string]any{
		"connectPath": func(name string) string { return "/connect/" + url.PathEscape(name) },
	})
}
