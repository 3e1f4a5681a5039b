package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// topicsConfirmView is a confirmation form: the topic's name must be
// typed again before the action runs.
type topicsConfirmView struct {
	Name, Path string
	Count      int // partitions, for delete-records
	Mode       string
	Partition  string
	Offset     string
	Confirm    string
	Error      *topicsFormError
}

// topicsDeleteForm is GET /topics/{name}/delete: the confirmation step.
func (c *Console) topicsDeleteForm(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	name := r.PathValue("name")
	if _, err := c.topicsDescribe(ctx, r, name); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.renderSection(w, r, "topics_delete", "topics", topicsConfirmView{Name: name, Path: "/topics/" + url.PathEscape(name)})
}

// topicsDelete is POST /topics/{name}/delete: DeleteTopics, only when
// the confirmation field holds the topic's name.
func (c *Console) topicsDelete(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	name := r.PathValue("name")
	v := topicsConfirmView{Name: name, Path: "/topics/" + url.PathEscape(name), Confirm: r.PostFormValue("confirm")}
	err := func() error {
		if v.Confirm != name {
			return badRequest("type the topic's name, %q, to confirm its deletion", name)
		}
		resp, err := c.admin(r).DeleteTopic(ctx, name)
		if err != nil {
			return err
		}
		return topicsKafkaErr(resp.Err, resp.ErrMessage)
	}()
	if err != nil {
		st, fe := topicsErrStatus(err)
		if st == http.StatusForbidden || st == http.StatusNotFound {
			c.fail(w, r, nil, fmt.Errorf("deleting topic %q: %w", name, err))
			return
		}
		v.Error = &fe
		c.renderSection(&topicsStatusWriter{ResponseWriter: w, status: st}, r, "topics_delete", "topics", v)
		return
	}
	c.client(r).PurgeTopicsFromClient(name)
	http.Redirect(w, r, "/topics?done=deleted", http.StatusSeeOther)
}

// topicsDeleteRecordsForm is GET /topics/{name}/delete-records.
func (c *Console) topicsDeleteRecordsForm(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	name := r.PathValue("name")
	t, err := c.topicsDescribe(ctx, r, name)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	v := topicsConfirmView{Name: name, Path: "/topics/" + url.PathEscape(name), Count: len(t.Partitions), Mode: "partition",
		Partition: r.URL.Query().Get("partition")}
	c.renderSection(w, r, "topics_records", "topics", v)
}

// topicsDeleteRecords is POST /topics/{name}/delete-records:
// DeleteRecords before an offset of one partition (mode "partition"),
// or up to the high watermark of every partition (mode "all", offset
// -1 as Kafka defines it), once the topic's name is typed to confirm.
// It then shows the topic, whose table holds the new start offsets.
func (c *Console) topicsDeleteRecords(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	name := r.PathValue("name")
	v := topicsConfirmView{Name: name, Path: "/topics/" + url.PathEscape(name), Mode: r.PostFormValue("mode"),
		Partition: strings.TrimSpace(r.PostFormValue("partition")), Offset: strings.TrimSpace(r.PostFormValue("offset")),
		Confirm: r.PostFormValue("confirm")}
	err := func() error {
		t, err := c.topicsDescribe(ctx, r, name)
		if err != nil {
			return err
		}
		v.Count = len(t.Partitions)
		os := kadm.Offsets{}
		switch v.Mode {
		case "partition":
			p, err := strconv.ParseInt(v.Partition, 10, 32)
			if err != nil || p < 0 || int(p) >= len(t.Partitions) {
				return badRequest("partition %q is not one of the topic's (0 to %d)", v.Partition, len(t.Partitions)-1)
			}
			off, err := strconv.ParseInt(v.Offset, 10, 64)
			if err != nil || off < 0 {
				return badRequest("offset %q is not a whole number of at least 0", v.Offset)
			}
			os.Add(kadm.Offset{Topic: name, Partition: int32(p), At: off, LeaderEpoch: -1})
		case "all":
			for _, p := range t.Partitions {
				os.Add(kadm.Offset{Topic: name, Partition: p.Partition, At: -1, LeaderEpoch: -1}) // -1: up to the high watermark
			}
		default:
			return badRequest("choose what to delete: one partition's records before an offset, or all records")
		}
		if v.Confirm != name {
			return badRequest("type the topic's name, %q, to confirm deleting its records", name)
		}
		resp, err := c.admin(r).DeleteRecords(ctx, os)
		if err != nil {
			return err
		}
		for _, ps := range resp {
			for _, p := range ps {
				if p.Err != nil {
					return fmt.Errorf("partition %d: %w", p.Partition, p.Err)
				}
			}
		}
		return nil
	}()
	if err != nil {
		st, fe := topicsErrStatus(err)
		if st == http.StatusForbidden || st == http.StatusNotFound {
			c.fail(w, r, nil, err)
			return
		}
		v.Error = &fe
		c.renderSection(&topicsStatusWriter{ResponseWriter: w, status: st}, r, "topics_records", "topics", v)
		return
	}
	http.Redirect(w, r, "/topics/"+url.PathEscape(name)+"?done=records", http.StatusSeeOther)
}
