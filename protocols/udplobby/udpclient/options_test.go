package udpclient

import (
	"flag"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/scenario"
)

// TestOptions: header_profile and instance_ports become the plan's UDP
// lobby options (header spec by default), a run against the embedded
// server drops the target's instance ports, and --instance-ports replaces
// the key's range.
func TestOptions(t *testing.T) {
	const body = "load: {clients: 1, duration: 1s}\nflows: [{steps: [list_rooms]}]\n"
	tests := []struct {
		name, keys string
		flag       string // --instance-ports
		want       string // Describe
		embedded   string // Embedded().Describe()
		err        string
	}{
		{"defaults", "", "", ", header spec", ", header spec", ""},
		{"both keys", "header_profile: auto\ninstance_ports: 9000-9009\n", "", ", header auto, instance ports 9000-9009", ", header auto", ""},
		{"flag replaces the key", "instance_ports: 9000-9009\n", "7000-7001", ", header spec, instance ports 7000-7001", ", header spec", ""},
		{"bad flag", "", "7001-7000", "", "", "--instance-ports: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := scenario.Parse("t.yaml", []byte("protocol: udp-lobby\n"+tc.keys+body))
			if err != nil {
				t.Fatal(err)
			}
			fs := flag.NewFlagSet("run", flag.ContinueOnError)
			pf := scenario.AddProtocolFlags(fs)
			var args []string
			if tc.flag != "" {
				args = []string{"--instance-ports", tc.flag}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			err = p.Apply(scenario.Overrides{Protocol: pf})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Apply = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Options.Describe(); got != tc.want {
				t.Errorf("Describe = %q, want %q", got, tc.want)
			}
			if got := p.Options.Embedded().Describe(); got != tc.embedded {
				t.Errorf("Embedded().Describe = %q, want %q", got, tc.embedded)
			}
			if o := OptionsOf(p); o.HeaderProfile == "" {
				t.Errorf("OptionsOf = %+v", o)
			}
		})
	}
}
