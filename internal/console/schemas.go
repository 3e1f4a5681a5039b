package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/samsa-io/samsa/internal/linediff"
	"github.com/samsa-io/samsa/internal/task"
)

// The Schema Registry page speaks the registry's REST API through
// c.doJSON (as the session's user), so a registry's own messages (409
// incompatible, 422 invalid schema) reach the page as they are.

// schemasPageSize is how many subjects one page of the list shows; each
// costs two small registry requests (latest version, subject config).
const schemasPageSize = 50

// schemasLevels are the registry's compatibility levels.
var schemasLevels = []string{"BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE"}

// schemasTypes are the schema types a form offers.
var schemasTypes = []string{"AVRO", "JSON", "PROTOBUF"}

// routesSchemas registers the schemas page.
func (c *Console) routesSchemas(mux *http.ServeMux) {
	mux.HandleFunc("GET /schemas", c.schemasList)
	mux.HandleFunc("POST /schemas/config", c.schemasSetGlobal)
	mux.HandleFunc("GET /schemas/new", c.schemasNewForm)
	mux.HandleFunc("POST /schemas/new", c.schemasRegister)
	mux.HandleFunc("GET /schemas/{subject}", c.schemasSubject)
	mux.HandleFunc("GET /schemas/{subject}/diff", c.schemasDiff)
	mux.HandleFunc("POST /schemas/{subject}/config", c.schemasSetSubject)
	mux.HandleFunc("POST /schemas/{subject}/delete", c.schemasDeleteSubject)
	mux.HandleFunc("POST /schemas/{subject}/versions/{version}/delete", c.schemasDeleteVersion)
}

// schemasCall is a registry request; a registry that does not answer is
// a 502 naming it.
func (c *Console) schemasCall(r *http.Request, method, path string, in, out any) error {
	return c.sharedService(r, "the Schema Registry", c.cfg.RegistryURL, "no Schema Registry is configured for the console", method, path, in, out)
}

// schemasRenderStatus renders page with an error status (a form shown again
// with what was wrong).
func schemasRenderStatus(c *Console, w http.ResponseWriter, r *http.Request, status int, page, section string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	c.renderSection(discardHeader{w}, r, page, section, data)
}

// schemasHTTPStatus is an error's HTTP status from a service (0 when none).
func schemasHTTPStatus(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.Status
	}
	return 0
}

func schemasPath(subject string) string { return "/subjects/" + url.PathEscape(subject) }

