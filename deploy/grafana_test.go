package deploy

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestGrafanaDashboard: the dashboard is valid JSON that Grafana imports
// (a Prometheus data source input its panels use), and every panel has
// one query, which make e2e-prometheus checks: the e2e reads the queries
// from this file and keeps a check per panel title.
func TestGrafanaDashboard(t *testing.T) {
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Inputs []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			PluginID string `json:"pluginId"`
		} `json:"__inputs"`
		Panels []struct {
			ID         int    `json:"id"`
			Title      string `json:"title"`
			Type       string `json:"type"`
			Datasource struct {
				Type string `json:"type"`
				UID  string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(readFile(t, "grafana/lobbybench.json")), &d); err != nil {
		t.Fatalf("grafana/lobbybench.json: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Inputs) != 1 || d.Inputs[0].PluginID != "prometheus" || len(d.Panels) == 0 {
		t.Fatalf("dashboard: title %q uid %q inputs %+v, %d panels", d.Title, d.UID, d.Inputs, len(d.Panels))
	}
	script := readFile(t, "e2e/prometheus.sh")
	checks := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^    "([^"]+)": \w+,$`).FindAllStringSubmatch(script, -1) {
		checks[m[1]] = true
	}
	if !strings.Contains(script, `json.load(open(dash))["panels"]`) || !strings.Contains(script, "DASHBOARD=$root/deploy/grafana/lobbybench.json") {
		t.Error("e2e/prometheus.sh does not read its queries from deploy/grafana/lobbybench.json")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Datasource.Type != "prometheus" || p.Datasource.UID != "${"+d.Inputs[0].Name+"}" {
			t.Errorf("panel %q: data source %+v, want the imported Prometheus", p.Title, p.Datasource)
		}
		if len(p.Targets) != 1 || !strings.Contains(p.Targets[0].Expr, "lobbybench_") {
			t.Errorf("panel %q: %d queries, want one over lobbybench_ metrics", p.Title, len(p.Targets))
		}
		if !checks[p.Title] {
			t.Errorf("panel %q: make e2e-prometheus has no check for it (its CHECKS table)", p.Title)
		}
	}
	if len(checks) != len(d.Panels) {
		t.Errorf("the e2e checks %d panels, the dashboard has %d", len(checks), len(d.Panels))
	}
}
