package toyecho_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/protocols/toyecho"
	"github.com/lobbybench/lobbybench/scenario"
)

// sayScenario plays the toy's own step kind, say, against the embedded
// server.
const sayScenario = `protocol: toy-echo
load: {clients: 2, duration: 1s}
flows:
  - steps:
      - say: {text: hello there, label: greet}
      - echo
`

// TestSayLoads: say is the toy's own kind, its text parsed by the toy's
// parser; a bad text is an error at its line, an unknown parameter gets
// the loader's "did you mean", and another protocol does not take say.
func TestSayLoads(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       string // the step's Params printed, or the error
	}{
		{"text", sayScenario, "{Text:hello there}"},
		{"shorthand", strings.Replace(sayScenario, "{text: hello there, label: greet}", "hi", 1), "{Text:hi}"},
		{"empty text", strings.Replace(sayScenario, "hello there", `""`, 1), `t.yaml:5: flows[0]: say text: 0 bytes, want 1-512`},
		{"too long", strings.Replace(sayScenario, "hello there", strings.Repeat("x", 513), 1), `t.yaml:5: flows[0]: say text: 513 bytes, want 1-512`},
		{"no text", strings.Replace(sayScenario, "{text: hello there, label: greet}", "{label: greet}", 1), `t.yaml:5: flows[0]: say: missing "text"`},
		{"misspelt", strings.Replace(sayScenario, "text:", "txt:", 1), `t.yaml:5: unknown key "txt" in the say step of flows[0] (did you mean "text"?)`},
		{"not udp-lobby's", strings.NewReplacer("toy-echo", "udp-lobby", "      - echo\n", "").Replace(sayScenario), `t.yaml:5: flows[0]: step "say" is not a udp-lobby step`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := scenario.Parse("t.yaml", []byte(tc.yaml))
			got := ""
			if err != nil {
				got = err.Error()
			} else if st := p.Flows[0].Steps[0]; st.Kind != toyecho.Say {
				got = "kind " + string(st.Kind)
			} else if sp, ok := st.Params.(toyecho.SayParams); ok {
				got = "{Text:" + sp.Text + "}"
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSayDescribed: describe shows the say step's text and policy.
func TestSayDescribed(t *testing.T) {
	p, err := scenario.Parse("t.yaml", []byte(sayScenario))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	p.Describe(&b)
	if want := `greet  text "hello there", timeout 5s, 3 retries`; !strings.Contains(b.String(), want) {
		t.Errorf("describe lacks %q:\n%s", want, b.String())
	}
}

// TestSayRun: the toy's client plays say against the toy's embedded
// server part, every say answered.
func TestSayRun(t *testing.T) {
	plan, err := scenario.Parse("say.yaml", []byte(sayScenario))
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Config{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := res.Step("greet")
	if !ok || st.Successes < 1 || st.Failures != 0 {
		t.Fatalf("say step %+v", st)
	}
}

// TestSaySendsText: a say request carries the step's text, not the
// scenario's echo_payload (a server of the test's own, which records what
// it is sent, answers it).
func TestSaySendsText(t *testing.T) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	got := make(chan string, 64)
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if n >= 6 && string(buf[:4]) == "TOYQ" {
				select {
				case got <- string(buf[6:n]):
				default:
				}
				copy(buf, "TOYA")
				c.WriteToUDPAddrPort(buf[:n], from)
			}
		}
	}()
	yml := "target: " + c.LocalAddr().String() + "\n" +
		strings.Replace(sayScenario, "load: {clients: 2, duration: 1s}", "load: {clients: 1, duration: 300ms}", 1)
	plan, err := scenario.Parse("say.yaml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Config{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := res.Step("greet"); !ok || st.Successes < 1 || st.Failures != 0 {
		t.Fatalf("say step %+v", st)
	}
	seen := map[string]bool{}
	for len(got) > 0 {
		seen[<-got] = true
	}
	if !seen["hello there"] || !seen["toy"] {
		t.Errorf("the server was sent %v, want the say's text and echo's payload", seen)
	}
}

// FuzzSay: any text given to say either loads as that text, 1-512 bytes,
// or is an error at the step's line; never a panic.
func FuzzSay(f *testing.F) {
	for _, s := range []string{"hi", "", strings.Repeat("x", 513), "{a: b}", "[1, 2]", "'", "null"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		yml := "protocol: toy-echo\nload: {clients: 1, duration: 1s}\nflows:\n  - steps:\n      - say: " + text + "\n"
		p, err := scenario.Parse("f.yaml", []byte(yml))
		if err != nil {
			return
		}
		sp, ok := p.Flows[0].Steps[0].Params.(toyecho.SayParams)
		if !ok || len(sp.Text) == 0 || len(sp.Text) > 512 {
			t.Fatalf("say %q loaded as %+v", text, p.Flows[0].Steps[0].Params)
		}
	})
}
