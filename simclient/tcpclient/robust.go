package tcpclient

import (
	"context"

	"github.com/lobbybench/lobbybench/scenario"
)

func (s *session) malformed(ctx context.Context, i int, st *scenario.Step) error { return nil }
func (s *session) rateProbe(ctx context.Context, i int, st *scenario.Step) error { return nil }
