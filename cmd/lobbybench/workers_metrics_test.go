package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestRunWorkersMetrics: `run --workers 2 --metrics-addr` serves the
// merge of its workers' metrics, and the scrape taken once the run is
// over (--serve-linger) agrees exactly with the merged JSON result:
// the run's counters, each step's requests and latency count, and the
// whole-run HDR percentiles (merged histograms, not averaged quantiles).
// Both workers show as exited.
func TestRunWorkersMetrics(t *testing.T) {
	t.Parallel()
	sc := writeScenario(t, strings.Replace(workersRun, "DURATION", "800ms", 1))
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	cmd := lobbybenchCmd(t, nil, "run", "--quiet", "--workers", "2", "--metrics-addr", "127.0.0.1:0", "--serve-linger", "1m", "--json", jsonPath, sc)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer kill.Stop()
	// The linger's line says the results are written and where the
	// final metrics are.
	const mark = "serving the final metrics at http://"
	var url string
	var errs strings.Builder
	sc2 := bufio.NewScanner(stderr)
	for sc2.Scan() {
		line := sc2.Text()
		errs.WriteString(line + "\n")
		if _, rest, ok := strings.Cut(line, mark); ok {
			url = "http://" + strings.Fields(rest)[0]
			break
		}
	}
	if url == "" {
		cmd.Wait()
		t.Fatalf("no linger line; stderr:\n%s", errs.String())
	}
	fams := scrape(t, url)
	cmd.Process.Signal(syscall.SIGINT) // ends the linger
	// The rest of stderr too: under -race, a data race in the run is
	// reported there (and exits 66).
	rest := make(chan string)
	go func() { b, _ := io.ReadAll(stderr); rest <- string(b) }()
	tail := <-rest
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v; stderr:\n%s%s", err, errs.String(), tail)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc workersDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Shards != 2 || doc.Engine.MetricsAddr == "" || doc.Totals.Requests == 0 {
		t.Fatalf("merged result: %d shards, metrics at %q, %d requests", doc.Shards, doc.Engine.MetricsAddr, doc.Totals.Requests)
	}
	tot := doc.Totals
	want := map[string]float64{
		"lobbybench_requests_total":                           float64(tot.Successes + tot.Failures), // completed: not the cut
		"lobbybench_failures_total":                           float64(tot.Failures),
		"lobbybench_retries_total":                            float64(tot.Retries),
		"lobbybench_violations_total":                         float64(tot.Violations),
		"lobbybench_sessions_started_total":                   float64(tot.SessionsStarted),
		"lobbybench_sessions_finished_total":                  float64(tot.SessionsFinished),
		"lobbybench_data_sent_bytes_total":                    float64(tot.DataSent),
		`lobbybench_worker_state{shard="0/2",state="exited"}`: 1,
		`lobbybench_worker_state{shard="1/2",state="exited"}`: 1,
		`lobbybench_worker_state{shard="1/2",state="died"}`:   0,
	}
	for _, s := range doc.Steps {
		l := fmt.Sprintf(`{step=%q}`, s.Name)
		want["lobbybench_step_requests_total"+l] = float64(s.Successes + s.Failures)
		want["lobbybench_step_latency_seconds_count"+l] = float64(s.Latency.Count)
		want["lobbybench_step_latency_run_seconds_count"+l] = float64(s.Latency.Count)
		want[fmt.Sprintf(`lobbybench_step_latency_run_seconds{quantile="0.99",step=%q}`, s.Name)] = float64(s.Latency.P99US) / 1e6
		want[fmt.Sprintf(`lobbybench_step_latency_run_seconds{quantile="0.5",step=%q}`, s.Name)] = float64(s.Latency.P50US) / 1e6
	}
	for name, w := range want {
		got, ok := fams[name]
		if !ok {
			t.Errorf("%s: not in the scrape", name)
		} else if got != w {
			t.Errorf("%s = %v in the scrape, %v in the merged JSON", name, got, w)
		}
	}
}

// scrape GETs url and returns every sample by its name and labels
// (sorted, as Prometheus prints them; histogram and summary parts by
// their _count and quantile).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			labels := func(extra ...string) string {
				var ls []string
				for _, l := range m.Label {
					ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
				}
				ls = append(ls, extra...)
				if len(ls) == 0 {
					return ""
				}
				slices.Sort(ls)
				return "{" + strings.Join(ls, ",") + "}"
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[name+labels()] = m.Counter.GetValue()
			case dto.MetricType_GAUGE:
				out[name+labels()] = m.Gauge.GetValue()
			case dto.MetricType_HISTOGRAM:
				out[name+"_count"+labels()] = float64(m.Histogram.GetSampleCount())
			case dto.MetricType_SUMMARY:
				out[name+"_count"+labels()] = float64(m.Summary.GetSampleCount())
				for _, q := range m.Summary.Quantile {
					out[name+labels(fmt.Sprintf("quantile=%q", model.FloatString(q.GetQuantile())))] = q.GetValue()
				}
			}
		}
	}
	return out
}
