package result

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry shared by the recorder and the merger. Values are
// microseconds; values above HighestUS are clamped to it by the recorder.
const (
	LowestUS  = 1
	HighestUS = 300_000_000 // 300 s
	SigFigs   = 3
	// SecondSigFigs is the precision of per-second time-series histograms,
	// kept lower since there is one per second of run.
	SecondSigFigs = 2
)

// NewLatencyHistogram returns an empty histogram with the geometry of
// Latency.Hist.
func NewLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestUS, HighestUS, SigFigs)
}

// NewSecondHistogram returns an empty histogram with the geometry of
// Point.Hist.
func NewSecondHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestUS, HighestUS, SecondSigFigs)
}

// encodeHist returns the base64 V2 compressed encoding, or "" when empty.
func encodeHist(h *hdrhistogram.Histogram) (string, error) {
	if h == nil || h.TotalCount() == 0 {
		return "", nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("reports: encode histogram: %w", err)
	}
	return string(b), nil
}

// decodeHist decodes s, returning empty (built by mk) when s is "".
func decodeHist(s string, mk func() *hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return mk(), nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("reports: decode histogram: %w", err)
	}
	return h, nil
}

// NewLatency summarises h into a Latency, encoding it for later merges.
func NewLatency(h *hdrhistogram.Histogram) (Latency, error) {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}, nil
	}
	enc, err := encodeHist(h)
	if err != nil {
		return Latency{}, err
	}
	p := h.ValueAtPercentiles([]float64{50, 90, 99, 99.9})
	return Latency{
		Count:  h.TotalCount(),
		MinUS:  h.Min(),
		MeanUS: h.Mean(),
		P50US:  p[50],
		P90US:  p[90],
		P99US:  p[99],
		P999US: p[99.9],
		MaxUS:  h.Max(),
		Hist:   enc,
	}, nil
}

// Histogram decodes l.Hist; an empty Latency gives an empty histogram.
func (l Latency) Histogram() (*hdrhistogram.Histogram, error) {
	h, err := decodeHist(l.Hist, NewLatencyHistogram)
	if err != nil {
		return nil, err
	}
	if h.TotalCount() != l.Count {
		return nil, fmt.Errorf("reports: histogram holds %d values, count says %d", h.TotalCount(), l.Count)
	}
	return h, nil
}

// NewPoint builds a time-series point from its counters and histogram.
func NewPoint(second, requests, errors int64, h *hdrhistogram.Histogram) (Point, error) {
	p := Point{Second: second, Requests: requests, Errors: errors}
	if h != nil && h.TotalCount() > 0 {
		enc, err := encodeHist(h)
		if err != nil {
			return Point{}, err
		}
		p.Hist = enc
		p.P50US = h.ValueAtPercentile(50)
		p.P99US = h.ValueAtPercentile(99)
	}
	return p, nil
}

// Histogram decodes p.Hist; an empty point gives an empty histogram.
func (p Point) Histogram() (*hdrhistogram.Histogram, error) {
	return decodeHist(p.Hist, NewSecondHistogram)
}
