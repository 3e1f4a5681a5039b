package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicsConfigRow is one config of a topic as DescribeConfigs reports
// it, with the value the form shows (the user's input when the form
// comes back with an error).
type topicsConfigRow struct {
	Name, Value, Source, Doc, Type string
	Input                          string // what the edit field holds
	Sensitive, ReadOnly, Default   bool
	Reset                          bool // the user ticked "revert to default"
}

type topicsConfigsView struct {
	Name   string
	Path   string
	Tabs   []topicsTab
	Rows   []topicsConfigRow
	Extra  string
	Notice string
	Error  *topicsFormError
	NoDocs bool // the cluster answered no documentation (DescribeConfigs before v3)
}

// topicsSourceName names where a config's value comes from.
func topicsSourceName(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceDefaultConfig:
		return "default"
	case kmsg.ConfigSourceDynamicTopicConfig:
		return "dynamic topic"
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return "dynamic broker"
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return "dynamic cluster default"
	case kmsg.ConfigSourceStaticBrokerConfig:
		return "static broker"
	}
	return strings.ToLower(s.String())
}

// topicsDescribeConfigs is one DescribeConfigs (v3+ asks for Kafka's
// documentation of each config, which Samsa and Apache Kafka both
// answer) for a topic, sorted by name.
func (c *Console) topicsDescribeConfigs(ctx context.Context, r *http.Request, name string) ([]topicsConfigRow, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeDocumentation = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, name
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, c.client(r))
	if err != nil {
		return nil, err
	}
	if len(resp.Resources) != 1 {
		return nil, fmt.Errorf("DescribeConfigs answered %d resources for one topic", len(resp.Resources))
	}
	res := resp.Resources[0]
	if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
		if err == kerr.UnknownTopicOrPartition {
			return nil, statusErr(http.StatusNotFound, fmt.Errorf("topic %q does not exist (deleted, or never created)", name))
		}
		return nil, fmt.Errorf("topic %q: %w", name, topicsKafkaErr(err, topicsDeref(res.ErrorMessage)))
	}
	rows := make([]topicsConfigRow, 0, len(res.Configs))
	for _, cf := range res.Configs {
		row := topicsConfigRow{Name: cf.Name, Value: topicsDeref(cf.Value), Source: topicsSourceName(cf.Source), Doc: topicsDeref(cf.Documentation),
			Sensitive: cf.IsSensitive, ReadOnly: cf.ReadOnly, Default: cf.Source == kmsg.ConfigSourceDefaultConfig,
			Type: topicsConfigType(cf.ConfigType)}
		if cf.IsSensitive {
			row.Value = ""
		}
		row.Input = row.Value
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, nil
}

func topicsConfigType(t kmsg.ConfigType) string {
	if t == kmsg.ConfigTypeUnknown {
		return ""
	}
	return strings.ToLower(t.String())
}

func topicsDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// topicsConfigs is GET /topics/{name}/configs.
func (c *Console) topicsConfigs(w http.ResponseWriter, r *http.Request) {
	c.topicsConfigsWith(w, r, http.StatusOK, nil, nil)
}

// topicsConfigsWith renders the configs page; after a failed save it
// keeps the user's input (form) and shows the error with status.
func (c *Console) topicsConfigsWith(w http.ResponseWriter, r *http.Request, status int, fe *topicsFormError, form url.Values) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	name := r.PathValue("name")
	rows, err := c.topicsDescribeConfigs(ctx, r, name)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	v := topicsConfigsView{Name: name, Path: "/topics/" + url.PathEscape(name), Tabs: topicsTabs(name, "Configs"), Rows: rows,
		Notice: topicsNotices[r.URL.Query().Get("done")], Error: fe, NoDocs: true}
	reset := map[string]bool{}
	for _, k := range form["reset"] {
		reset[k] = true
	}
	for i := range v.Rows {
		if v.Rows[i].Doc != "" {
			v.NoDocs = false
		}
		if form != nil {
			if in, ok := form["set."+v.Rows[i].Name]; ok && len(in) > 0 && !v.Rows[i].Sensitive {
				v.Rows[i].Input = in[0]
			}
			v.Rows[i].Reset = reset[v.Rows[i].Name]
		}
	}
	if form != nil {
		v.Extra = form.Get("extra")
	}
	c.renderSection(&topicsStatusWriter{ResponseWriter: w, status: status}, r, "topics_configs", "topics", v)
}

// topicsAlterConfigs is POST /topics/{name}/configs: one
// IncrementalAlterConfigs with a SET for each field the user changed
// (a sensitive one only when typed in), a SET for each key=value line
// of "extra", and a DELETE (back to the default) for each ticked
// "reset". The changes are found against a fresh DescribeConfigs, so a
// field left as it was never writes a default into the topic.
func (c *Console) topicsAlterConfigs(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	name := r.PathValue("name")
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, nil, badRequest("the form could not be read: %v", err))
		return
	}
	form := r.PostForm
	fail := func(err error) {
		st, fe := topicsErrStatus(err)
		if st == http.StatusNotFound || st == http.StatusForbidden {
			c.fail(w, r, nil, err)
			return
		}
		c.topicsConfigsWith(w, r, st, &fe, form)
	}
	rows, err := c.topicsDescribeConfigs(ctx, r, name)
	if err != nil {
		fail(err)
		return
	}
	current := map[string]topicsConfigRow{}
	for _, row := range rows {
		current[row.Name] = row
	}
	var alters []kadm.AlterConfig
	reset := map[string]bool{}
	for _, k := range form["reset"] {
		if _, ok := current[k]; !ok {
			fail(badRequest("cannot revert %q: the topic has no such config", k))
			return
		}
		reset[k] = true
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	for key, vals := range form {
		k, ok := strings.CutPrefix(key, "set.")
		if !ok || len(vals) == 0 || reset[k] {
			continue
		}
		val := strings.TrimSpace(vals[0])
		cur, known := current[k]
		switch {
		case !known:
			fail(badRequest("%q is not one of this topic's configs; add a new one in the key=value lines", k))
			return
		case cur.ReadOnly && val != cur.Value:
			fail(badRequest("%q is read-only", k))
			return
		case cur.Sensitive && val == "", !cur.Sensitive && val == cur.Value:
			continue
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &val})
	}
	extra := map[string]*string{}
	if err := topicsParseConfigs(form.Get("extra"), extra); err != nil {
		fail(err)
		return
	}
	for k, v := range extra {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: v})
	}
	back := "/topics/" + url.PathEscape(name) + "/configs"
	if len(alters) == 0 {
		http.Redirect(w, r, back+"?done=unchanged", http.StatusSeeOther)
		return
	}
	sort.Slice(alters, func(i, j int) bool { return alters[i].Name < alters[j].Name })
	resp, err := c.admin(r).AlterTopicConfigs(ctx, alters, name)
	if err == nil {
		var one kadm.AlterConfigsResponse
		if one, err = resp.On(name, nil); err == nil {
			err = topicsKafkaErr(one.Err, one.ErrMessage)
		}
	}
	if err != nil {
		fail(err)
		return
	}
	http.Redirect(w, r, back+"?done=configs", http.StatusSeeOther)
}
