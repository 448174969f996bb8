package scenario

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"10s", 10 * time.Second, ""},
		{"250ms", 250 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"0", 0, ""}, // zero needs no unit
		{"0s", 0, ""},
		{"10", 0, "has no unit"}, // ambiguous bare number
		{"-1s", 0, "negative"},
		{"soon", 0, "invalid duration"},
		{"", 0, "empty"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseDuration(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"500/s", 500, ""},
		{"500/1s", 500, ""},
		{"30/m", 0.5, ""},     // per minute
		{"10/100ms", 100, ""}, // per 100ms
		{"2.5/s", 2.5, ""},
		{"0/s", 0, ""},
		{"3600/h", 1, ""},
		{"500", 0, "no period"},
		{"-1/s", 0, "negative"},
		{"x/s", 0, "not a number"},
		{"5/0s", 0, "not a positive duration"},
		{"5/fortnight", 0, "not a positive duration"},
		{"NaN/s", 0, "not a number"},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRate(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"4MiB", 4 << 20, ""},
		{"256KiB", 256 << 10, ""},
		{"1GiB", 1 << 30, ""},
		{"1MB", 1_000_000, ""}, // decimal
		{"2KB", 2000, ""},
		{"4M", 4 << 20, ""}, // bare M is binary
		{"65536", 65536, ""},
		{"100B", 100, ""},
		{"1.5KiB", 1536, ""},
		{"1.5B", 0, "whole number"},
		{"-1KiB", 0, "negative"},
		{"4MB/s", 0, "invalid size"},
		{"lots", 0, "invalid size"},
		{"9999GiB", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSize(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParsePercent(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"1%", 0.01, ""},
		{"0.5%", 0.005, ""},
		{"100%", 1, ""},
		{"0", 0, ""},
		{"0%", 0, ""},
		{"1", 0, "no % sign"},
		{"101%", 0, "outside"},
		{"-1%", 0, "outside"},
		{"x%", 0, "invalid percentage"},
	}
	for _, tt := range tests {
		got, err := ParsePercent(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePercent(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
