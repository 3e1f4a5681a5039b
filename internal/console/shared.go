package console

import (
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// What every page's lists share: the pager (a ?page= number, its bounds,
// the links to the neighbouring pages; templates/_shared.html draws it as
// "shared-pager"), the search filter and the way node IDs are written.

func init() {
	registerFuncs(template.FuncMap{"sharedIDs": sharedIDs})
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
func sharedIDs(ids []int32) string {
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
