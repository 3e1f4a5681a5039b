package broker

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The Grafana dashboard (docs/grafana/samsa.json) and the metrics page it
// is built from (docs/METRICS.md).
var (
	dashboardPath   = filepath.Join("..", "..", "docs", "grafana", "samsa.json")
	metricsDocPath  = filepath.Join("..", "..", "docs", "METRICS.md")
	samsaMetricName = regexp.MustCompile(`samsa_[a-z0-9_]+`)
	// documentedRow is a row of METRICS.md's tables: its first cell the
	// metric's name.
	documentedRow = regexp.MustCompile("(?m)^\\| `(samsa_[a-z0-9_]+)` \\|")
)

// dashboardQuery is one PromQL query of the dashboard: a panel's target or
// a template variable's.
type dashboardQuery struct {
	where, expr string
}

// dashboardQueries reads every query of the dashboard, in its panels (rows'
// panels included) and its template variables.
func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string  `json:"title"`
		Type    string  `json:"type"`
		Panels  []panel `json:"panels"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	}
	var d struct {
		SchemaVersion int     `json:"schemaVersion"`
		Panels        []panel `json:"panels"`
		Templating    struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	if d.SchemaVersion < 39 {
		t.Errorf("schemaVersion %d, want 39 or later", d.SchemaVersion)
	}
	var out []dashboardQuery
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				out = append(out, dashboardQuery{where: "panel " + p.Title, expr: tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		expr, _ := q["query"].(string)
		out = append(out, dashboardQuery{where: "variable " + v.Name, expr: expr})
	}
	return out
}

// documentedMetrics are the metrics METRICS.md lists in its tables.
func documentedMetrics(t *testing.T) (documented map[string]bool) {
	t.Helper()
	raw, err := os.ReadFile(metricsDocPath)
	if err != nil {
		t.Fatal(err)
	}
	documented = map[string]bool{}
	for _, m := range documentedRow.FindAllSubmatch(raw, -1) {
		documented[string(m[1])] = true
	}
	return documented
}

// Every samsa_ metric the dashboard queries is one METRICS.md documents
// (a histogram by its _bucket, _sum and _count series too), so the
// dashboard cannot show a metric that does not exist.
func TestDashboardMetricsAreDocumented(t *testing.T) {
	documented := documentedMetrics(t)
	if len(documented) < 50 {
		t.Fatalf("only %d metrics found in %s's tables", len(documented), metricsDocPath)
	}
	used := map[string]bool{}
	for _, q := range dashboardQueries(t) {
		for _, name := range samsaMetricName.FindAllString(q.expr, -1) {
			base := name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, suffix); ok && documented[b] {
					base = b
				}
			}
			used[base] = true
			if !documented[base] {
				t.Errorf("%s queries %s, which %s does not document", q.where, name, metricsDocPath)
			}
		}
	}
	var missing []string
	for name := range documented {
		if !used[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	t.Logf("documented metrics no panel shows: %v", missing)
}

// The dashboard's queries are valid PromQL: promtool checks them as the
// expressions of recording rules, Grafana's variables replaced by values.
// Skipped where promtool is not installed.
func TestDashboardQueriesParse(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("SAMSA_REQUIRE_PROMETHEUS") != "" {
			t.Fatal("promtool is not installed (apt-get install prometheus) and SAMSA_REQUIRE_PROMETHEUS is set")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$__range", "1h", "$instance", ".*", "$topic", ".*", "$group", ".*")
	var rules strings.Builder
	rules.WriteString("groups:\n- name: dashboard\n  rules:\n")
	queries := dashboardQueries(t)
	for i, q := range queries {
		e := q.expr
		if inner, ok := strings.CutPrefix(e, "label_values("); ok {
			// Grafana's label_values(selector, label): the selector.
			e = inner[:strings.LastIndexByte(inner, ',')]
		}
		expr, err := json.Marshal(vars.Replace(e)) // a JSON string is a YAML string
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&rules, "  - record: dashboard:query%d\n    expr: %s\n", i, expr)
	}
	path := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules on the dashboard's %d queries: %v\n%s", len(queries), err, out)
	}
}