// schemasEach runs fn(i) for i in [0, n) on at most 8 goroutines and
// waits for them: a page's per-subject lookups in parallel, bounded.
func schemasEach(n int, fn func(i int)) {
	g := task.NewGroup(context.Background())
	defer g.Stop()
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(n, 8) {
		wg.Add(1)
		g.Go(func(context.Context) {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// schemasVersion is one registered version, as the registry answers it.
type schemasVersion struct {
	Subject    string            `json:"subject"`
	Version    int               `json:"version"`
	ID         int               `json:"id"`
	SchemaType string            `json:"schemaType"`
	Schema     string            `json:"schema"`
	References []schemasRefEntry `json:"references"`
}

type schemasRefEntry struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Type is the schema's type; the registry leaves AVRO out.
func (v schemasVersion) Type() string {
	if v.SchemaType == "" {
		return "AVRO"
	}
	return v.SchemaType
}

// Pretty is the schema text for reading: Avro and JSON schemas
// indented, Protobuf as written.
func (v schemasVersion) Pretty() string { return schemasPretty(v.Type(), v.Schema) }

func schemasPretty(typ, text string) string {
	if typ == "PROTOBUF" {
		return text
	}
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(text), "", "  ") != nil {
		return text
	}
	return buf.String()
}

type schemasRow struct {
	Subject string
	Latest  schemasVersion
	Level   string // the subject's own level; "" when it follows the global one
	Err     string
}

type schemasListView struct {
	Query  string
	Rows   []schemasRow
	Pager  sharedPager
	Global string
	Levels []string
	Done   string
}

func (c *Console) schemasGlobal(r *http.Request) (string, error) {
	var cfg struct {
		Level string `json:"compatibilityLevel"`
	}
	err := c.schemasCall(r, http.MethodGet, "/config", nil, &cfg)
	return cfg.Level, err
}

// schemasLevel is a subject's own level, "" when it has none.
func (c *Console) schemasLevel(r *http.Request, subject string) (string, error) {
	var cfg struct {
		Level string `json:"compatibilityLevel"`
	}
	err := c.schemasCall(r, http.MethodGet, "/config/"+url.PathEscape(subject), nil, &cfg)
	if schemasHTTPStatus(err) == http.StatusNotFound {
		return "", nil
	}
	return cfg.Level, err
}

func (c *Console) schemasList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := schemasListView{Query: strings.TrimSpace(q.Get("q")), Levels: schemasLevels, Done: q.Get("done")}
	var err error
	if v.Global, err = c.schemasGlobal(r); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	var subjects, page []string
	if err := c.schemasCall(r, http.MethodGet, "/subjects", nil, &subjects); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	v.Pager, page = sharedSearchPage(r.URL, subjects, v.Query, schemasPageSize)
	v.Rows = make([]schemasRow, len(page))
	schemasEach(len(page), func(i int) {
		row := schemasRow{Subject: page[i]}
		err := c.schemasCall(r, http.MethodGet, schemasPath(page[i])+"/versions/latest", nil, &row.Latest)
		if err == nil {
			row.Level, err = c.schemasLevel(r, page[i])
		}
		if err != nil {
			row.Err = err.Error()
		}
		v.Rows[i] = row
	})
	c.render(w, r, "schemas", v)
}

func (c *Console) schemasSetGlobal(w http.ResponseWriter, r *http.Request) {
	level := r.FormValue("compatibility")
	if !slices.Contains(schemasLevels, level) {
		c.fail(w, r, nil, badRequest("compatibility %q is not one of %s", level, strings.Join(schemasLevels, ", ")))
		return
	}
	if err := c.schemasCall(r, http.MethodPut, "/config", map[string]string{"compatibility": level}, nil); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/schemas?done="+url.QueryEscape("global compatibility set to "+level), http.StatusSeeOther)
}

type schemasSubjectView struct {
	Subject  string
	Versions []int
	Latest   schemasVersion
	Level    string // the subject's own level, "" when none
	Global   string
	Levels   []string
	Done     string
	Previous int // the version before the latest, 0 when none
}

func (c *Console) schemasSubject(w http.ResponseWriter, r *http.Request) {
	subject := r.PathValue("subject")
	v := schemasSubjectView{Subject: subject, Levels: schemasLevels, Done: r.URL.Query().Get("done")}
	if err := c.schemasCall(r, http.MethodGet, schemasPath(subject)+"/versions", nil, &v.Versions); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if err := c.schemasCall(r, http.MethodGet, schemasPath(subject)+"/versions/latest", nil, &v.Latest); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	var err error
	if v.Level, err = c.schemasLevel(r, subject); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if v.Global, err = c.schemasGlobal(r); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	slices.Sort(v.Versions)
	if n := len(v.Versions); n > 1 {
		v.Previous = v.Versions[n-2]
	}
	c.render(w, r, "schemas_subject", v)
}

func (c *Console) schemasSetSubject(w http.ResponseWriter, r *http.Request) {
	subject := r.PathValue("subject")
	level := r.FormValue("compatibility")
	var err error
	switch {
	case level == "":
		// The empty choice drops the override: the global level applies.
		err = c.schemasCall(r, http.MethodDelete, "/config/"+url.PathEscape(subject), nil, nil)
		if schemasHTTPStatus(err) == http.StatusNotFound {
			err = nil // no override to drop
		}
		level = "the global level"
	case slices.Contains(schemasLevels, level):
		err = c.schemasCall(r, http.MethodPut, "/config/"+url.PathEscape(subject), map[string]string{"compatibility": level}, nil)
	default:
		err = badRequest("compatibility %q is not one of %s", level, strings.Join(schemasLevels, ", "))
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/schemas/"+url.PathEscape(subject)+"?done="+url.QueryEscape("compatibility set to "+level), http.StatusSeeOther)
}

func (c *Console) schemasDeleteSubject(w http.ResponseWriter, r *http.Request) {
	subject := r.PathValue("subject")
	err := sharedTypedConfirm(r, "subject", subject)
	if err == nil {
		err = c.schemasCall(r, http.MethodDelete, schemasPath(subject), nil, nil)
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/schemas?done="+url.QueryEscape("subject "+subject+" deleted (soft)"), http.StatusSeeOther)
}

func (c *Console) schemasDeleteVersion(w http.ResponseWriter, r *http.Request) {
	subject, version := r.PathValue("subject"), r.PathValue("version")
	if _, err := strconv.Atoi(version); err != nil {
		c.fail(w, r, nil, badRequest("version %q is not a number", version))
		return
	}
	if r.FormValue("confirm") != "yes" {
		c.fail(w, r, nil, badRequest("tick the confirmation box to delete version %s of %s", version, subject))
		return
	}
	if err := c.schemasCall(r, http.MethodDelete, schemasPath(subject)+"/versions/"+version, nil, nil); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	// The subject may be gone with its last version.
	var versions []int
	if c.schemasCall(r, http.MethodGet, schemasPath(subject)+"/versions", nil, &versions) != nil || len(versions) == 0 {
		http.Redirect(w, r, "/schemas?done="+url.QueryEscape("version "+version+" of "+subject+" deleted"), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/schemas/"+url.PathEscape(subject)+"?done="+url.QueryEscape("version "+version+" deleted"), http.StatusSeeOther)
}

type schemasDiffView struct {
	Subject  string
	Versions []int
	From, To schemasVersion
	Lines    []linediff.Line
	Added    int
	Removed  int
}

func (c *Console) schemasDiff(w http.ResponseWriter, r *http.Request) {
	subject := r.PathValue("subject")
	v := schemasDiffView{Subject: subject}
	if err := c.schemasCall(r, http.MethodGet, schemasPath(subject)+"/versions", nil, &v.Versions); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	slices.Sort(v.Versions)
	from, to := r.URL.Query().Get("from"), r.URL.Query().Get("to")
	if len(v.Versions) > 0 {
		if to == "" {
			to = strconv.Itoa(v.Versions[len(v.Versions)-1])
		}
		if from == "" {
			from = strconv.Itoa(v.Versions[max(0, len(v.Versions)-2)])
		}
	}
	for _, p := range []struct {
		name, val string
		into      *schemasVersion
	}{{"from", from, &v.From}, {"to", to, &v.To}} {
		if _, err := strconv.Atoi(p.val); err != nil {
			c.fail(w, r, nil, badRequest("%s=%q is not a version number", p.name, p.val))
			return
		}
		if err := c.schemasCall(r, http.MethodGet, schemasPath(subject)+"/versions/"+p.val, nil, p.into); err != nil {
			c.fail(w, r, nil, err)
			return
		}
	}
	v.Lines = linediff.Diff(strings.Split(v.From.Pretty(), "\n"), strings.Split(v.To.Pretty(), "\n"))
	for _, l := range v.Lines {
		switch l.Op {
		case '+':
			v.Added++
		case '-':
			v.Removed++
		}
	}
	c.renderSection(w, r, "schemas_diff", "schemas", v)
}

type schemasNewView struct {
	Subject, Type, Schema, References string
	Check                             bool
	Types                             []string
	Error                             string
	Messages                          []string
}

func (c *Console) schemasNewForm(w http.ResponseWriter, r *http.Request) {
	v := schemasNewView{Subject: r.URL.Query().Get("subject"), Type: "AVRO", Check: true, Types: schemasTypes}
	if v.Subject != "" {
		// A new version of a subject starts from its latest schema.
		var latest schemasVersion
		if c.schemasCall(r, http.MethodGet, schemasPath(v.Subject)+"/versions/latest", nil, &latest) == nil {
			v.Type, v.Schema = latest.Type(), latest.Pretty()
			for _, ref := range latest.References {
				v.References += fmt.Sprintf("%s %s %d\n", ref.Name, ref.Subject, ref.Version)
			}
		}
	}
	c.renderSection(w, r, "schemas_new", "schemas", v)
}

// schemasParseRefs reads references, one "name subject version" a line.
func schemasParseRefs(text string) ([]schemasRefEntry, error) {
	var refs []schemasRefEntry
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("reference line %d: want \"name subject version\", got %q", i+1, strings.TrimSpace(line))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("reference line %d: version %q is not a number", i+1, f[2])
		}
		refs = append(refs, schemasRefEntry{Name: f[0], Subject: f[1], Version: n})
	}
	return refs, nil
}

func (c *Console) schemasRegister(w http.ResponseWriter, r *http.Request) {
	v := schemasNewView{Subject: strings.TrimSpace(r.FormValue("subject")), Type: r.FormValue("type"),
		Schema: r.FormValue("schema"), References: r.FormValue("references"), Check: r.FormValue("check") != "", Types: schemasTypes}
	refuse := func(status int, msg string, messages []string) {
		v.Error, v.Messages = msg, messages
		schemasRenderStatus(c, w, r, status, "schemas_new", "schemas", v)
	}
	refs, err := schemasParseRefs(v.References)
	switch {
	case v.Subject == "":
		refuse(http.StatusBadRequest, "the subject is required", nil)
		return
	case !slices.Contains(schemasTypes, v.Type):
		refuse(http.StatusBadRequest, fmt.Sprintf("type %q is not one of %s", v.Type, strings.Join(schemasTypes, ", ")), nil)
		return
	case strings.TrimSpace(v.Schema) == "":
		refuse(http.StatusBadRequest, "the schema is required", nil)
		return
	case err != nil:
		refuse(http.StatusBadRequest, err.Error(), nil)
		return
	}
	body := map[string]any{"schema": v.Schema}
	if v.Type != "AVRO" {
		body["schemaType"] = v.Type
	}
	if len(refs) > 0 {
		body["references"] = refs
	}
	if v.Check {
		var res struct {
			IsCompatible bool     `json:"is_compatible"`
			Messages     []string `json:"messages"`
		}
		err := c.schemasCall(r, http.MethodPost, "/compatibility"+schemasPath(v.Subject)+"/versions/latest?verbose=true", body, &res)
		switch {
		case schemasHTTPStatus(err) == http.StatusNotFound:
			// A new subject: nothing to be compatible with.
		case err != nil:
			c.schemasRefuseErr(refuse, err)
			return
		case !res.IsCompatible:
			refuse(http.StatusConflict, "the schema is not compatible with the subject's latest version; nothing was registered", res.Messages)
			return
		}
	}
	var out struct {
		ID int `json:"id"`
	}
	if err := c.schemasCall(r, http.MethodPost, schemasPath(v.Subject)+"/versions", body, &out); err != nil {
		c.schemasRefuseErr(refuse, err)
		return
	}
	http.Redirect(w, r, "/schemas/"+url.PathEscape(v.Subject)+"?done="+url.QueryEscape(fmt.Sprintf("schema registered (id %d)", out.ID)), http.StatusSeeOther)
}

// schemasRefuseErr shows a registry's refusal on the form: its status
// (409 incompatible, 422 invalid) and message; a registry down is 502.
func (c *Console) schemasRefuseErr(refuse func(int, string, []string), err error) {
	var he *httpError
	var se *statusError
	switch {
	case errors.As(err, &he):
		refuse(he.Status, "the registry refused the schema: "+he.Message, nil)
	case errors.As(err, &se):
		refuse(se.status, se.Error(), nil)
	default:
		refuse(http.StatusBadGateway, err.Error(), nil)
	}
}

func init() {
	registerFuncs(map[string]any{
		"schemasPath": func(s string) string { return "/schemas/" + url.PathEscape(s) },
	})
}
