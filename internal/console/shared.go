package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// What several pages share: the pager (a ?page= number, its bounds, the
// links to the neighbouring pages; templates/_shared.html draws it as
// "shared-pager"), the search filter, the way node IDs are written, the
// body of a confirmation form ("shared-confirm") and the calls to the
// HTTP services (Connect, the Schema Registry).

func init() {
	registerFuncs(template.FuncMap{"sharedIDs": sharedIDs[int32]})
}

// sharedPager is one page of a list: its number, the count of pages,
// the rows it shows (From to To of Total) and the links to the
// neighbours (empty at the ends).
type sharedPager struct {
	Page, Pages, From, To, Total int
	Prev, Next                   string
	// Label names the pager's navigation for screen readers.
	Label string
	// Summary, when set, replaces "Page N of M" between the links.
	Summary string
}

// sharedPaginate cuts total rows into pages of size rows; page is
// brought within 1..Pages, and link makes a page's URL.
func sharedPaginate(total, size, page int, link func(int) string) sharedPager {
	pages := max(1, (total+size-1)/size)
	page = min(max(page, 1), pages)
	p := sharedPager{Page: page, Pages: pages, Total: total, From: (page - 1) * size, To: min(page*size, total)}
	if page > 1 {
		p.Prev = link(page - 1)
	}
	if page < pages {
		p.Next = link(page + 1)
	}
	return p
}

// sharedPageParam reads a ?page= number: 1 when absent. A page that is
// not a number from 1 is the user's mistake (a 400 for the pages that
// refuse it; the others show page 1, which is what this answers then).
func sharedPageParam(s string) (int, error) {
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 1, badRequest("page %q is not a page number (1, 2, ...)", s)
	}
	return n, nil
}

// sharedPageLink makes a page's URL from the request's: the same path
// and parameters (the filters stay on), less the one-shot done notice.
func sharedPageLink(u *url.URL) func(int) string {
	return func(p int) string {
		q := u.Query()
		q.Set("page", strconv.Itoa(p))
		q.Del("done")
		return u.Path + "?" + q.Encode()
	}
}

// sharedMatches reports whether name contains the search query, case
// folded: every list's search box filters so. No query matches all.
func sharedMatches(name, query string) bool {
	return query == "" || strings.Contains(strings.ToLower(name), strings.ToLower(query))
}

// sharedFilter keeps the names that match the search query.
func sharedFilter(names []string, query string) []string {
	return slices.DeleteFunc(names, func(s string) bool { return !sharedMatches(s, query) })
}

// sharedIDs writes node IDs as "1, 2, 3" ("none" for no node).
func sharedIDs[ID ~int32](ids []ID) string {
	if len(ids) == 0 {
		return "none"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ", ")
}

// Labelled is the pager with its navigation named label, so a template
// names it where it draws it: {{template "shared-pager" .Pager.Labelled "ACL pages"}}.
func (p sharedPager) Labelled(label string) sharedPager {
	p.Label = label
	return p
}

// sharedRequestPage is the page of total rows that the request's ?page=
// asks for (page 1 when that is not a page number), its links keeping
// the request's other parameters.
func sharedRequestPage(u *url.URL, total, size int) sharedPager {
	page, _ := sharedPageParam(u.Query().Get("page"))
	return sharedPaginate(total, size, page, sharedPageLink(u))
}

// sharedConfirm is the body of a confirmation form: a deletion posted
// without confirm=yes answers a page whose form posts the same fields
// again with it. The page's template draws the <form> (its action, id
// and CSRF token) around {{template "shared-confirm" .}}.
type sharedConfirm struct {
	Question string
	// Fields are the form's name and value pairs, posted again.
	Fields [][2]string
	// Yes is the confirming button's text; Back the link that gives up,
	// BackLabel its text.
	Yes, Back, BackLabel string
}

// sharedTypedConfirm checks the confirmation of a deletion that asks
// for the name typed again (the form's confirm field): a 400 saying so
// when it is not the name.
func sharedTypedConfirm(r *http.Request, what, name string) error {
	if r.FormValue("confirm") != name {
		return badRequest("type the %s's name (%s) to confirm its deletion", what, name)
	}
	return nil
}

// sharedFormFields are the posted values of the named fields, in order,
// for a confirmation form to post again.
func sharedFormFields(r *http.Request, names ...string) [][2]string {
	var fields [][2]string
	for _, k := range names {
		for _, val := range r.PostForm[k] {
			fields = append(fields, [2]string{k, val})
		}
	}
	return fields
}

// sharedService is c.doJSON to an HTTP service the console may be given
// (Connect, the Schema Registry): a 404 saying missing when it is not
// configured, a clear 502 when it cannot be reached (a refused
// connection, a timeout), so the page says which service is down
// instead of a bare transport error.
func (c *Console) sharedService(r *http.Request, service, base, missing, method, path string, in, out any) error {
	if base == "" {
		return statusErr(http.StatusNotFound, errors.New(missing))
	}
	err := c.doJSON(r, method, base, path, in, out)
	var he *httpError
	var se *statusError
	if err == nil || errors.As(err, &he) || errors.As(err, &se) {
		return err
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return statusErr(http.StatusBadGateway, fmt.Errorf("%s at %s answered %s %s with unexpected JSON: %w", service, base, method, path, err))
	}
	return statusErr(http.StatusBadGateway, fmt.Errorf("%s at %s cannot be reached: %w", service, base, err))
}

// sharedSearchPage sorts names, keeps those matching the search query
// and answers the request's page of them.
func sharedSearchPage(u *url.URL, names []string, query string, size int) (sharedPager, []string) {
	slices.Sort(names)
	names = sharedFilter(names, query)
	p := sharedRequestPage(u, len(names), size)
	return p, names[p.From:p.To]
}
