package conformance

import (
	"bytes"
	"context"
	"testing"
	"time"

	refserver "github.com/lobbybench/lobbybench/reference-server"
	refudp "github.com/lobbybench/lobbybench/reference-server/udp"
)

// startRefUDP starts the reference UDP lobby on a free loopback port.
func startRefUDP(t *testing.T, edit func(*refudp.Config)) *refudp.Server {
	t.Helper()
	cfg := refudp.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.BasePort = 0
	cfg.CountdownInterval = 100 * time.Millisecond
	if edit != nil {
		edit(&cfg)
	}
	s, err := refudp.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestReferenceUDP(t *testing.T) {
	srv := startRefUDP(t, nil)
	cfg := Config{Target: srv.Addr().String(), Protocol: ProtoUDP, Header: HeaderAuto}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteText(&b, rep, TextOptions{Verbose: true})
	t.Log("\n" + b.String())
	logDurations(t, rep)
}

func logDurations(t *testing.T, r *Report) {
	for _, x := range r.Results {
		t.Logf("%-10s %-5v %v", x.Case.ID, x.Verdict, x.Duration.Round(time.Millisecond))
	}
}

// startRef starts the whole reference server (UDP lobby, instances, TCP
// lobby handing over to them) on free loopback ports with short countdowns.
func startRef(t *testing.T) *refserver.Server {
	t.Helper()
	cfg := refserver.Loopback()
	cfg.UDP.CountdownInterval = 50 * time.Millisecond
	cfg.TCP.CountdownInterval = 50 * time.Millisecond
	s, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestReferenceTCP(t *testing.T) {
	srv := startRef(t)
	rep, err := Run(context.Background(), Config{Target: srv.TCPAddr().String(), Protocol: ProtoTCP})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteText(&b, rep, TextOptions{Verbose: true})
	t.Log("\n" + b.String())
	logDurations(t, rep)
}
