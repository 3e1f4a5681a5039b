package console

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// topicsNameRE is Kafka's legal topic name (Topic.java): ASCII
// letters, digits, '.', '_' and '-', at most 249 characters.
var topicsNameRE = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// topicsCheckName refuses a name Kafka would refuse, before asking it.
func topicsCheckName(name string) error {
	switch {
	case name == "":
		return badRequest("a topic needs a name")
	case name == "." || name == "..":
		return badRequest("%q cannot be a topic's name", name)
	case !topicsNameRE.MatchString(name):
		return badRequest("topic name %q: only ASCII letters, digits, '.', '_' and '-' are allowed, at most 249 of them", name)
	}
	return nil
}

// topicsCreateView is the create form with the user's input.
type topicsCreateView struct {
	Name, Partitions, Replication, Configs, Retention, Cleanup string
	Error                                                      *topicsFormError
}

// topicsNewForm is GET /topics/new.
func (c *Console) topicsNewForm(w http.ResponseWriter, r *http.Request) {
	c.renderSection(w, r, "topics_new", "topics", topicsCreateView{})
}

// topicsParseConfigs reads key=value lines (blank lines and # comments
// skipped) into a config map; a line without '=' or a key given twice
// is a 400.
func topicsParseConfigs(text string, into map[string]*string) error {
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return badRequest("config line %d %q is not key=value", i+1, line)
		}
		if _, dup := into[k]; dup {
			return badRequest("config %q is given twice", k)
		}
		into[k] = &v
	}
	return nil
}

// topicsIntField parses an optional whole-number field: empty is -1
// (the broker's default); otherwise at least 1 and at most limit.
func topicsIntField(label, s string, limit int) (int, error) {
	if s == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > limit {
		return 0, badRequest("%s %q must be a whole number from 1 to %d (or empty for the broker's default)", label, s, limit)
	}
	return n, nil
}

// topicsCreate is POST /topics: CreateTopics with the form's name,
// partitions, replication factor and configs. A mistake shows the form
// again with its input and the error (400; the cluster's refusal by
// its Kafka name).
func (c *Console) topicsCreate(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	v := topicsCreateView{
		Name: strings.TrimSpace(r.PostFormValue("name")), Partitions: strings.TrimSpace(r.PostFormValue("partitions")),
		Replication: strings.TrimSpace(r.PostFormValue("replication")), Configs: r.PostFormValue("configs"),
		Retention: strings.TrimSpace(r.PostFormValue("retention_ms")), Cleanup: r.PostFormValue("cleanup_policy"),
	}
	err := func() error {
		if err := topicsCheckName(v.Name); err != nil {
			return err
		}
		parts, err := topicsIntField("partitions", v.Partitions, 1<<20)
		if err != nil {
			return err
		}
		rf, err := topicsIntField("replication factor", v.Replication, 1<<15-1)
		if err != nil {
			return err
		}
		configs := map[string]*string{}
		if err := topicsParseConfigs(v.Configs, configs); err != nil {
			return err
		}
		for k, val := range map[string]string{"retention.ms": v.Retention, "cleanup.policy": v.Cleanup} {
			if val == "" {
				continue
			}
			if _, dup := configs[k]; dup {
				return badRequest("config %q is given both in its field and in the config lines", k)
			}
			configs[k] = &val
		}
		resp, err := c.admin(r).CreateTopic(ctx, int32(parts), int16(rf), configs, v.Name)
		if err != nil {
			return err
		}
		return topicsKafkaErr(resp.Err, resp.ErrMessage)
	}()
	if err != nil {
		st, fe := topicsErrStatus(err)
		if st == http.StatusNotFound {
			st = http.StatusBadRequest
		}
		v.Error = &fe
		c.renderSection(&topicsStatusWriter{ResponseWriter: w, status: st}, r, "topics_new", "topics", v)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/topics/%s?done=created", url.PathEscape(v.Name)), http.StatusSeeOther)
}
