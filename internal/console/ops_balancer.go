package console

import (
	"context"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/balance"
	"github.com/samsa-io/samsa/internal/model"
)

// opsBalancer is what a Samsa broker's GET /v1/balancer answers (its
// controller's balancer status), in the shape the controller reports it
// (balance.Status, a leaf type the clients share).
type opsBalancer struct {
	balance.Status
}

// opsBalancerNode is one admin URL's answer: its node and role, or why
// it could not be read.
type opsBalancerNode struct {
	URL    string
	NodeID int32
	Active bool
	Err    string
}

// opsBalanceRow is a broker's load now and after the planned moves.
type opsBalanceRow struct {
	Now   balance.BrokerLoad
	After *balance.BrokerLoad
}

// Rows pairs each broker's load with its load after the plan.
func (b *opsBalancer) Rows() []opsBalanceRow {
	after := map[model.NodeID]*balance.BrokerLoad{}
	for i := range b.After {
		after[b.After[i].Broker] = &b.After[i]
	}
	rows := make([]opsBalanceRow, len(b.Brokers))
	for i, l := range b.Brokers {
		rows[i] = opsBalanceRow{Now: l, After: after[l.Broker]}
	}
	return rows
}

// opsAdminTimeout bounds one read of the admin URLs.
const opsAdminTimeout = 5 * time.Second

// opsBalancer asks every admin URL at once for GET /v1/balancer: only
// the active controller's answer is complete, so it is the one shown;
// the others say which node they are, or why they failed.
func (c *Console) opsBalancer(r *http.Request) (*opsBalancer, []opsBalancerNode) {
	nodes := make([]opsBalancerNode, len(c.cfg.AdminURLs))
	states := make([]*opsBalancer, len(c.cfg.AdminURLs))
	// A URL that never answers must not hold the page for the whole
	// request timeout: the balancer's JSON is small and local.
	ctx, cancel := context.WithTimeout(r.Context(), opsAdminTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	var wg sync.WaitGroup
	for i, u := range c.cfg.AdminURLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i] = opsBalancerNode{URL: u, NodeID: -1}
			var st opsBalancer
			if err := c.doJSON(r, http.MethodGet, strings.TrimSuffix(u, "/"), "/v1/balancer", nil, &st); err != nil {
				nodes[i].Err = err.Error()
				return
			}
			nodes[i].NodeID, nodes[i].Active = int32(st.NodeID), st.Active
			states[i] = &st
		}()
	}
	wg.Wait()
	for _, st := range states {
		if st != nil && st.Active {
			return st, nodes
		}
	}
	return nil, nodes
}

func init() {
	registerFuncs(template.FuncMap{
		// opsIDs is sharedIDs, with "-" for none: an empty column of a
		// move (kadm's reassignments carry []int32, the balancer's moves
		// []model.NodeID).
		"opsIDs": func(ids any) string {
			switch v := ids.(type) {
			case []int32:
				if len(v) > 0 {
					return sharedIDs(v)
				}
			case []model.NodeID:
				if len(v) > 0 {
					return sharedIDs(v)
				}
			}
			return "-"
		},
		// opsWhen is an RFC 3339 time of the balancer as a time and how
		// long ago; "never" when empty.
		"opsWhen": func(s string) string {
			if s == "" {
				return "never"
			}
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return s
			}
			return t.UTC().Format("2006-01-02 15:04:05Z") + " (" + ago(t) + ")"
		},
		// opsStateClass is a balancer state's badge: the word is on it too.
		"opsStateClass": func(state string) string {
			switch state {
			case "balanced":
				return "ok"
			case "blocked":
				return "bad"
			case "moving", "standby":
				return "warn"
			}
			return ""
		},
	})
}
